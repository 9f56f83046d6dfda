// A gateway's output to the client, shared by CGI, SCGI and FastCGI: the header block read and
// checked, the body streamed at the client's pace. A client that goes away mid-body ends quietly
// (the caller's abort ends the work on the other side); a body cut by a time limit does not.
import type { Readable } from 'node:stream';
import type { Ctx } from '../http/ctx.js';
import { HttpError } from '../http/http-error.js';
import type { Logger } from '../http/logger.js';
import { send, sendStream } from '../http/respond.js';
import { readHead, splitOutput, type CgiHead } from './cgi-response.js';
import type { ResponseClock } from './timeouts.js';

export interface RelayOptions {
  /** Names the gateway in log lines: `FastCGI unix:///run/php/php-fpm.sock`. */
  readonly what: string;
  readonly errorLog: Logger;
  /**
   * Output without a header block: CGI sends it as a 200 body (Ferron's rule), SCGI and FastCGI
   * answer 502 (Ferron: 500).
   */
  readonly withoutHead: 'body' | 'error';
}

/**
 * Resolves once the response is sent, or the client has gone. `clock` times the body's pieces
 * once the head is read (and says how long the head took, for the access log); the caller stops
 * it.
 */
export async function relayOutput(
  ctx: Ctx,
  output: Readable,
  options: RelayOptions,
  clock?: ResponseClock,
): Promise<void> {
  const { head, body } = await readHead(output);
  if (clock !== undefined) {
    ctx.upstreamMs = clock.elapsedMs();
    clock.head(body);
  }
  if (!usable(head, options)) {
    body.destroy();
    throw withoutHead(options);
  }
  try {
    await sendStream(ctx, head?.status ?? 200, head?.headers ?? [], body);
  } catch (error) {
    body.destroy();
    // An HttpError in the body is the gateway's own (a time limit): the response it cut is logged.
    if (!ctx.clientGone || error instanceof HttpError) throw error;
  }
}

/** The same for an output that came whole (a small response): one write, no stream between. */
export function relayWhole(ctx: Ctx, output: Buffer, options: RelayOptions): void {
  const { head, body } = splitOutput(output);
  if (!usable(head, options)) throw withoutHead(options);
  send(ctx, head?.status ?? 200, head?.headers ?? [], body);
}

/** Whether the output can be answered; the fields dropped from its head go to the error log. */
function usable(head: CgiHead | undefined, options: RelayOptions): boolean {
  if (head === undefined) return options.withoutHead === 'body';
  if (head.dropped.length > 0)
    options.errorLog.log(
      `${options.what}: header lines left out of the response: ${head.dropped.map((l) => JSON.stringify(l)).join(', ')}`,
    );
  return true;
}

function withoutHead(options: RelayOptions): HttpError {
  return new HttpError(502, 'upstream-failed', {
    detail: `${options.what}: the output ended, or its header block was too long, before an empty line`,
  });
}
