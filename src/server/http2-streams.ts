// Every HTTP/2 stream of a listener, CONNECT included, reaches the pipeline from here as an
// Http2Request and Http2Response (http2-exchange.ts), without node:http2's compatibility layer.
// What that layer did and the pipeline relies on is done here: an error listener (a stream reset
// under a write is seen as 'close'), and `Expect` answered as Node answers it over HTTP/1.1.
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { Http2Request, Http2Response } from '../http/http2-exchange.js';
import type { Request, Response } from '../http/ctx.js';

// RFC 9110 §10.1.1: 100-continue is the one expectation defined; any other gets 417.
const CONTINUE = /^100-continue$/i;

const ignore = () => undefined;

export function http2Streams(
  dispatch: (req: Request, res: Response) => void,
  /** Told of every stream first (the listener counts a session's streams). */
  opened: (stream: ServerHttp2Stream) => void,
): (
  stream: ServerHttp2Stream,
  headers: IncomingHttpHeaders,
  flags: number,
  rawHeaders: string[],
) => void {
  return (stream, headers, _flags, rawHeaders) => {
    stream.on('error', ignore);
    opened(stream);
    const expect = headers.expect;
    if (expect !== undefined) {
      if (!CONTINUE.test(String(expect)))
        return void stream.respond({ ':status': 417 }, { endStream: true });
      stream.additionalHeaders({ ':status': 100 });
    }
    dispatch(new Http2Request(stream, headers, rawHeaders), new Http2Response(stream));
  };
}
