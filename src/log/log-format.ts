// `logFormat`: a named format (`combined`, `common`, `json`) or a template with `{placeholders}`
// (log-template.ts). Parsed by `validate`'s check, and again, the same way, when a Plan is compiled:
// a request only calls the line function.
import type { AccessLogEntry } from './access-entry.js';
import { formatAccessLine, formatCommonLine } from './clf-line.js';
import { formatJsonLine } from './json-line.js';
import { compileTemplate } from './log-template.js';

export interface AccessFormat {
  readonly line: (entry: AccessLogEntry) => string;
  /** The line reads the entry's optional fields (duration, upstream time, TLS, cache, host). */
  readonly extended: boolean;
}

export const COMBINED: AccessFormat = { line: formatAccessLine, extended: false };

const NAMED: Readonly<Record<string, AccessFormat>> = {
  combined: COMBINED,
  common: { line: formatCommonLine, extended: false },
  json: { line: formatJsonLine, extended: true },
};

export const FORMAT_NAMES = Object.keys(NAMED);

/** The format `spec` names or spells, or why it is none: a template is anything with a `{`. */
export function accessFormat(spec: string): AccessFormat | { readonly problem: string } {
  if (spec.includes('{')) return compileTemplate(spec);
  if (Object.hasOwn(NAMED, spec)) return NAMED[spec]!;
  return {
    problem: `unknown format ${JSON.stringify(spec)}: one of ${FORMAT_NAMES.join(', ')}, or a template with {placeholders}`,
  };
}
