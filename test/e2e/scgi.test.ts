// SCGI as an application meets it: a small SCGI server in Python (standard library only) that
// answers with what it received, over TCP and a Unix socket, behind a real Portico.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';

const python = spawnSync('python3', ['--version']).status === 0;
if (!python && process.env.CI) throw new Error('CI needs python3');

const dir = mkdtempSync(join(tmpdir(), 'portico-scgi-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// Reads the netstring and the body, answers JSON of what it got; /fail answers no header block.
const APP = `
import json, os, socket, sys, socketserver
class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        length = b''
        while not length.endswith(b':'):
            length += self.rfile.read(1)
        headers = self.rfile.read(int(length[:-1]))
        assert self.rfile.read(1) == b','
        items = headers.split(b'\\0')[:-1]
        env = {items[i].decode('latin-1'): items[i + 1].decode('latin-1') for i in range(0, len(items), 2)}
        body = self.rfile.read(int(env['CONTENT_LENGTH']))
        if env['PATH_INFO'] == '/fail':
            self.wfile.write(b'no header block here')
            return
        out = json.dumps({'env': env, 'first': items[0].decode(), 'body': body.decode()}).encode()
        self.wfile.write(b'Status: 201 Created\\r\\nContent-Type: application/json\\r\\nX-App: scgi\\r\\n\\r\\n' + out)
class Tcp(socketserver.ThreadingTCPServer): allow_reuse_address = True
class Unix(socketserver.ThreadingUnixStreamServer): pass
server = Tcp(('127.0.0.1', int(sys.argv[1])), Handler) if sys.argv[1].isdigit() else Unix(sys.argv[1], Handler)
print('listening', flush=True)
server.serve_forever()
`;
const appFile = join(dir, 'app.py');
const spooledFiles = () => readdirSync(tmpdir()).filter((f) => f.startsWith('portico-body-'));
writeFileSync(appFile, APP);

describe('SCGI', { skip: !python && 'python3 is not installed' }, () => {
  const children: ChildProcess[] = [];
  let tcp: RunningServer;
  let unix: RunningServer;
  let refused: RunningServer;
  before(async () => {
    const port = await freePort();
    const sock = join(dir, 'app.sock');
    // Each says so once it listens.
    await Promise.all(
      [String(port), sock].map((at) => {
        const child = spawn('python3', [appFile, at], { stdio: ['ignore', 'pipe', 'inherit'] });
        children.push(child);
        return once(child.stdout, 'data');
      }),
    );
    const config = (to: string) =>
      `global:\n  loadModules: [scgi]\n  scgiPath: /app\n  scgiTo: ${to}\n  environmentVariables:\n    APP_MODE: test\n    APP_TEXT: "café €"\n`;
    tcp = await startServer(config(`tcp://127.0.0.1:${port}/`));
    unix = await startServer(config(`unix://${sock}`));
    refused = await startServer(config(`tcp://127.0.0.1:${await freePort()}/`));
  });
  after(async () => {
    for (const child of children) child.kill();
    await Promise.all([tcp?.close(), unix?.close(), refused?.close()]);
  });

  it('sends the variables as a netstring with CONTENT_LENGTH first, then the body, over TCP and a Unix socket', async () => {
    for (const server of [tcp, unix]) {
      const r = await fetch(`${server.url}/app/items/3?x=1`, {
        method: 'POST',
        body: 'hello body',
        headers: { 'content-type': 'text/plain', proxy: 'http://attacker.test' },
      });
      assert.equal(r.status, 201);
      assert.equal(r.headers.get('x-app'), 'scgi');
      const got = (await r.json()) as { env: Record<string, string>; first: string; body: string };
      assert.equal(got.first, 'CONTENT_LENGTH');
      assert.equal(got.body, 'hello body');
      assert.equal(got.env.CONTENT_LENGTH, '10');
      assert.equal(got.env.SCGI, '1');
      assert.equal(got.env.PATH_INFO, '/items/3');
      assert.equal(got.env.QUERY_STRING, 'x=1');
      assert.equal(got.env.REQUEST_METHOD, 'POST');
      assert.equal(got.env.APP_MODE, 'test');
      // The application reads every value as Latin-1: a configured one's bytes are UTF-8.
      assert.equal(Buffer.from(got.env.APP_TEXT!, 'latin1').toString('utf8'), 'café €');
      assert.equal(got.env.HTTP_PROXY, undefined);
    }
  });

  it('leaves other paths alone, answers 503 when the application is not there and 502 for output without headers', async () => {
    assert.equal((await fetch(`${tcp.url}/elsewhere`)).status, 404);
    assert.equal((await fetch(`${refused.url}/app/x`)).status, 503);
    assert.equal((await fetch(`${tcp.url}/app/fail`)).status, 502);
  });

  it('reads a body without a length whole first and sends its real length', async () => {
    // Past the part kept in memory, so the rest goes through a temporary file.
    const big = 'x'.repeat(300 * 1024);
    for (const text of ['chunk', big]) {
      const r = await fetch(`${tcp.url}/app/x`, {
        method: 'POST',
        body: new ReadableStream({
          start(c) {
            c.enqueue(new TextEncoder().encode(text));
            c.close();
          },
        }),
        duplex: 'half',
      } as RequestInit);
      assert.equal(r.status, 201);
      const got = (await r.json()) as { env: Record<string, string>; body: string };
      assert.equal(got.env.CONTENT_LENGTH, String(text.length));
      assert.equal(got.body, text);
    }
    assert.deepEqual(spooledFiles(), [], 'the temporary file is gone from its directory');
  });
});
