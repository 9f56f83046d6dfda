// An append-only log file that never blocks the request path: lines are buffered in memory and
// written in batches by a single asynchronous writer, so a log line costs a string push, not a
// syscall. The file can be reopened at the same path after `logrotate` renamed it.
import { open, type FileHandle } from 'node:fs/promises';

// A batch goes out at the latest FLUSH_INTERVAL_MS after its first line, or as soon as it passes
// FLUSH_BYTES, so a busy server writes large chunks and a quiet one still logs promptly.
const FLUSH_INTERVAL_MS = 100;
const FLUSH_BYTES = 64 * 1024;
// Bytes buffered or being written beyond which lines are dropped: a stalled disk must not turn
// into unbounded memory growth.
const MAX_PENDING_BYTES = 8 * 1024 * 1024;

export interface LogFileOptions {
  /** Where write and reopen failures are reported; defaults to process.stderr. */
  stderr?: NodeJS.WritableStream;
}

export class LogFile {
  private buffer: string[] = [];
  private bufferedBytes = 0;
  private inFlightBytes = 0;
  // Lines dropped since the buffer filled up; while non-zero every line is dropped, so the notice
  // written once the batch in flight completes sits exactly where the lines are missing.
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushQueued = false;
  private closed = false;
  // Lines written before the file is open wait in the buffer; if it cannot be opened, they go.
  private opening = false;
  // The error the first open ended with, or undefined; kept settled so nobody must await it.
  private openOutcome: Promise<unknown> = Promise.resolve(undefined);
  // File I/O (batch writes, reopen, close) runs one operation at a time in this chain, so a
  // reopen or close never races a write. Operations report their own errors and never reject.
  private io: Promise<void> = Promise.resolve();

  private constructor(
    readonly path: string,
    // undefined while opening, and after a failure: lines are then ignored until a reopen succeeds.
    private handle: FileHandle | undefined,
    private readonly stderr: NodeJS.WritableStream,
  ) {}

  /** Opens (creating with mode 0o640) `path` for appending; rejects with an error naming it. */
  static async open(path: string, options: LogFileOptions = {}): Promise<LogFile> {
    const file = LogFile.create(path, options);
    await file.opened();
    return file;
  }

  /**
   * Starts opening `path` and returns at once, for whoever cannot wait (a Plan taking a lease):
   * lines written meanwhile are kept until the file is open; `opened()` says how it went.
   */
  static create(path: string, options: LogFileOptions = {}): LogFile {
    const file = new LogFile(path, undefined, options.stderr ?? process.stderr);
    file.opening = true;
    const opening = openHandle(path).then(
      (handle) => {
        file.handle = handle;
        return undefined;
      },
      (error: unknown) => {
        file.buffer = [];
        file.bufferedBytes = 0;
        return error;
      },
    );
    file.openOutcome = opening.finally(() => (file.opening = false));
    file.io = file.openOutcome.then(() => undefined);
    return file;
  }

  /** Resolves once the file is open; rejects with an error naming it when it could not be. */
  async opened(): Promise<void> {
    const error = await this.openOutcome;
    if (error !== undefined) throw error;
  }

  /** Queues `line` (which should end in a newline); ignored after close or a write failure. */
  write(line: string): void {
    if (this.closed || (this.handle === undefined && !this.opening)) return;
    const bytes = Buffer.byteLength(line);
    const pending = this.bufferedBytes + this.inFlightBytes;
    // With nothing pending even an oversized line is taken: no batch would come to end dropping.
    if (this.dropped > 0 || (pending > 0 && pending + bytes > MAX_PENDING_BYTES)) {
      this.dropped++;
      return;
    }
    this.append(line, bytes);
  }

  /** Writes what is buffered, then switches to a newly opened file at the same path. */
  reopen(): Promise<void> {
    return this.exclusive(async () => {
      if (this.closed) return;
      await this.drain();
      let next: FileHandle;
      try {
        next = await openHandle(this.path);
      } catch (error) {
        // The old file (if still usable) keeps receiving lines: better in the rotated file than
        // lost.
        const state = this.handle ? 'still logging to the previous file' : 'logging stays off';
        this.report(`${errorMessage(error)}; ${state}`);
        return;
      }
      // Opened before the old one closes so that a failed open leaves logging where it was; lines
      // logged from here on wait in the buffer and go to the new file.
      const old = this.handle;
      this.handle = next;
      await this.closeHandle(old);
    });
  }

  /** Writes everything buffered and closes the file; later lines are ignored. */
  close(): Promise<void> {
    if (this.closed) return this.io;
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    return this.exclusive(async () => {
      await this.drain();
      await this.closeHandle(this.handle);
      this.handle = undefined;
    });
  }

  private append(line: string, bytes: number): void {
    this.buffer.push(line);
    this.bufferedBytes += bytes;
    // Once closing, the final drain writes everything: no flush or timer to schedule.
    if (this.closed) return;
    if (this.bufferedBytes >= FLUSH_BYTES) this.requestFlush();
    else if (!this.flushQueued) {
      // unref: a pending flush must not keep the process alive; the owner closes the log on exit.
      this.timer ??= setTimeout(() => this.requestFlush(), FLUSH_INTERVAL_MS).unref();
    }
  }

  private requestFlush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.flushQueued) return;
    this.flushQueued = true;
    void this.exclusive(() => this.writeBatch());
  }

  private exclusive(operation: () => Promise<void>): Promise<void> {
    this.io = this.io.then(operation);
    return this.io;
  }

  private async drain(): Promise<void> {
    while (this.buffer.length > 0 && this.handle !== undefined) await this.writeBatch();
  }

  // Writes everything buffered at this moment as one batch.
  private async writeBatch(): Promise<void> {
    this.flushQueued = false;
    const handle = this.handle;
    if (handle === undefined || this.buffer.length === 0) return;
    const data = Buffer.from(this.buffer.join(''));
    this.inFlightBytes = this.bufferedBytes;
    this.buffer = [];
    this.bufferedBytes = 0;
    try {
      // A pipe or a full disk may take part of a write; the rest must follow in order.
      for (let offset = 0; offset < data.length;) {
        offset += (await handle.write(data, offset)).bytesWritten;
      }
    } catch (error) {
      await this.disable(error);
    }
    this.inFlightBytes = 0;
    if (this.dropped > 0 && this.handle !== undefined) {
      const notice = `portico: dropped ${this.dropped} log lines: the log file could not keep up\n`;
      this.dropped = 0;
      this.append(notice, notice.length);
    }
  }

  // A failing log must not take the server down: report once, stop logging until a reopen.
  private async disable(error: unknown): Promise<void> {
    const problem = `cannot write log file ${this.path}: ${errorMessage(error)}`;
    this.report(`${problem}; logging to it stops until reopened`);
    const handle = this.handle;
    this.handle = undefined;
    this.buffer = [];
    this.bufferedBytes = 0;
    this.dropped = 0;
    await this.closeHandle(handle);
  }

  private async closeHandle(handle: FileHandle | undefined): Promise<void> {
    try {
      await handle?.close();
    } catch (error) {
      this.report(`cannot close log file ${this.path}: ${errorMessage(error)}`);
    }
  }

  private report(message: string): void {
    this.stderr.write(`portico: ${message}\n`);
  }
}

async function openHandle(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'a', 0o640);
  } catch (error) {
    throw new Error(`cannot open log file ${path}: ${errorMessage(error)}`, { cause: error });
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
