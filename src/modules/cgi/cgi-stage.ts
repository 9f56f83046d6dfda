// The CGI stage (RFC 3875, REFERENCE-behaviour.md §16.1): any file under `/cgi-bin/` and files
// with a `cgiScriptExtensions` extension run as a process in their own directory, in a process
// group of their own, so that the whole group is killed when the client goes away (or the request
// times out, which resets the client). The body streams to stdin; stdout is the response; stderr
// goes to the error log. A script that exits non-zero before its headers gets 500; one that keeps
// its header block past proxyResponseTimeout gets 504, and one whose output pauses past
// proxyIdleTimeout has its response cut, both killed with their group. (proxyConnectTimeout has
// nothing to time: spawn() returns once the program runs, or fails, blocking until then.)
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { cgiVariables } from '../../gateway/cgi-variables.js';
import { readHead } from '../../gateway/cgi-response.js';
import { gatewayBody } from '../../gateway/spooled-body.js';
import { byExtension, findScript, inCgiBin, type ScriptRule } from '../../gateway/script-path.js';
import { lateError, ResponseClock, type GatewayLimits } from '../../gateway/timeouts.js';
import type { Ctx } from '../../http/ctx.js';
import { HttpError } from '../../http/http-error.js';
import type { Logger } from '../../http/logger.js';
import { decodePath } from '../../http/paths.js';
import { sendStream } from '../../http/respond.js';
import type { Stage } from '../../http/stage.js';
import { discardRest } from '../../upstream/request-body.js';
import { commandFor } from './interpreters.js';
import type { ProcessSlots } from './process-slots.js';

/** Error output kept per script for the error log; the rest is counted, not kept. */
const MAX_STDERR = 64 * 1024;
/** How long a script may run on once its response is complete. */
const LINGER_MS = 5_000;
/** How long after a script's exit its error output may take to close. */
const STDIO_GRACE_MS = 200;

export interface CgiSetup {
  readonly extensions: readonly string[];
  readonly interpreters: Readonly<Record<string, readonly string[]>>;
  readonly slots: ProcessSlots;
  readonly limits: GatewayLimits;
  readonly errorLog: Logger;
}

export function cgiStage(setup: CgiSetup): Stage {
  const byExt = byExtension(setup.extensions);
  const rule: ScriptRule = (path) => inCgiBin(path) || byExt(path);
  return async (ctx, next) => {
    const wwwroot = ctx.resolved.settings.wwwroot;
    if (wwwroot === undefined) return next(ctx);
    const script = await findScript(resolve(wwwroot), decodePath(ctx.path), rule);
    if (script === undefined) return next(ctx);
    const what = `CGI ${script.name}`;
    const stats = await fsp.stat(script.filename);
    const command = commandFor(script.filename, {
      executable: (stats.mode & 0o111) !== 0,
      interpreters: setup.interpreters,
    });
    if (command === undefined)
      throw new HttpError(500, 'internal', {
        detail: `${what}: not executable, and no interpreter for its extension (cgiScriptInterpreters)`,
      });
    // Read before a process slot is taken: a slow upload must not hold one.
    const upload = await gatewayBody(ctx);
    const vars = cgiVariables(ctx, script);
    if (upload.length !== undefined) vars.set('CONTENT_LENGTH', String(upload.length));
    const release = await setup.slots.acquire();
    if (release === false) {
      await upload.release();
      throw new HttpError(503, 'upstream-unreachable', {
        detail: `${what}: every CGI process slot stayed busy; the request was not run`,
      });
    }
    try {
      // A client gone while the request waited for a slot is not answered: nothing is run for it.
      if (ctx.clientGone) return;
      await run(ctx, setup, {
        what,
        command,
        filename: script.filename,
        vars,
        upload: upload.stream,
      });
    } finally {
      release();
      await upload.release();
    }
  };
}

/** A script to run for one request. */
interface ScriptRun {
  /** How messages name it: `CGI` and its SCRIPT_NAME. */
  readonly what: string;
  /** The script itself, or its interpreter and the script, with arguments. */
  readonly command: readonly string[];
  readonly filename: string;
  /** The CGI variables, its environment besides Portico's own. */
  readonly vars: ReadonlyMap<string, string>;
  /** The request body, for its standard input. */
  readonly upload: Readable | undefined;
}

async function run(
  ctx: Ctx,
  { errorLog: log, limits }: CgiSetup,
  { what, command, filename, vars, upload }: ScriptRun,
): Promise<void> {
  const child = spawn(command[0]!, command.slice(1), {
    cwd: dirname(filename),
    env: { ...process.env, ...Object.fromEntries(vars) },
    stdio: ['pipe', 'pipe', 'pipe'],
    // A process group of its own, so that what the script starts is killed with it.
    detached: true,
  });
  // 'exit', not 'close': a process the script started in a session of its own (a daemon) is out
  // of reach of the group kill and may hold the script's error output for as long as it lives.
  const exited = new Promise<number | null>((resolveExit) => {
    child.once('error', (e) => {
      log.log(`${what}: cannot start ${command[0]}: ${e.message}`);
      resolveExit(-1);
    });
    child.once('exit', (code) => resolveExit(code));
  });
  const closed = new Promise<void>((resolveClose) => {
    child.once('error', () => resolveClose());
    child.once('close', () => resolveClose());
  });
  let stderr = '';
  let dropped = 0;
  child.stderr!.on('data', (d: Buffer) => {
    if (stderr.length < MAX_STDERR) stderr += d.toString('utf8');
    else dropped += d.length;
  });
  const kill = () => killGroup(child);
  ctx.res.once('close', kill);
  child.stdin!.on('error', () => undefined);
  // Before the head, the client holds things up while its body is still coming and the script
  // has taken all of it so far.
  const uploading = () =>
    upload !== undefined && !upload.readableEnded && !child.stdin!.writableNeedDrain;
  const clock = new ResponseClock(limits, uploading, (late) => {
    kill();
    child.stdout!.destroy(lateError(what, late, limits, ctx.length ?? 0));
  });
  const sent = () => clock.sent();
  if (upload) upload.on('data', sent).pipe(child.stdin!);
  else child.stdin!.end();
  try {
    const { head, body } = await readHead(child.stdout!);
    ctx.upstreamMs = clock.elapsedMs();
    clock.head(body);
    // Output that ended without headers: the exit status, due any moment, decides.
    const code = head === undefined && child.stdout!.readableEnded ? await exited : child.exitCode;
    if (code !== null && code !== 0)
      throw new HttpError(500, 'gateway-exited', {
        detail: `${what}: exited with status ${code} before its headers`,
      });
    if (head && head.dropped.length > 0)
      log.log(`${what}: header lines left out of the response: ${head.dropped.join(', ')}`);
    await sendStream(ctx, head?.status ?? 200, head?.headers ?? [], body);
  } catch (e) {
    kill();
    if (e instanceof HttpError || !ctx.clientGone) throw e;
  } finally {
    clock.stop();
    ctx.res.off('close', kill);
    upload?.off('data', sent);
    if (upload) discardRest(upload);
    // Output nobody will read (the answer failed before its body was sent) would keep 'close',
    // and with it the exit status and the process slot, waiting for ever.
    child.stdout!.destroy();
    // Its answer is out: a script that lingers (or left a child holding its output) is given a
    // moment to end, then its group is killed, so it cannot hold a process slot for ever.
    const lingering = setTimeout(kill, LINGER_MS);
    const code = await exited;
    clearTimeout(lingering);
    // What it wrote to its error output just before it ended is read within moments; a pipe still
    // held after that belongs to something it left running, and is closed on our side.
    await within(closed, STDIO_GRACE_MS);
    child.stderr!.destroy();
    child.stdin!.destroy();
    const text = stderr.trim();
    if (text !== '')
      log.log(
        `${what}: the script wrote to its error output: ${text}${dropped > 0 ? `… (${dropped} more bytes not logged)` : ''}`,
      );
    if (code !== 0 && code !== null) log.log(`${what}: exited with status ${code}`);
  }
}

/** Settles when `promise` does, or after `ms`, whichever comes first. */
function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The script and everything it started. */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}
