// `logFormat` is a format's name or a template whose every placeholder exists: `validate` says
// which, where, before `run` would refuse to compile the Plan.
import type { ConfigCheck } from '../config/checks.js';
import { accessFormat } from '../log/log-format.js';

export const checkLogFormats: ConfigCheck = (_config, scopes, diags) => {
  for (const scope of scopes) {
    const entry = scope.keys.get('logFormat');
    const spec = scope.settings.logFormat;
    if (entry === undefined || spec === undefined) continue;
    const format = accessFormat(spec);
    if ('problem' in format)
      diags.error(entry.value.pos, `${scope.path}.logFormat`, format.problem);
  }
};
