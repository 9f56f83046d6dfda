// Headless Chromium for the browser tests and the documentation screenshots. Each run gets a fresh
// profile directory (removed afterwards) and a hard time limit; the browser's own background
// traffic (updates, sync, field trials) is switched off, so only the page asked for is fetched.
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

const NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

const FLAGS = [
  '--headless',
  '--no-sandbox', // tests often run as root, where Chromium's sandbox refuses to start
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const DEFAULT_TIMEOUT_MS = 30_000;

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The browser: `CHROMIUM_PATH` when set, otherwise the first of the usual names on PATH. */
export function findChromium(): string | undefined {
  const override = process.env.CHROMIUM_PATH;
  if (override) return isExecutable(override) ? override : undefined;
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  return dirs.flatMap((dir) => NAMES.map((name) => join(dir, name))).find(isExecutable);
}

/** Runs Chromium with `args` and resolves with its standard output. */
async function run(binary: string, args: string[], timeoutMs: number): Promise<string> {
  const profile = mkdtempSync(join(tmpdir(), 'portico-chromium-'));
  try {
    return await new Promise<string>((resolve, reject) => {
      // Its own process group, so a run that hangs is killed with its renderer and GPU children.
      const child = spawn(binary, [...FLAGS, `--user-data-dir=${profile}`, ...args], {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
        reject(new Error(`Chromium did not finish within ${timeoutMs} ms: ${args.join(' ')}`));
      }, timeoutMs);
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve(stdout);
        else
          reject(
            new Error(
              `Chromium exited with ${code ?? signal}: ${args.join(' ')}\n${stderr.slice(-2000)}`,
            ),
          );
      });
    });
  } finally {
    rmSync(profile, { recursive: true, force: true, maxRetries: 3 });
  }
}

/** The page's DOM after it loaded, serialized as HTML. */
export function dumpDom(
  binary: string,
  url: string,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<string> {
  return run(binary, ['--dump-dom', url], timeoutMs);
}

/** Saves a PNG of the page's viewport, `width`×`height` CSS pixels (one image pixel each), to `file`. */
export async function screenshot(
  binary: string,
  url: string,
  file: string,
  size: { width: number; height: number },
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<void> {
  const args = [
    '--hide-scrollbars',
    '--force-device-scale-factor=1',
    `--window-size=${size.width},${size.height}`,
    `--screenshot=${file}`,
    url,
  ];
  await run(binary, args, timeoutMs);
}
