// Starts a real Portico server in this process on a free 127.0.0.1 port, from YAML text, and
// always closes it. The port is picked by binding it first: the configuration requires a real port
// number.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { parse, stringify } from 'yaml';
import { AdminApi } from '../../src/admin/admin-api.js';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadConfig } from '../../src/config/load.js';
import { propertyTable } from '../../src/config/property-table.js';
import type { AuthOptions } from '../../src/auth/auth-services.js';
import type { ConnectionLimits } from '../../src/server/protocol-server.js';
import { MODULES } from '../../src/modules/registry.js';
import type { Module } from '../../src/plan/module.js';
import { configChecks } from '../../src/server/config-checks.js';
import { Server } from '../../src/server/server.js';

export interface RunningServer {
  readonly server: Server;
  readonly port: number;
  readonly url: string;
  /** What the server wrote to its error stream (when no errorLogFilePath is configured). */
  readonly stderr: () => string;
  /** Replaces the configuration file (same port) for the next reload. */
  rewrite(yaml: string): void;
  close(): Promise<void>;
}

// The ports handed out lie below the kernel's ephemeral range, where no outgoing connection (of
// this file or of one running beside it) can take one between the probe and the server's listen.
const LOWEST = 20_000;
const EPHEMERAL = (() => {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
  } catch {
    return undefined;
  }
})();

/** Listens on 127.0.0.1:`port` (0: any) and closes again: the port, or undefined when taken. */
function probe(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (e: NodeJS.ErrnoException) =>
      e.code === 'EADDRINUSE' || e.code === 'EACCES' ? resolve(undefined) : reject(e),
    );
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function freePort(): Promise<number> {
  const below = EPHEMERAL !== undefined && EPHEMERAL > LOWEST + 1000 ? EPHEMERAL : undefined;
  for (;;) {
    const port = await probe(
      below === undefined ? 0 : LOWEST + Math.floor(Math.random() * (below - LOWEST)),
    );
    // A closed probe's port can come back at once: an admin port and the server's own were the
    // same once, and the second listener failed.
    if (port === undefined || handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
}

/** Ports this process's freePort gave out, never given twice. */
const handedOut = new Set<number>();

/** `count` distinct free ports (freePort never gives one twice). */
export async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) ports.push(await freePort());
  return ports;
}

/**
 * `yaml` is a configuration without `global.port`; one on 127.0.0.1 is added, or on every local
 * address (dual-stack, still reached only through loopback here) with `allAddresses`, or as
 * `listen` writes it (`[::1]:PORT`).
 */
export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  limits?: ConnectionLimits;
  allAddresses?: boolean;
  listen?: (port: number) => string;
  auth?: AuthOptions;
  /** The modules `loadModules` may name (default: the registry's), their checks run at load. */
  modules?: readonly Module[];
}

export async function startServer(
  yaml: string,
  options: StartOptions = {},
): Promise<RunningServer> {
  const port = await freePort();
  const listen = options.listen?.(port) ?? (options.allAddresses ? port : `127.0.0.1:${port}`);
  const dir = mkdtempSync(join(tmpdir(), 'portico-e2e-'));
  const file = join(dir, 'portico.yaml');
  const write = (text: string) => {
    const doc = (parse(text) ?? {}) as { global?: Record<string, unknown> };
    doc.global = { port: listen, ...(doc.global ?? {}) };
    writeFileSync(file, stringify(doc));
  };
  write(yaml);
  const env = options.env ?? process.env;
  let errors = '';
  const stderr = new PassThrough();
  stderr.on('data', (d: Buffer) => (errors += d.toString()));
  let server: Server;
  try {
    const checks = configChecks(options.modules);
    // Read against the build's modules and the test's own (the server gets only `modules`).
    const extra = (options.modules ?? []).filter((m) => !MODULES.includes(m));
    const properties = propertyTable([...MODULES, ...extra]);
    const loaded = await loadConfig(file, { env, properties, checks });
    if (!loaded.config)
      throw new Error(
        `invalid test configuration:\n${loaded.diagnostics.map(formatDiagnostic).join('\n')}`,
      );
    server = await Server.start(loaded.config, {
      stderr,
      reloadSource: () => loadConfig(file, { env, properties, checks }),
      controlPlane: (s) => new AdminApi(s),
      ...(options.modules ? { modules: options.modules } : {}),
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.auth ? { auth: options.auth } : {}),
    });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    stderr: () => errors,
    rewrite: write,
    close: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
