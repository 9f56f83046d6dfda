// The SCGI stage (REFERENCE-behaviour.md §16.2): `scgiPath` as a plain prefix, a new connection
// per request, the variables as a netstring with CONTENT_LENGTH first, the body after it as the
// client sends it, and the answer parsed as CGI output, under the proxy's time limits. SCGI needs
// the body's length up front: a body sent without Content-Length is refused with 411 rather than
// buffered whole.
import type { Socket } from 'node:net';
import {
  addConfigured,
  cgiVariables,
  configuredVariables,
  variableBytes,
} from '../../gateway/cgi-variables.js';
import { gatewayError } from '../../gateway/gateway-errors.js';
import { relayOutput } from '../../gateway/relay.js';
import { gatewayBody } from '../../gateway/spooled-body.js';
import { prefixScript, RootResolver } from '../../gateway/script-path.js';
import { connectWithin, type SocketAddress } from '../../gateway/socket-address.js';
import { lateError, ResponseClock, type GatewayLimits } from '../../gateway/timeouts.js';
import { HttpError } from '../../http/http-error.js';
import type { Logger } from '../../http/logger.js';
import { decodePath } from '../../http/paths.js';
import type { Stage } from '../../http/stage.js';
import { discardRest } from '../../upstream/request-body.js';

export interface ScgiSetup {
  readonly address: SocketAddress;
  readonly path: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly limits: GatewayLimits;
  readonly errorLog: Logger;
}

/** The header netstring: `len:NAME\0value\0…,` with CONTENT_LENGTH first (SCGI §2). */
export function netstring(vars: ReadonlyMap<string, string>): Buffer {
  const parts: Buffer[] = [];
  const add = (name: string, value: string) =>
    parts.push(Buffer.from(`${name}\0`, 'latin1'), variableBytes(name, value), Buffer.from([0]));
  add('CONTENT_LENGTH', vars.get('CONTENT_LENGTH') ?? '0');
  for (const [name, value] of vars) if (name !== 'CONTENT_LENGTH') add(name, value);
  const headers = Buffer.concat(parts);
  return Buffer.concat([Buffer.from(`${headers.length}:`), headers, Buffer.from(',')]);
}

export function scgiStage(setup: ScgiSetup): Stage {
  const what = `SCGI ${setup.address.shown}`;
  const configured = configuredVariables(setup.environment);
  const roots = new RootResolver();
  return async (ctx, next) => {
    const wwwroot = ctx.resolved.settings.wwwroot;
    const root = wwwroot === undefined ? '/nonexistent' : roots.of(wwwroot);
    const script = prefixScript(root, setup.path, decodePath(ctx.path));
    if (script === undefined) return next(ctx);
    const upload = await gatewayBody(ctx);
    const body = upload.stream;
    const vars = cgiVariables(ctx, script, { scgi: true, contentLengthDefault: true });
    if (upload.length !== undefined) vars.set('CONTENT_LENGTH', String(upload.length));
    addConfigured(vars, configured);
    let socket: Socket;
    try {
      socket = await connect(setup.address, setup.limits.connectMs);
    } catch (e) {
      await upload.release();
      throw gatewayError(what, e);
    }
    const abort = () => socket.destroy();
    ctx.res.once('close', abort);
    const { limits } = setup;
    // Before the head, the client holds things up while its body is still coming and the
    // application has taken all of it so far.
    const uploading = () => body !== undefined && !body.readableEnded && !socket.writableNeedDrain;
    const clock = new ResponseClock(limits, uploading, (late) =>
      socket.destroy(lateError(what, late, limits, ctx.length ?? 0)),
    );
    const sent = () => clock.sent();
    try {
      socket.write(netstring(vars));
      body?.on('data', sent).pipe(socket, { end: false });
      await relayOutput(
        ctx,
        socket,
        { what, errorLog: setup.errorLog, withoutHead: 'error' },
        clock,
      );
    } catch (e) {
      if (ctx.responded || e instanceof HttpError) throw e;
      throw gatewayError(what, e);
    } finally {
      clock.stop();
      body?.off('data', sent);
      ctx.res.off('close', abort);
      if (body) discardRest(body);
      socket.destroy();
      await upload.release();
    }
  };
}

async function connect(address: SocketAddress, timeoutMs: number): Promise<Socket> {
  const socket = await connectWithin(address, timeoutMs);
  // Errors after this reach the relay through the stream.
  socket.on('error', () => undefined);
  return socket;
}
