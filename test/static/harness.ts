// A real node:http server on 127.0.0.1 that runs one static-files stage per request, with a
// minimal Ctx: the stand-alone rig for the static module's tests. It is the only place that may
// write a response without respond.ts: it renders a thrown HttpError as a bare status.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withDefaults } from '../../src/config/defaults.js';
import type { Settings } from '../../src/config/properties.js';
import { isHttpError } from '../../src/http/http-error.js';
import { sanitizePath } from '../../src/http/paths.js';
import { StaticFiles, type StaticFilesOptions } from '../../src/static/static-files.js';
import { ctxFor } from '../helpers/ctx.js';

export interface Rig {
  readonly url: string;
  readonly port: number;
  readonly files: StaticFiles;
  /** Errors the stage threw that were not HttpError (a failed test should show them). */
  readonly unexpected: unknown[];
  /** Resolves when every request seen so far has finished in the stage. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

export async function startRig(
  settings: Settings,
  options: StaticFilesOptions = {},
  files = new StaticFiles(options),
): Promise<Rig> {
  const stage = files.stage(withDefaults(settings));
  const unexpected: unknown[] = [];
  const running = new Set<Promise<void>>();
  const server = http.createServer((req, res) => {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const ctx = ctxFor(
      req,
      res,
      settings,
      sanitizePath(q < 0 ? target : target.slice(0, q), false),
      q < 0 ? '' : target.slice(q),
    );
    const run = (async () => {
      try {
        await stage(ctx, async () => {
          throw new Error('the static stage called next()');
        });
      } catch (error) {
        if (!isHttpError(error)) unexpected.push(error);
        if (res.headersSent) return void res.destroy();
        const status = isHttpError(error) ? error.status : 500;
        res.writeHead(status, isHttpError(error) ? error.headers.flat() : []);
        res.end();
      }
    })();
    running.add(run);
    void run.finally(() => running.delete(run));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    files,
    unexpected,
    idle: async () => {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      files.close();
    },
  };
}

/** A temporary directory, removed by the returned function. */
export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), `portico-static-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
