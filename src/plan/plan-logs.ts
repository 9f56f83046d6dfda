// The logs of one Plan: for each host (and for requests no host matched), the access log its
// requests go to, in its `logFormat`, and the error log its errors go to. A file is a lease on
// `log-file:PATH`, so however many hosts, Plans and the server's own error log name one path, it is
// opened once, a reload that keeps it keeps it open, and it closes with the last Plan using it.
import type { Logger } from '../http/logger.js';
import { AccessLog } from '../log/access-log.js';
import { ErrorLog } from '../log/error-log.js';
import { LogFile } from '../log/log-file.js';
import { accessFormat, type AccessFormat } from '../log/log-format.js';
import type { Leases, Resources } from './resources.js';

/** Where one site's lines go. */
export interface SiteLogs {
  /** Undefined: the site's requests are not logged. */
  readonly access: AccessLog | undefined;
  readonly error: Logger;
}

/** What a site's merged settings say of its logs. */
export interface LogSettings {
  readonly logFilePath?: string | undefined;
  readonly logFormat?: string | undefined;
  readonly errorLogFilePath?: string | undefined;
}

/** The server's own error log, which every site without one of its own writes to. */
export interface ServerErrorLog {
  readonly logger: Logger;
  readonly path: string | undefined;
}

const KEY = 'log-file:';

/** The file at `path`, opened (in the background: see `LogFile.opened`) unless already held. */
export function leaseLogFile(
  leases: Leases,
  path: string,
  stderr: NodeJS.WritableStream | undefined,
): LogFile {
  return leases.take(`${KEY}${path}`, () => LogFile.create(path, stderr ? { stderr } : {}));
}

/** Every log file the server holds, its Plans' and its own error log's: what a rotation reopens. */
export function heldLogFiles(resources: Resources): LogFile[] {
  return resources.heldUnder(KEY) as LogFile[];
}

export class PlanLogs {
  private readonly files = new Set<LogFile>();
  private readonly formats = new Map<string, AccessFormat>();
  private readonly sites = new Map<string, SiteLogs>();
  /** Some site logs its requests: the request handler must report finished ones. */
  logsRequests = false;

  constructor(
    private readonly leases: Leases,
    private readonly server: ServerErrorLog,
    private readonly stderr: NodeJS.WritableStream | undefined,
  ) {}

  /** The logs of a site whose merged settings are `settings`; equal settings share them. */
  site(settings: LogSettings): SiteLogs {
    const {
      logFilePath: accessPath,
      logFormat = 'combined',
      errorLogFilePath: errorPath,
    } = settings;
    const key = JSON.stringify([accessPath, logFormat, errorPath]);
    let logs = this.sites.get(key);
    if (logs === undefined) {
      logs = {
        access:
          accessPath === undefined
            ? undefined
            : new AccessLog(this.file(accessPath), this.format(logFormat)),
        error:
          errorPath === undefined || errorPath === this.server.path
            ? this.server.logger
            : new ErrorLog(this.file(errorPath), this.stderr),
      };
      this.logsRequests ||= logs.access !== undefined;
      this.sites.set(key, logs);
    }
    return logs;
  }

  /** How many files this Plan holds. */
  get fileCount(): number {
    return this.files.size;
  }

  /** Resolves once every file is open; rejects with the first that cannot be. */
  async ready(): Promise<void> {
    await Promise.all([...this.files].map((file) => file.opened()));
  }

  private file(path: string): LogFile {
    const file = leaseLogFile(this.leases, path, this.stderr);
    this.files.add(file);
    return file;
  }

  private format(spec: string): AccessFormat {
    let format = this.formats.get(spec);
    if (format === undefined) {
      const parsed = accessFormat(spec);
      // validate refused it already (server/log-format-check.ts): a Plan is compiled only from a
      // configuration that passed.
      if ('problem' in parsed) throw new Error(`logFormat: ${parsed.problem}`);
      format = parsed;
      this.formats.set(spec, format);
    }
    return format;
  }
}
