// Where each `rateLimit` entry of a configuration is written. A limit keeps one set of buckets per
// place, so a host's limit merged into each of its locations is still one bucket per key whichever
// location answers. An entry is found by itself: merging copies lists, never their entries.
import type { Settings } from '../config/properties.js';
import type { Config } from '../config/validate.js';
import type { Leases } from './resources.js';
import { withFieldDefaults, type LimitPlaces, type RateLimitEntry } from '../stages/rate-limit.js';
import type { SharedStore } from '../store/shared-store.js';

interface Place {
  /** The shared store's space of its buckets: where it is written, and what it counts. */
  readonly space: string;
  /** Its policy's name in the response fields: its scope and its index there. */
  readonly policy: string;
}

/**
 * The places of `config`'s limits, their buckets leased by `leases`: a reload that keeps a limit
 * as it was keeps its buckets, and a limit no Plan has any more is forgotten.
 */
export function limitPlaces(config: Config, store: SharedStore, leases: Leases): LimitPlaces {
  const places = new Map<RateLimitEntry, Place>();
  const add = (settings: Settings, path: string, scope: string) =>
    settings.rateLimit?.forEach((entry, i) => {
      const { requests, per, burst, key, maxKeys } = withFieldDefaults(entry);
      const counts = `${requests}/${per} burst ${burst} by ${key} up to ${maxKeys}`;
      places.set(entry, { space: `rate-limit ${path}[${i}] ${counts}`, policy: `${scope}-${i}` });
    });
  add(config.global, 'global.rateLimit', 'global');
  config.hosts.forEach((host, h) => {
    add(host.settings, `hosts[${h}].rateLimit`, 'host');
    host.locations.forEach((location, l) =>
      add(location.settings, `hosts[${h}].locations[${l}].rateLimit`, 'location'),
    );
  });
  return {
    place(limit, options) {
      const place = places.get(limit);
      if (place === undefined) throw new Error('a rateLimit entry that no scope of the file holds');
      return {
        buckets: leases.take(place.space, () => store.buckets(place.space, options)),
        policy: place.policy,
      };
    },
  };
}
