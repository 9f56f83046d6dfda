// The settings one request runs with: global → host → location (→ errorConfig) merged once, at
// compile time, with the property table's defaults filled in, and frozen.
import type { ResolvedSettings } from '../config/defaults.js';
import type { HostConfig } from '../config/validate.js';
import type { HeaderRules } from './header-rules.js';
import type { IpList } from './ip-list.js';
import type { Logger } from './logger.js';

export type { ResolvedSettings };

/** An errorPages file read: its bytes, or why it cannot be used (for the error log). */
export type ErrorPageRead = { readonly body: Buffer } | { readonly problem: string };

export interface ErrorConfigRoute {
  /** undefined: every error status. */
  readonly scode: number | undefined;
  readonly resolved: Resolved;
}

/**
 * Its handler chain (`chain`) is declared where chains are (stage.ts): a chain takes a Ctx, which
 * holds its Resolved.
 */
export interface Resolved {
  readonly settings: ResolvedSettings;
  /** The host this belongs to (undefined: the global configuration, no host matched). */
  readonly host: HostConfig | undefined;
  /** The location's path, when a location with a path applies. */
  readonly location: string | undefined;
  /** removeHeaders, setHeaders, customHeaders and `Server`: one object per distinct set. */
  readonly headerRules: HeaderRules;
  /** `trustedProxies`, compiled; undefined when unset. */
  readonly trustedProxies: IpList | undefined;
  /** errorPages by status code, first configured first. */
  readonly errorPages: ReadonlyMap<number, readonly string[]>;
  /** Reads an errorPages file through the static files' memory cache (bounded, revalidated). */
  readonly readErrorPage: (path: string) => Promise<ErrorPageRead>;
  /** Empty inside an errorConfig: an error there is not re-dispatched again. */
  readonly errorConfigs: readonly ErrorConfigRoute[];
  /** Its host's error log (`errorLogFilePath`), else the server's. */
  readonly errorLog: Logger;
}
