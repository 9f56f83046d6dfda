// `respond`: a fixed answer for every request that reaches it (a health endpoint, a maintenance
// page, a blocked path), its head finished once like a cached file's (respond.ts KeptHead), so the
// header rules apply; or, with `abort`, no answer at all: the connection is closed (nginx's 444),
// or over HTTP/2 the stream alone is reset with CANCEL, the session and its other streams going on.
import { constants } from 'node:http2';
import { RESPOND_CONTENT_TYPE, RESPOND_STATUS, type Settings } from '../config/properties.js';
import type { Ctx } from '../http/ctx.js';
import { hasNoContent, joinedText, KeptHead, send, sendKept } from '../http/respond.js';
import { sending } from '../http/response-head.js';
import type { Stage } from '../http/stage.js';

// What the access log writes for a request answered by closing its connection, as nginx does.
const ABORTED = 444;

export function fixedResponse(settings: Settings): Stage | undefined {
  const r = settings.respond;
  if (r === undefined) return undefined;
  if (r.abort) return abort;
  const status = r.status ?? RESPOND_STATUS;
  if (hasNoContent(status)) return (ctx) => send(ctx, status, []);
  const body = Buffer.from(r.body ?? '');
  const text = joinedText(body);
  const head = new KeptHead(
    ['Content-Type', r.contentType ?? RESPOND_CONTENT_TYPE, 'Content-Length', String(body.length)],
    status,
  );
  return (ctx) => sendKept(ctx, head, body, text);
}

function abort(ctx: Ctx): void {
  sending(ctx, ABORTED);
  ctx.length = 0;
  if ('stream' in ctx.res) ctx.res.stream.close(constants.NGHTTP2_CANCEL);
  else {
    ctx.res.destroy();
    ctx.upgrade?.destroy();
  }
}
