// A compiled list of IP addresses and CIDR ranges (`blocklist`, nonStandardCodes `users`).
// Exact addresses are one Set look-up; ranges are checked only when there are any. Addresses are
// compared in normalised form, so an IPv4 entry also matches its IPv4-mapped IPv6 form.
import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

export class IpList {
  private readonly exact = new Set<string>();
  private readonly ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      if (entry === 'localhost') {
        this.exact.add('127.0.0.1').add('::1');
      } else if (entry.includes('/')) {
        this.ranges.push(range(entry));
      } else {
        this.exact.add(canonical(entry));
      }
    }
  }

  get size(): number {
    return this.exact.size + this.ranges.length;
  }

  /** `address` as Ctx holds it: already normalised. */
  has(address: string): boolean {
    if (this.exact.has(address)) return true;
    if (this.ranges.length === 0) return false;
    let parsed: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      parsed = ipaddr.process(address);
    } catch {
      return false;
    }
    for (const [range, bits] of this.ranges)
      if (parsed.kind() === range.kind() && parsed.match(range, bits)) return true;
    return false;
  }
}

/** A CIDR range; an IPv4-mapped IPv6 range (`::ffff:10.0.0.0/104`) becomes the IPv4 one. */
function range(cidr: string): [ipaddr.IPv4 | ipaddr.IPv6, number] {
  const [address, bits] = ipaddr.parseCIDR(cidr);
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && bits >= 96)
    return [address.toIPv4Address(), bits - 96];
  return [address, bits];
}

/** One spelling per address: IPv6 compressed and lower-case, IPv4-mapped as IPv4. */
export function canonical(address: string): string {
  try {
    return ipaddr.process(address).toString();
  } catch {
    return normalizeAddress(address);
  }
}

/** `::ffff:1.2.3.4` → `1.2.3.4`, lower-case IPv6. */
export function normalizeAddress(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4 ? lower.slice(7) : lower;
}
