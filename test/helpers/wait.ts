// Waiting for state that no event announces (another process's descriptors, a log line, a counter):
// poll with a deadline instead of sleeping a fixed time. The deadline is generous because it only
// costs time when the test fails; a loaded machine makes the wait longer, never the test red.
import { performance } from 'node:perf_hooks';

// Taken at import, before a test can mock the timers: polling must run on real time.
const realSetTimeout = globalThis.setTimeout;

export interface UntilOptions<T> {
  /** Whether the value read is the one waited for (default: truthy). */
  readonly ok?: (value: T) => boolean;
  /** What is waited for, for the error. */
  readonly what?: string;
  /** The deadline in ms (default 10 s). */
  readonly ms?: number;
  /** The polling interval in ms (default 20). */
  readonly every?: number;
}

const DEFAULT_DEADLINE_MS = 10_000;

/**
 * Reads `read` until its value is `ok`, and resolves with that value; past the deadline it
 * rejects naming what it waited for and the last value seen. A read that throws (a file not
 * written yet) counts as not yet.
 */
export async function until<T>(
  read: () => T | Promise<T>,
  options: UntilOptions<T> = {},
): Promise<T> {
  const ok = options.ok ?? Boolean;
  const ms = options.ms ?? DEFAULT_DEADLINE_MS;
  const deadline = performance.now() + ms;
  for (;;) {
    let last: string;
    try {
      const value = await read();
      if (ok(value)) return value;
      last = typeof value === 'string' ? value.slice(-2000) : JSON.stringify(value);
    } catch (e) {
      last = `${(e as Error).message} (thrown)`;
    }
    if (performance.now() > deadline)
      throw new Error(
        `timed out after ${ms} ms waiting for ${options.what ?? String(read)}; last value: ${last}`,
      );
    await new Promise((resolve) => realSetTimeout(resolve, options.every ?? 20));
  }
}

/** Resolves once `text()` (a server's error log, a child's output) matches `line`. */
export function logged(text: () => string, line: RegExp, ms?: number): Promise<string> {
  return until(text, {
    ok: (t) => line.test(t),
    what: `a log line matching ${line}`,
    ...(ms === undefined ? {} : { ms }),
  });
}
