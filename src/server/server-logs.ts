// The server's two logs: opened at start, carried over by a reload unless their configured path
// changed, closed at stop; and what a line of the access log holds.
import type { Config } from '../config/validate.js';
import { AccessLog } from '../log/access-log.js';
import { ErrorLog } from '../log/error-log.js';
import type { Refusal } from './refusals.js';
import type { AccessRecord } from './request-handler.js';

export interface Logs {
  readonly error: ErrorLog;
  readonly access: AccessLog | undefined;
  readonly errorPath: string | undefined;
  readonly accessPath: string | undefined;
}

/** `stderr`: where the error log goes when `errorLogFilePath` is not set. */
export async function openLogs(
  config: Config,
  stderr: NodeJS.WritableStream | undefined,
): Promise<Logs> {
  const errorPath = config.global.errorLogFilePath;
  const accessPath = config.global.logFilePath;
  const error = await ErrorLog.open(errorPath, stderr);
  try {
    return { error, access: await AccessLog.open(accessPath), errorPath, accessPath };
  } catch (e) {
    await error.close();
    throw e;
  }
}

/** New log files only where the configured path changed; the others carry over. */
export async function reopenChanged(
  old: Logs,
  config: Config,
  stderr: NodeJS.WritableStream | undefined,
): Promise<Logs> {
  const errorPath = config.global.errorLogFilePath;
  const accessPath = config.global.logFilePath;
  const error = errorPath === old.errorPath ? old.error : await ErrorLog.open(errorPath, stderr);
  try {
    const access = accessPath === old.accessPath ? old.access : await AccessLog.open(accessPath);
    return { error, access, errorPath, accessPath };
  } catch (e) {
    if (error !== old.error) await error.close();
    throw e;
  }
}

/** Closes the files of `old` that `current` does not carry over. */
export async function closeReplaced(current: Logs, old: Logs): Promise<void> {
  await Promise.all([
    old.error !== current.error ? old.error.close() : undefined,
    old.access !== current.access ? old.access?.close() : undefined,
  ]);
}

export async function closeLogs(logs: Logs): Promise<void> {
  await logs.access?.close();
  await logs.error.close();
}

/** CONTRACT.md point 9: a request the HTTP parser refused is logged, with what it sent. */
export function refusedEntry(r: Refusal) {
  return {
    clientIp: r.address,
    user: undefined,
    time: new Date(),
    method: '',
    target: '',
    protocol: r.protocol,
    rawLine: r.line ?? '-',
    status: r.status,
    length: 0,
    referer: undefined,
    userAgent: undefined,
  };
}

export function accessEntry({ ctx, rawTarget, protocol }: AccessRecord) {
  const h = ctx.req.headers;
  return {
    clientIp: ctx.clientAddress,
    user: ctx.user,
    time: new Date(ctx.startedAt),
    method: ctx.method,
    target: rawTarget,
    protocol,
    // A response the client abandoned before its head was sent: nginx's 499.
    status: ctx.status || 499,
    length: ctx.length,
    referer: typeof h.referer === 'string' ? h.referer : undefined,
    userAgent: typeof h['user-agent'] === 'string' ? h['user-agent'] : undefined,
  };
}
