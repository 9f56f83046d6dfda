// A stage that codes what the stages after it answer (dynamic compression) sets `ctx.coder`;
// respond.ts shows it every head before the tap sees it, and sends the body through the coding it
// returns, so a cache in front stores the coded response and hits are not coded again.
import type { Transform } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { BodyTarget } from './response-tap.js';

/** What a coder reads of a request (a Ctx is one). */
export interface CodedRequest {
  readonly req: { readonly headers: IncomingHttpHeaders };
  /** Set while an errorConfig renders an error's page: the page keeps that status. */
  readonly errorStatus: number | undefined;
}

/** One per stage, holding nothing of a request: a copy of a request (ctx.detached) shares it. */
export interface ResponseCoder {
  /**
   * Behind a cache, the origin was asked for the coding chosen alone: what it answers depends on
   * that coding, not on the client's Accept-Encoding, and the cache may key it so.
   */
  readonly keyedByChoice: boolean;
  /**
   * The head as the stage made it, [name, value, …], rewritten in place when the response varies or
   * is coded; `length`: the body's, when it is all in memory. Returns the coding the body goes
   * through, or undefined to send it as it is.
   */
  head(
    ctx: CodedRequest,
    status: number,
    headers: string[],
    length?: number,
  ): BodyCoding | undefined;
}

export interface BodyCoding {
  /** The body is written in, the coded body read out. */
  readonly stream: Transform;
  /** A piece was written in: what came so far is flushed out once the writer pauses. */
  wrote(): void;
}

/** Where a stage writes a coded body piece by piece (respond.ts startResponse). */
export function codingTarget(coding: BodyCoding): BodyTarget {
  const stream = coding.stream;
  return {
    write(chunk) {
      const ok = stream.write(chunk);
      coding.wrote();
      return ok;
    },
    end: () => stream.end(),
    on: (event, listener) => stream.on(event, listener),
    off: (event, listener) => stream.off(event, listener),
  };
}
