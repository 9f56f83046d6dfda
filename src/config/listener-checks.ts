// The rules of the listeners as a whole: no two entries of `port` and `sport` may bind the same
// address (the second would fail at start, or take the first's connections at random), and the
// settings that apply to listeners must have one to apply to. Files are not looked at here
// (server/socket-paths-check.ts looks at the Unix sockets' folders).
import type { Diagnostics } from './diagnostics.js';
import { clash, listenAddresses, type ListenAddress } from './listen-addresses.js';
import type { Settings } from './properties.js';
import type { Pos, RawEntry } from './raw.js';
import type { ScopeRecord } from './validate.js';

interface Entry {
  readonly address: ListenAddress;
  readonly name: 'port' | 'sport';
  /** The entry's place: `port` or `port[2]`. */
  readonly path: string;
  readonly written: string;
  readonly pos: Pos;
}

/** The entries of the listeners that will be bound, with where each was written. */
export function boundEntries(g: Settings, record: ScopeRecord | undefined): Entry[] {
  const names: ('port' | 'sport')[] = [];
  if (!(g.secure === true && g.disableNonEncryptedServer === true)) names.push('port');
  if (g.secure === true) names.push('sport');
  return names.flatMap((name) => {
    const value = g[name] ?? (name === 'port' ? 80 : 443);
    const raw = record?.keys.get(name);
    const list = typeof value === 'object';
    return listenAddresses(value).flatMap((address, i) =>
      address === undefined
        ? []
        : [
            {
              address,
              name,
              path: list ? `${name}[${i}]` : name,
              written: JSON.stringify(list ? value[i] : value),
              pos: placeOf(raw, record, list ? i : undefined),
            },
          ],
    );
  });
}

function placeOf(raw: RawEntry | undefined, record: ScopeRecord | undefined, i?: number): Pos {
  if (raw === undefined) return record?.pos ?? { file: '', line: 1, col: 1 };
  if (i !== undefined && raw.value.kind === 'list') return raw.value.items[i]?.pos ?? raw.value.pos;
  return raw.value.pos;
}

export function checkListeners(
  g: Settings,
  scopes: readonly ScopeRecord[],
  diags: Diagnostics,
): void {
  const record = scopes.find((s) => s.scope === 'global');
  const entries = boundEntries(g, record);
  entries.forEach((entry, j) => {
    const first = entries.slice(0, j).find((e) => clash(e.address, entry.address));
    if (first === undefined) return;
    const at = `global.${entry.path}`;
    if (first.name !== entry.name && entry.address.kind === 'tcp')
      diags.error(entry.pos, at, `HTTP and HTTPS cannot share port ${entry.address.port}`);
    else
      diags.error(
        entry.pos,
        at,
        `${entry.written} binds an address already bound by ${first.path} (${first.written})`,
      );
  });
  const where = (name: string) => record?.keys.get(name)?.keyPos ?? record?.pos;
  // An invalid port or sport has its error already: which listeners it meant is unknown.
  const known = (['port', 'sport'] as const).every(
    (n) => !record?.keys.has(n) || g[n] !== undefined,
  );
  if (!known) return;
  const unix = entries.some((e) => e.address.kind === 'unix');
  if (g.proxyProtocol === true && g.trustedProxies === undefined && !unix)
    diags.error(
      where('proxyProtocol')!,
      'global.proxyProtocol',
      'no peer may send a PROXY header: list the load balancers that send one in the global trustedProxies (the header is read before any host is known, so a host’s trustedProxies do not count)',
    );
  if (
    g.proxyProtocol === true &&
    entries.some((e) => e.name === 'sport' && e.address.kind === 'unix')
  )
    diags.error(
      where('proxyProtocol')!,
      'global.proxyProtocol',
      'PROXY headers are not read on an HTTPS Unix socket: end TLS in front, or give sport a TCP address',
    );
  if (g.enableH2C === true && !entries.some((e) => e.name === 'port'))
    diags.warn(
      where('enableH2C')!,
      'global.enableH2C',
      'has no effect: no plain HTTP listener runs (disableNonEncryptedServer)',
    );
  if (record?.keys.has('socketMode') && !unix)
    diags.warn(
      where('socketMode')!,
      'global.socketMode',
      'has no effect: neither port nor sport names a Unix socket (unix:/path)',
    );
}
