// Which host a request is for: by `domain` against the Host name (exact, `*.example.com`, `*`;
// case-insensitive, port ignored) and `ip` against the local address the connection arrived on.
// The most specific host wins (CONTRACT.md, point 1): a host whose domain and ip both match beats
// one matched by either (`*` counts as no domain); then an exact name beats a wildcard (the longer suffix first), which beats
// `*`; ties go to list order. Look-ups touch a map per label of the name, never every host.
import { normalizeAddress } from '../http/ip-list.js';
import type { Site } from './site.js';

interface Candidate {
  readonly site: Site;
  readonly index: number;
  /** Normalised IP the host requires, or undefined. */
  readonly ip: string | undefined;
  readonly domainRank: number;
}

export class HostTable {
  private readonly exact = new Map<string, Candidate[]>();
  private readonly wildcard = new Map<string, Candidate[]>();
  private readonly any: Candidate[] = [];

  constructor(
    sites: readonly Site[],
    /** The global configuration, used when no host matches. */
    readonly fallback: Site,
  ) {
    sites.forEach((site, index) => {
      const { domain, ip } = site.host!.settings;
      const ips =
        ip === undefined
          ? [undefined]
          : ip === 'localhost'
            ? ['::1', '127.0.0.1']
            : [normalizeAddress(ip)];
      for (const address of ips) {
        const name = domain?.toLowerCase().replace(/\.$/, '');
        if (name === undefined || name === '*')
          this.any.push({ site, index, ip: address, domainRank: name === '*' ? 1 : 0 });
        else if (name.startsWith('*.'))
          add(this.wildcard, name.slice(2), {
            site,
            index,
            ip: address,
            domainRank: 2 + name.length / 1024,
          });
        else add(this.exact, name, { site, index, ip: address, domainRank: 1000 });
      }
    });
  }

  // The last answer: clients repeat the same name on the same address (the table never changes).
  private lastName: string | undefined;
  private lastAddress: string | undefined;
  private lastSite: Site | undefined;

  /** `hostname`: lower-case, no port; `localAddress`: normalised. */
  match(hostname: string | undefined, localAddress: string): Site {
    if (
      this.lastSite !== undefined &&
      hostname === this.lastName &&
      localAddress === this.lastAddress
    )
      return this.lastSite;
    const site = this.find(hostname, localAddress);
    this.lastName = hostname;
    this.lastAddress = localAddress;
    this.lastSite = site;
    return site;
  }

  private find(hostname: string | undefined, localAddress: string): Site {
    let best: Candidate | undefined;
    const consider = (list: readonly Candidate[] | undefined) => {
      if (list)
        for (const c of list)
          if ((c.ip === undefined || c.ip === localAddress) && better(c, best)) best = c;
    };
    if (hostname) {
      consider(this.exact.get(hostname));
      // `*.example.com` matches example.com itself and any name below it: try every suffix.
      for (let rest = hostname; this.wildcard.size > 0;) {
        consider(this.wildcard.get(rest));
        const dot = rest.indexOf('.');
        if (dot < 0) break;
        rest = rest.slice(dot + 1);
      }
    }
    consider(this.any);
    return best?.site ?? this.fallback;
  }
}

function add(map: Map<string, Candidate[]>, key: string, c: Candidate): void {
  const list = map.get(key);
  if (list) list.push(c);
  else map.set(key, [c]);
}

function better(c: Candidate, best: Candidate | undefined): boolean {
  if (!best) return true;
  // `*` names no host in particular, so it does not count as a matched selector.
  const selectors = (x: Candidate) => (x.ip !== undefined ? 1 : 0) + (x.domainRank > 1 ? 1 : 0);
  return (
    selectors(c) > selectors(best) ||
    (selectors(c) === selectors(best) &&
      (c.domainRank > best.domainRank ||
        (c.domainRank === best.domainRank && c.index < best.index)))
  );
}
