// The validated Config back in the YAML shape (`global`, `hosts` with `locations` and
// `errorConfig`), without source positions: what `/config` shows and what tests compare.
import type { Settings } from './properties.js';
import type { Config } from './validate.js';

export interface PlainConfig {
  global: Settings;
  hosts: Record<string, unknown>[];
}

export function configToPlain(config: Config): PlainConfig {
  return {
    global: config.global,
    hosts: config.hosts.map((h) => ({
      ...h.settings,
      ...(h.locations.length > 0
        ? {
            locations: h.locations.map((l) => ({
              ...(l.path === undefined ? {} : { path: l.path }),
              ...l.settings,
            })),
          }
        : {}),
      ...(h.errorConfigs.length > 0
        ? {
            errorConfig: h.errorConfigs.map((e) => ({
              ...(e.scode === undefined ? {} : { scode: e.scode }),
              ...e.settings,
            })),
          }
        : {}),
    })),
  };
}
