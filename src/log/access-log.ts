// The access log: one line per request, in the Combined Log Format unless `logFormat` asks for
// another (log-format.ts), into a file that may be shared with other hosts' logs.
import type { AccessLogEntry } from './access-entry.js';
import type { LogFile } from './log-file.js';
import { COMBINED, type AccessFormat } from './log-format.js';

export class AccessLog {
  constructor(
    private readonly file: LogFile,
    private readonly format: AccessFormat = COMBINED,
  ) {}

  /** The format reads the entry's optional fields: the caller fills them in. */
  get extended(): boolean {
    return this.format.extended;
  }

  log(entry: AccessLogEntry): void {
    this.file.write(this.format.line(entry));
  }
}
