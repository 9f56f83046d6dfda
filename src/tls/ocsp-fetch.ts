// Asking an OCSP responder: one POST (RFC 6960 appendix A.1) over http: or https:, with a time
// limit and a size limit on the answer, and no connection kept open afterwards.

import http, { type IncomingMessage } from 'node:http';
import { httpsModule } from './lazy-modules.js';

export const MAX_RESPONSE_BYTES = 64 * 1024;

/** POSTs `body` to `url` and returns the response body of a 200 answer. */
export async function postOcspRequest(
  url: URL,
  body: Buffer,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Buffer> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const request = (url.protocol === 'https:' ? httpsModule() : http).request(url, {
    method: 'POST',
    agent: false, // one request now and then: no pool keeping sockets open
    signal: AbortSignal.any([signal, timeout]),
    headers: {
      'content-type': 'application/ocsp-request',
      'content-length': body.length,
      accept: 'application/ocsp-response',
    },
  });
  // The listener stays for the request's life: an abort while the body is read is also emitted
  // on the request, and an 'error' without a listener would bring the process down.
  const responded = new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.on('error', reject);
  });
  try {
    request.end(body);
    const response = await responded;
    if (response.statusCode !== 200) throw new Error(`HTTP status ${response.statusCode}`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES)
        throw new Error(`the response is larger than ${MAX_RESPONSE_BYTES / 1024} KiB`);
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  } catch (err) {
    if (timeout.aborted) throw new Error(`no complete answer within ${timeoutMs} ms`);
    throw err;
  } finally {
    request.destroy();
  }
}
