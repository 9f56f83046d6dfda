// A streamed body into the response, with backpressure, settling as stream.pipeline would (resolved
// once the response is finished, rejected when it closes first or either side fails, the body then
// destroyed), without the AbortController and DOMException pipeline makes for every call, which
// stood out in a profile of small FastCGI responses (bench/fastcgi.sh).
import type { Readable, Writable } from 'node:stream';

/**
 * What was handed to the connection is counted into `counter` (the request's Ctx) as it goes, so a
 * cut transfer logs what got out.
 */
export function pump(
  body: Readable,
  target: Writable,
  counter: { length: number | undefined },
): Promise<void> {
  // A response whose client left before the body began has had its 'close': none comes to wait
  // for, and a write to it only returns false (a CGI answer found its client gone and held its
  // process slot for ever).
  if (target.destroyed) {
    body.destroy();
    return Promise.reject(prematureClose());
  }
  return new Promise((resolve, reject) => {
    const resume = () => body.resume();
    const onData = (chunk: Buffer) => {
      counter.length! += chunk.length;
      if (target.write(chunk)) return;
      body.pause();
      target.once('drain', resume);
    };
    const onEnd = () => target.end();
    const settle = () => {
      body.off('data', onData).off('end', onEnd).off('error', onBodyError);
      target.off('drain', resume).off('finish', onFinish).off('close', onClose);
      target.off('error', onTargetError);
    };
    const onFinish = () => {
      settle();
      resolve();
    };
    const onBodyError = (error: Error) => {
      settle();
      target.destroy(error);
      reject(error);
    };
    const onTargetError = (error: Error) => {
      settle();
      body.destroy();
      reject(error);
    };
    const onClose = () => {
      settle();
      body.destroy();
      reject(prematureClose());
    };
    body.on('data', onData).once('end', onEnd).once('error', onBodyError);
    target.once('finish', onFinish).once('close', onClose).once('error', onTargetError);
    // A body its producer paused (a gateway's, after its header block) flows only when asked.
    body.resume();
  });
}

function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}
