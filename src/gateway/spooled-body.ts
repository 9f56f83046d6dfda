// CGI, FastCGI and SCGI tell the application the body's length before its first byte
// (CONTENT_LENGTH). A body sent without one (chunked, or HTTP/2 without Content-Length) is read
// whole first: into memory up to SPOOL_MEMORY, the rest into a temporary file that is unlinked as
// soon as it is opened, so nothing is left behind however the request ends (nginx's
// client_body_temp_path). Its size is bounded by `maximumRequestBodySize` (Ctx.body).
import { randomBytes } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Ctx } from '../http/ctx.js';
import { hasBody } from '../upstream/request-body.js';

/** Kept in memory before the body goes to a file (nginx keeps 16 KiB; a form post fits in this). */
const SPOOL_MEMORY = 256 * 1024;

export interface GatewayBody {
  /** What the application reads; undefined for a request without a body. */
  readonly stream: Readable | undefined;
  /** The length read, when the client did not declare it. */
  readonly length: number | undefined;
  /** Closes the temporary file (after the exchange, however it ended). */
  release(): Promise<void>;
}

const NO_BODY: GatewayBody = { stream: undefined, length: undefined, release: async () => {} };

/**
 * The request's body as a gateway sends it: the client's own stream when its length is declared,
 * otherwise read whole first. Fails as reading the body fails (a 413 past the bound, a client
 * gone): nothing has been sent to the application then.
 */
export async function gatewayBody(ctx: Ctx): Promise<GatewayBody> {
  if (!hasBody(ctx.req)) return NO_BODY;
  const body = ctx.body;
  if (ctx.req.headers['content-length'] !== undefined)
    return { stream: body, length: undefined, release: NO_BODY.release };
  return spool(body);
}

async function spool(body: Readable): Promise<GatewayBody> {
  const memory: Buffer[] = [];
  let length = 0;
  let file: FileHandle | undefined;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      length += chunk.length;
      if (file !== undefined) await write(file, chunk);
      else if (length <= SPOOL_MEMORY) memory.push(chunk);
      else {
        file = await temporaryFile();
        for (const kept of memory) await write(file, kept);
        memory.length = 0;
        await write(file, chunk);
      }
    }
  } catch (e) {
    await file?.close();
    throw e;
  }
  if (file === undefined)
    return {
      stream: Readable.from(memory, { objectMode: false }),
      length,
      release: NO_BODY.release,
    };
  const opened = file;
  const stream = opened.createReadStream({ start: 0, autoClose: false });
  return {
    stream,
    length,
    release: async () => {
      stream.destroy();
      await opened.close();
    },
  };
}

async function write(file: FileHandle, chunk: Buffer): Promise<void> {
  for (let done = 0; done < chunk.length;)
    done += (await file.write(chunk, done, chunk.length - done)).bytesWritten;
}

/** Readable and writable by this process alone, and already gone from its directory. */
async function temporaryFile(): Promise<FileHandle> {
  const path = join(tmpdir(), `portico-body-${process.pid}-${randomBytes(8).toString('hex')}`);
  const file = await open(path, 'wx+', 0o600);
  await unlink(path);
  return file;
}
