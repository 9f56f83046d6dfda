// Configuration errors and warnings. Validation collects all of them rather than stopping at the
// first, so one `portico validate` run shows everything that needs fixing.
import type { Pos } from './raw.js';

export interface Diagnostic {
  readonly severity: 'error' | 'warning';
  readonly pos: Pos;
  /** The property path in the model, `hosts[2].locations[0].proxyTo`; empty for file-level problems. */
  readonly path: string;
  readonly message: string;
}

export class Diagnostics {
  readonly list: Diagnostic[] = [];

  error(pos: Pos, path: string, message: string): void {
    this.list.push({ severity: 'error', pos, path, message });
  }

  warn(pos: Pos, path: string, message: string): void {
    this.list.push({ severity: 'warning', pos, path, message });
  }

  get hasErrors(): boolean {
    return this.list.some((d) => d.severity === 'error');
  }

  get errors(): Diagnostic[] {
    return this.list.filter((d) => d.severity === 'error');
  }

  get warnings(): Diagnostic[] {
    return this.list.filter((d) => d.severity === 'warning');
  }
}

/** Text from a file as a message shows it: a name or value of any length stays readable. */
export function clip(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** `FILE:LINE:COL: path: message`, warnings marked as such. */
export function formatDiagnostic(d: Diagnostic): string {
  // Line 0: a place with no lines, such as an environment variable.
  const where = d.pos.line > 0 ? `${d.pos.file}:${d.pos.line}:${d.pos.col}: ` : `${d.pos.file}: `;
  const kind = d.severity === 'warning' ? 'warning: ' : '';
  return `${where}${kind}${d.path ? `${d.path}: ` : ''}${d.message}`;
}

/** Thrown where a whole configuration is refused (startup, reload); carries every diagnostic. */
export class ConfigError extends Error {
  constructor(readonly diagnostics: readonly Diagnostic[]) {
    super(`invalid configuration:\n${diagnostics.map(formatDiagnostic).join('\n')}`);
    this.name = 'ConfigError';
  }
}
