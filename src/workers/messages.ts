// What a primary and its worker processes say to each other over the IPC channel (with Node's
// structured-clone serialization, so a configuration crosses as the plain data it is).
import type { Settings } from '../config/properties.js';
import type { Config, HostConfig } from '../config/validate.js';
import type { HostRequest } from '../plan/module.js';
import type { CounterOptions, CounterState } from '../store/shared-store.js';
import type { AcmeEvent } from '../tls/acme-manager.js';
import type { StapleEvent } from '../tls/ocsp.js';
import { PROPERTY_TABLE } from '../modules/registry.js';

/** A Config as it crosses: the property table is the worker's own, the same registry's. */
export interface ConfigData {
  readonly global: Settings;
  readonly hosts: HostConfig[];
}

export const configData = (config: Config): ConfigData => ({
  global: config.global,
  hosts: config.hosts,
});

export const configOf = (data: ConfigData): Config => ({ ...data, properties: PROPERTY_TABLE });

/** A worker's counters, for /status. */
export interface WorkerStats {
  readonly requests_total: number;
  readonly connections_active: number;
  /** The listeners it serves, and what its modules report (/status). */
  readonly listeners: readonly string[];
  readonly extra: Record<string, unknown>;
}

export type ToWorker =
  /** `generation`: which of the primary's Python processes the configuration's Plan uses. */
  | { readonly type: 'start'; readonly config: ConfigData; readonly generation: number }
  /** Counts of a shared-store space as the primary holds them (ipc-store.ts). */
  | {
      readonly type: 'counted';
      readonly space: string;
      readonly options: CounterOptions;
      readonly entries: readonly (readonly [string, CounterState])[];
    }
  /** Answered 'prepared' once reload number `reload` is ready to swap in. */
  | {
      readonly type: 'prepare';
      readonly id: number;
      readonly reload: number;
      readonly config: ConfigData;
      readonly generation: number;
    }
  /** Whether the prepared reload is swapped in; answered with true once it is. */
  | {
      readonly type: 'decide';
      readonly id: number;
      readonly reload: number;
      readonly commit: boolean;
    }
  /** A challenge answer or certificate the primary's orders brought; answered once taken. */
  | { readonly type: 'acme'; readonly id: number; readonly event: AcmeEvent }
  /** An OCSP response the primary fetched (or withdrew), stapled from the next handshake on. */
  | { readonly type: 'staple'; readonly event: StapleEvent }
  /** Answered once every log file is reopened (after logrotate). */
  | { readonly type: 'reopen'; readonly id: number }
  | { readonly type: 'stats'; readonly id: number }
  /** Answered with the worker's metrics as prom-client's JSON (empty when they are off). */
  | { readonly type: 'metrics'; readonly id: number }
  | { readonly type: 'runtime'; readonly id: number }
  /** The answer to a 'host' request: the sockets of the processes, or why they could not start. */
  | {
      readonly type: 'hosted';
      readonly request: number;
      readonly sockets?: readonly string[];
      readonly error?: string;
    };

export type FromWorker =
  /** One counted for `key` in a shared-store space. */
  | {
      readonly type: 'count';
      readonly space: string;
      readonly key: string;
      readonly options: CounterOptions;
    }
  /** A certificate this worker's handshakes showed first: the primary fetches its OCSP response. */
  | {
      readonly type: 'staple-wanted';
      readonly certificate: Buffer;
      readonly issuer: Buffer | null;
    }
  /** Processes for the Plan of configuration `generation`, run by the primary for all workers. */
  | {
      readonly type: 'host';
      readonly request: number;
      readonly generation: number;
      readonly host: HostRequest;
    }
  /** Listening for messages: a message sent before is lost. */
  | { readonly type: 'ready' }
  | { readonly type: 'started' }
  | { readonly type: 'start-failed'; readonly error: string }
  | { readonly type: 'answer'; readonly id: number; readonly value: unknown }
  | {
      readonly type: 'failed';
      readonly id: number;
      readonly error: string;
      /** The configuration's fault (an application that cannot start), as an invalid file is. */
      readonly invalid: boolean;
    };

/** A message of `types` from the other side, or undefined (the launcher's signals, anything else). */
export function messageOf<M extends { type: string }>(
  message: unknown,
  types: readonly M['type'][],
): M | undefined {
  const type = (message as { type?: unknown } | null)?.type;
  return typeof type === 'string' && (types as readonly string[]).includes(type)
    ? (message as M)
    : undefined;
}
