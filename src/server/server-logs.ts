// The server's own error log: a lease on its file (so a host's log at the same path is the same
// open file), taken at start, kept by a reload unless its path changed, returned at stop; and what
// a line of the access log holds.
import type { TLSSocket } from 'node:tls';
import type { Config } from '../config/validate.js';
import type { Ctx } from '../http/ctx.js';
import type { AccessLogEntry } from '../log/access-entry.js';
import { ErrorLog } from '../log/error-log.js';
import { leaseLogFile } from '../plan/plan-logs.js';
import type { Leases, Resources } from '../plan/resources.js';
import type { Refusal } from './refusals.js';
import type { AccessRecord } from './request-handler.js';

export interface Logs {
  readonly error: ErrorLog;
  readonly errorPath: string | undefined;
  readonly leases: Leases;
}

/** `stderr`: where the error log goes when `errorLogFilePath` is not set. */
export async function openLogs(
  config: Config,
  resources: Resources,
  stderr: NodeJS.WritableStream | undefined,
): Promise<Logs> {
  const errorPath = config.global.errorLogFilePath;
  const leases = resources.leases();
  const file = errorPath === undefined ? undefined : leaseLogFile(leases, errorPath, stderr);
  try {
    await file?.opened();
  } catch (e) {
    await leases.release();
    throw e;
  }
  return { error: new ErrorLog(file, stderr), errorPath, leases };
}

/** A new error log only where the configured path changed; otherwise the same one. */
export function reopenChanged(
  old: Logs,
  config: Config,
  resources: Resources,
  stderr: NodeJS.WritableStream | undefined,
): Promise<Logs> {
  return config.global.errorLogFilePath === old.errorPath
    ? Promise.resolve(old)
    : openLogs(config, resources, stderr);
}

/** Returns the lease of `old` when `current` does not carry it over. */
export async function closeReplaced(current: Logs, old: Logs): Promise<void> {
  if (old !== current) await old.leases.release();
}

export function closeLogs(logs: Logs): Promise<void> {
  return logs.leases.release();
}

/** CONTRACT.md point 9: a request the HTTP parser refused is logged, with what it sent. */
export function refusedEntry(r: Refusal): AccessLogEntry {
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

/** `extended`: with what only some formats read (access-entry.ts). */
export function accessEntry(
  { ctx, rawTarget, protocol }: AccessRecord,
  extended: boolean,
): AccessLogEntry {
  const h = ctx.req.headers;
  const entry: AccessLogEntry = {
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
  if (extended) {
    entry.host = ctx.hostname;
    entry.durationMs = Date.now() - ctx.startedAt;
    entry.upstreamMs = ctx.upstreamMs;
    entry.tlsVersion = tlsVersion(ctx);
    entry.cacheStatus = ctx.cacheStatus;
  }
  return entry;
}

function tlsVersion(ctx: Ctx): string | undefined {
  if (ctx.scheme !== 'https') return undefined;
  // Over HTTP/2 the socket is Node's stand-in for the session's (Http2Request keeps it from the
  // start), which passes the call on.
  return (ctx.req.socket as TLSSocket | undefined)?.getProtocol?.() ?? undefined;
}
