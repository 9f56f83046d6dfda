// What `/config` returns (CONTRACT.md): the configuration in the YAML shape, includes resolved,
// `{{env.…}}` interpolated, global defaults filled in, then redacted.
import { withDefaults } from './defaults.js';
import { redactScope } from './redact.js';
import { configToPlain } from './shape.js';
import type { Config } from './validate.js';

export function effectiveConfig(config: Config): {
  global: Record<string, unknown>;
  hosts: Record<string, unknown>[];
} {
  const plain = configToPlain(config);
  const { properties } = config;
  return {
    global: redactScope(withDefaults(plain.global, properties), properties),
    hosts: plain.hosts.map((host) => redactScope(host, properties)),
  };
}
