// Real curl, run without blocking the event loop: the servers of most tests live in the test's own
// process, and a synchronous spawn would keep them from answering.
import { spawn } from 'node:child_process';

export interface CurlResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `curl ARGS`, with `input` on its standard input. */
export function curl(args: readonly string[], input?: string | Buffer): Promise<CurlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
