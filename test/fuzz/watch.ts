// The server under fuzzing and what was lately sent to it. When the server dies, the run in which
// that is seen is rarely the input that killed it, and shrinking then only finds that everything
// fails; the error names the inputs sent before the death and the server's last words instead.
import type { PorticoProcess } from '../security/portico-process.js';

export class Watch {
  private readonly recent: string[] = [];
  private death: string | undefined;

  constructor(
    private readonly server: PorticoProcess,
    private readonly keep = 20,
  ) {}

  /** Runs one fuzz case against the server; fails with the death report once it has exited. */
  async run<T>(input: unknown, body: () => Promise<T>): Promise<T> {
    this.recent.push(JSON.stringify(input, readable));
    if (this.recent.length > this.keep) this.recent.shift();
    try {
      return await body();
    } finally {
      this.assertAlive();
    }
  }

  assertAlive(): void {
    if (this.server.alive()) return;
    this.death ??=
      `Portico exited; the last inputs sent to it, oldest first:\n${this.recent.join('\n')}\n` +
      `Its error log ends:\n${this.server.stderr().slice(-4000)}`;
    throw new Error(this.death);
  }
}

/** JSON for a fuzz input: bytes as hex, not as arrays of numbers. */
function readable(_key: string, value: unknown): unknown {
  const buffer = value as { type?: unknown; data?: unknown };
  if (buffer?.type === 'Buffer' && Array.isArray(buffer.data))
    return Buffer.from(buffer.data as number[]).toString('hex');
  return typeof value === 'bigint' ? `${value}n` : value;
}
