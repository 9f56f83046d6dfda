// A loopback port whose listen queue is full and never drained: SYNs are dropped, so a connection
// attempt hangs as it does to a host that is down (Node accepts every connection, Python need not).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

export interface Blackhole {
  readonly port: number;
  readonly child: ChildProcess;
}

/** Undefined when `python` cannot be started (a laptop without it; CI must have it). */
export async function blackhole(python = 'python3'): Promise<Blackhole | undefined> {
  const script = [
    'import socket, sys',
    "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(0)",
    'port = s.getsockname()[1]; held = []',
    'for _ in range(8):',
    '    c = socket.socket(); c.setblocking(False)',
    "    try: c.connect(('127.0.0.1', port))",
    '    except BlockingIOError: pass',
    '    held.append(c)',
    'print(port, flush=True); sys.stdin.read()',
  ].join('\n');
  const child = spawn(python, ['-c', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const port = await Promise.race([
    once(child.stdout!, 'data').then(([chunk]) => Number(String(chunk).trim())),
    once(child, 'error').then(() => undefined),
  ]);
  if (port === undefined && process.env.CI) throw new Error(`CI must have ${python}`);
  return port === undefined ? undefined : { port, child };
}
