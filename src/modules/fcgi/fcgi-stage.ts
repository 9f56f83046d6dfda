// The FastCGI stage (REFERENCE-behaviour.md §16.3): path mode (`fcgiPath`, a plain prefix) first,
// then extension mode (`fcgiScriptExtensions`: an existing file, a directory's index, or a file
// with PATH_INFO after it). The request goes over a kept-open connection; one that the application
// had closed while idle is replaced without failing the request, when nothing of it was sent.
import type { Readable } from 'node:stream';
import { addConfigured, cgiVariables, configuredVariables } from '../../gateway/cgi-variables.js';
import { gatewayError } from '../../gateway/gateway-errors.js';
import { relayOutput, relayWhole, type RelayOptions } from '../../gateway/relay.js';
import { gatewayBody } from '../../gateway/spooled-body.js';
import { byExtension, findScript, prefixScript, RootResolver } from '../../gateway/script-path.js';
import { lateError, type GatewayLimits } from '../../gateway/timeouts.js';
import type { ScriptTarget } from '../../gateway/cgi-variables.js';
import type { Ctx } from '../../http/ctx.js';
import { HttpError } from '../../http/http-error.js';
import type { Logger } from '../../http/logger.js';
import { decodePath } from '../../http/paths.js';
import type { Stage } from '../../http/stage.js';
import { discardRest } from '../../upstream/request-body.js';
import type { FcgiConnection, FcgiConnections } from './connections.js';
import { FcgiExchange, StaleConnection, type Ending } from './exchange.js';
import { ProtocolStatus } from './records.js';

export interface FcgiSetup {
  readonly connections: FcgiConnections;
  readonly path: string | undefined;
  readonly extensions: readonly string[] | undefined;
  readonly environment: Readonly<Record<string, string>>;
  readonly limits: GatewayLimits;
  readonly errorLog: Logger;
}

/** The ends of END_REQUEST that are the application's refusal, not an answer (§5.5). */
const REFUSALS: Partial<Record<number, [number, string]>> = {
  [ProtocolStatus.CantMpxConn]: [502, 'it cannot take more than one request per connection'],
  [ProtocolStatus.Overloaded]: [503, 'it is overloaded'],
  [ProtocolStatus.UnknownRole]: [502, 'it does not play the responder role'],
};

export function fcgiStage(setup: FcgiSetup): Stage {
  const what = `FastCGI ${setup.connections.address.shown}`;
  const relay: RelayOptions = { what, errorLog: setup.errorLog, withoutHead: 'error' };
  const rule = setup.extensions && byExtension(setup.extensions);
  const roots = new RootResolver();
  const configured = configuredVariables(setup.environment);
  const serve = async (ctx: Ctx, script: ScriptTarget): Promise<void> => {
    const upload = await gatewayBody(ctx);
    const body = upload.stream;
    const vars = cgiVariables(ctx, script, { contentLengthDefault: true });
    if (upload.length !== undefined) vars.set('CONTENT_LENGTH', String(upload.length));
    addConfigured(vars, configured);
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          return await serveOnce(ctx, setup, { vars, body, relay, fresh: attempt > 0 });
        } catch (e) {
          // A connection php-fpm had closed while idle (pm.max_requests): once more, on a new one.
          if (e instanceof StaleConnection && attempt === 0 && !ctx.responded) continue;
          throw e instanceof StaleConnection ? gatewayError(what, e.cause) : e;
        }
      }
    } finally {
      // An application that failed (or answered) before reading all of it leaves the rest.
      if (body) discardRest(body);
      await upload.release();
    }
  };
  // The script is usually found at once (the file cache): no promise until there is one to wait for.
  return (ctx, next) => {
    const script = scriptFor(ctx, setup, rule, roots);
    if (script instanceof Promise)
      return script.then((found) => (found === undefined ? next(ctx) : serve(ctx, found)));
    return script === undefined ? next(ctx) : serve(ctx, script);
  };
}

/** One attempt at sending a request to the application. */
interface FcgiAttempt {
  readonly vars: ReadonlyMap<string, string>;
  /** The client's body, when it has one. */
  readonly body: Readable | undefined;
  readonly relay: RelayOptions;
  /** On a new connection, never an idle one: the retry after a stale connection. */
  readonly fresh: boolean;
}

async function serveOnce(
  ctx: Ctx,
  setup: FcgiSetup,
  { vars, body, relay, fresh }: FcgiAttempt,
): Promise<void> {
  const what = relay.what;
  let connection: FcgiConnection;
  try {
    const lent = setup.connections.acquire({ fresh, client: ctx });
    connection = lent instanceof Promise ? await lent : lent;
  } catch (e) {
    throw gatewayError(what, e);
  }
  const limits = setup.limits;
  const exchange = new FcgiExchange(connection, vars, body, {
    limits,
    late: (late) => lateError(what, late, limits, ctx.length ?? 0),
  });
  const onClose = () => exchange.abort();
  ctx.res.on('close', onClose);
  // The client left while the request waited for a connection.
  if (ctx.clientGone) onClose();
  try {
    const first = await exchange.first;
    if (Buffer.isBuffer(first)) {
      ctx.upstreamMs = exchange.clock.elapsedMs();
      relayWhole(ctx, first, relay);
    }
    // Failed before anything came: `ended()` says how.
    else if (first === undefined) throw await exchange.ended().then(cutShort, (e: unknown) => e);
    else await relayOutput(ctx, first, relay, exchange.clock);
  } catch (e) {
    const ending = await exchange.ended().catch((reason: unknown) => reason);
    if (ending instanceof StaleConnection) throw ending;
    // After the head, the response is cut; before it, what failed decides the status.
    if (ctx.responded) throw e;
    const failure = e instanceof HttpError ? e : gatewayError(what, e);
    throw (!(ending instanceof Error) && refusal(what, ending as Ending)) || failure;
  } finally {
    ctx.res.off('close', onClose);
  }
  logEnding(
    setup.errorLog,
    what,
    exchange.ending ?? (await exchange.ended().catch(() => undefined)),
  );
}

function cutShort(): Error {
  return Object.assign(new Error('the output was cut'), { code: 'ECONNABORTED' });
}

function refusal(what: string, ending: Ending): HttpError | undefined {
  const refused = REFUSALS[ending.protocolStatus];
  if (refused === undefined) return undefined;
  return new HttpError(
    refused[0],
    refused[0] === 503 ? 'upstream-unreachable' : 'upstream-failed',
    {
      detail: `${what}: the application refused the request: ${refused[1]}`,
    },
  );
}

/** STDERR and a non-zero exit status go to the error log (Ferron: "There were FastCGI errors"). */
function logEnding(log: Logger, what: string, ending: Ending | undefined): void {
  if (ending === undefined) return;
  const text = ending.stderr.trim();
  if (text !== '') log.log(`${what}: the application wrote to its error output: ${text}`);
  if (ending.appStatus !== 0)
    log.log(`${what}: the application ended the request with status ${ending.appStatus}`);
}

function scriptFor(
  ctx: Ctx,
  setup: FcgiSetup,
  rule: ((path: string) => boolean) | undefined,
  roots: RootResolver,
): ScriptTarget | undefined | Promise<ScriptTarget | undefined> {
  const wwwroot = ctx.resolved.settings.wwwroot;
  const root = wwwroot === undefined ? '/nonexistent' : roots.of(wwwroot);
  const decoded = decodePath(ctx.path);
  if (setup.path !== undefined) {
    const byPath = prefixScript(root, setup.path, decoded);
    if (byPath) return byPath;
  }
  if (rule === undefined || wwwroot === undefined) return undefined;
  return findScript(root, decoded, rule);
}
