// What `/config` returns (CONTRACT.md): the configuration in the YAML shape, includes resolved,
// `{{env.…}}` interpolated, global defaults filled in, then redacted; and, when the environment
// set any, which variable set which property (`environment`).
import { withDefaults } from './defaults.js';
import { redactScope } from './redact.js';
import { configToPlain } from './shape.js';
import type { Config } from './validate.js';

export function effectiveConfig(config: Config): {
  global: Record<string, unknown>;
  hosts: Record<string, unknown>[];
  environment?: Record<string, string>;
} {
  const plain = configToPlain(config);
  const { properties } = config;
  return {
    global: redactScope(withDefaults(plain.global, properties), properties),
    hosts: plain.hosts.map((host) => redactScope(host, properties)),
    ...(config.environment
      ? { environment: Object.fromEntries(config.environment.map((o) => [o.path, o.variable])) }
      : {}),
  };
}
