// The error log: `[YYYY-MM-DD HH:MM:SS]: message` lines in local time, to a file when one is
// configured and to stderr otherwise.
import { LogFile } from './log-file.js';

export class ErrorLog {
  /** Into `file` (which may be shared with other logs), or to `stderr` without one. */
  constructor(
    private readonly file: LogFile | undefined,
    private readonly stderr: NodeJS.WritableStream = process.stderr,
  ) {}

  /** No path → log to `stderr`. Rejects with an error naming the path if it cannot be opened. */
  static async open(
    path: string | undefined,
    stderr: NodeJS.WritableStream = process.stderr,
  ): Promise<ErrorLog> {
    const file = path === undefined ? undefined : await LogFile.open(path, { stderr });
    return new ErrorLog(file, stderr);
  }

  log(message: string): void {
    const line = formatErrorLine(message, new Date());
    if (this.file) this.file.write(line);
    else this.stderr.write(line);
  }

  reopen(): Promise<void> {
    return this.file?.reopen() ?? Promise.resolve();
  }

  /** Closes the file, if any; stderr is not ours to close. */
  close(): Promise<void> {
    return this.file?.close() ?? Promise.resolve();
  }
}

// One message, one line: newlines become `\n` and `\r`; other control characters, which could
// come from client input quoted in a message (terminal escapes, say), become \xHH.
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f]/g;

function escapeControl(char: string): string {
  if (char === '\n') return '\\n';
  if (char === '\r') return '\\r';
  return `\\x${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
}

/** `[YYYY-MM-DD HH:MM:SS]: message\n` with `time` in the local time zone. */
export function formatErrorLine(message: string, time: Date): string {
  const date = `${time.getFullYear()}-${pad2(time.getMonth() + 1)}-${pad2(time.getDate())}`;
  const clock = `${pad2(time.getHours())}:${pad2(time.getMinutes())}:${pad2(time.getSeconds())}`;
  return `[${date} ${clock}]: ${message.replace(CONTROL, escapeControl)}\n`;
}

function pad2(value: number): string {
  return String(value).padStart(2, '0');
}
