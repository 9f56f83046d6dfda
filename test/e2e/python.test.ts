// Python applications as their users meet them (issue 13): a real Flask application through
// `wsgi` and `wsgid`, a real Starlette application through `asgi` (HTTP, WebSocket over HTTP/1.1
// and HTTP/2, lifespan), applications that fail to import, a process killed mid-request, reloads
// under load, and no Python process left behind. Debian's python3-flask and python3-starlette
// belong to /usr/bin/python3; a laptop without them skips the framework tests, CI installs them.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as http2Connect, constants } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { request } from '../helpers/http.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY } from '../helpers/tls.js';
import { bridges, PYTHON, pythonWith } from '../helpers/python.js';
import { logged, until } from '../helpers/wait.js';

const FIXTURES = new URL('../fixtures/python/', import.meta.url).pathname;

const FRAMEWORKS = pythonWith('flask, starlette');
if (process.env.CI && FRAMEWORKS === undefined)
  throw new Error('CI needs python3-flask and python3-starlette (see .ci/run)');

async function getJson(port: number, path: string, headers?: Record<string, string>) {
  const r = await request(port, path, headers ? { headers } : {});
  assert.equal(r.status, 200, r.text);
  return JSON.parse(r.text) as Record<string, unknown>;
}

function multipart(field: string, name: string, data: Buffer): { body: Buffer; type: string } {
  const boundary = '----portico' + Math.random().toString(16).slice(2);
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

describe(
  'Flask through wsgi and wsgid',
  { skip: FRAMEWORKS === undefined && 'no Python with Flask' },
  () => {
    let wsgid: RunningServer;
    let wsgi: RunningServer;
    const app = join(FIXTURES, 'flask_app.py');
    before(async () => {
      const conf = (mode: string) =>
        `global:\n  loadModules: [${mode}]\n  pythonExecutable: ${FRAMEWORKS}\n  ${mode}ApplicationPath: ${app}\n  ${mode}Path: /app\n`;
      wsgid = await startServer(conf('wsgid'));
      wsgi = await startServer(conf('wsgi'));
    });
    after(async () => {
      await wsgid?.close();
      await wsgi?.close();
    });

    it('routes under the prefix with SCRIPT_NAME and PATH_INFO, query strings, and leaves other paths alone', async () => {
      for (const [server, threads] of [
        [wsgid, false],
        [wsgi, true],
      ] as const) {
        const info = await getJson(server.port, '/app/info?a=1&a=2&b=%C3%A9', {
          host: 'site.test',
        });
        assert.equal(info.script_name, '/app');
        assert.equal(info.path_info, '/info');
        assert.deepEqual(info.query, { a: ['1', '2'], b: ['é'] });
        assert.equal(info.multithread, threads);
        assert.equal(info.multiprocess, !threads);
        // Werkzeug shows the query as an IRI.
        assert.equal(info.url, 'http://site.test/app/info?a=1&a=2&b=é');
        assert.equal(info.remote, '127.0.0.1');
        assert.equal((await request(server.port, '/app/')).text, 'flask index');
        // Not under /app: the static handler's 404, not Flask's.
        const other = await request(server.port, '/application/info');
        assert.equal(other.status, 404);
        assert.doesNotMatch(other.text, /flask/i);
      }
    });

    it('takes JSON and form posts, and a 10 MB multipart upload', async () => {
      const json = await request(wsgid.port, '/app/json', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ a: [1, 2], b: 'ü' }),
      });
      assert.deepEqual(JSON.parse(json.text).got, { a: [1, 2], b: 'ü' });
      const form = await request(wsgi.port, '/app/form', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'x=1&y=two+words',
      });
      assert.deepEqual(JSON.parse(form.text).form, { x: '1', y: 'two words' });
      const data = Buffer.alloc(10 * 1024 * 1024);
      for (let i = 0; i < data.length; i += 4096) data.writeUInt32BE(i, i);
      const { body, type } = multipart('file', 'big.bin', data);
      const up = await request(wsgid.port, '/app/upload', {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      });
      const sha = execFileSync('sha256sum', { input: data }).toString().split(' ')[0];
      assert.deepEqual(JSON.parse(up.text), { name: 'big.bin', size: data.length, sha256: sha });
    });

    it('streams a generator response as it is produced, a 10 MB one whole, and a single 20 MB chunk', async () => {
      const res = await fetch(`${wsgid.url}/app/stream?n=4&pause=0.3`);
      const reader = res.body!.getReader();
      const first = await reader.read();
      const firstAt = Date.now();
      assert.match(Buffer.from(first.value!).toString(), /^line 0\n/);
      let rest = '';
      for (let r = await reader.read(); !r.done; r = await reader.read())
        rest += Buffer.from(r.value).toString();
      assert.match(rest, /line 3\n$/);
      // The first line came while the generator slept between the others (3 × 0.3 s), not with
      // them at its end: a busy machine only makes the gap longer.
      const gap = Date.now() - firstAt;
      assert.ok(gap >= 600, `the rest ${gap} ms after the first line`);
      const big = await request(wsgi.port, '/app/big');
      assert.equal(big.body.length, 160 * 65536);
      const huge = await request(wsgid.port, '/app/huge');
      assert.equal(huge.body.length, 20 * 1024 * 1024);
      assert.ok(huge.body.every((b) => b === 0x79));
    });

    it('holds a generator back while its client reads nothing, and stops it when the client leaves', async () => {
      // `wsgi`: one process, so /produced reads the same counter as /endless.
      const produced = async () =>
        JSON.parse((await request(wsgi.port, '/app/produced')).text) as {
          blocks: number;
          closed: boolean;
        };
      const socket = connect(wsgi.port, '127.0.0.1');
      await once(socket, 'connect');
      socket.write('GET /app/endless HTTP/1.1\r\nHost: x\r\n\r\n');
      socket.pause();
      await until(produced, { ok: (p) => p.blocks > 0, what: 'the generator started' });
      // What must not happen has no event: left unchecked, 1.5 s would make gigabytes.
      await sleep(1500);
      const held = await produced();
      // The window (256 KiB) and the sockets' buffers, not 6.5 GB.
      assert.ok(held.blocks * 65536 < 64 * 1024 * 1024, `${held.blocks} blocks produced`);
      assert.equal(held.closed, false);
      socket.destroy();
      await until(produced, { ok: (p) => p.closed, what: 'the generator closed' });
    });

    it('stops the application’s work when the client goes away mid-stream', async () => {
      const controller = new AbortController();
      const res = await fetch(`${wsgid.url}/app/stream?n=100000&pause=0.01`, {
        signal: controller.signal,
      });
      await res.body!.getReader().read();
      controller.abort();
      const inFlight = () =>
        (
          wsgid.server.status() as {
            modules: { wsgid: { processes: { requests_in_flight: number }[] }[] };
          }
        ).modules.wsgid[0]!.processes.reduce((n, p) => n + p.requests_in_flight, 0);
      await until(() => inFlight() === 0, { what: 'no request in flight' });
    });

    it('cookies, redirects, the application’s own 404, and an exception as a 500 with its traceback in the error log', async () => {
      const c = await request(wsgid.port, '/app/cookie', { headers: { cookie: 'flavour=plain' } });
      assert.equal(JSON.parse(c.text).seen, 'plain');
      const cookies = c.headers['set-cookie'] as string[];
      assert.equal(cookies.length, 2);
      assert.match(cookies[0]!, /^flavour=oatmeal; HttpOnly; Path=\//);
      const go = await request(wsgid.port, '/app/go');
      assert.equal(go.status, 302);
      assert.equal(go.headers.location, '/app/info?from=go');
      const missing = await request(wsgid.port, '/app/missing');
      assert.equal(missing.status, 404);
      assert.match(missing.text, /The requested URL was not found on the server/);
      const boom = await request(wsgi.port, '/app/boom');
      assert.equal(boom.status, 500);
      assert.doesNotMatch(boom.text, /kaboom/);
      await logged(wsgi.stderr, /ValueError: kaboom in flask/);
      assert.match(wsgi.stderr(), /File ".*flask_app\.py", line \d+, in boom/);
    });

    it('runs one process per CPU for wsgid, and shares requests between them', async () => {
      const pids = new Set<unknown>();
      await Promise.all(
        Array.from({ length: 40 }, async () =>
          pids.add((await getJson(wsgid.port, '/app/info')).pid),
        ),
      );
      const status = wsgid.server.status() as { modules: { wsgid: { processes: unknown[] }[] } };
      const count = status.modules.wsgid[0]!.processes.length;
      assert.equal(count, (await import('node:os')).availableParallelism());
      if (count > 1) assert.ok(pids.size > 1, 'every request went to one process');
    });
  },
);

describe(
  'Starlette through asgi',
  { skip: FRAMEWORKS === undefined && 'no Python with Starlette' },
  () => {
    let server: RunningServer;
    let dir: string;
    let lifespanLog: string;
    let secure: string;
    const app = join(FIXTURES, 'starlette_app.py');
    const h2 = () => http2Connect(secure, { rejectUnauthorized: false });
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'portico-asgi-'));
      lifespanLog = join(dir, 'lifespan.log');
      process.env.LIFESPAN_LOG = lifespanLog;
      const sport = await freePort();
      secure = `https://127.0.0.1:${sport}`;
      server = await startServer(
        `global:\n  loadModules: [asgi]\n  pythonExecutable: ${FRAMEWORKS}\n  asgiApplicationPath: ${app}\n  asgiPath: /api\n` +
          `  secure: true\n  disableToHTTPSRedirect: true\n  sport: "127.0.0.1:${sport}"\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n` +
          `  http2Settings:\n    enableConnectProtocol: true\n`,
      );
    });
    after(async () => {
      await server?.close();
      delete process.env.LIFESPAN_LOG;
      rmSync(dir, { recursive: true, force: true });
    });

    it('routes under root_path with lifespan state, query strings, posts, cookies, redirects, 404 and an exception', async () => {
      const info = await getJson(server.port, '/api/info?x=1&y=%C3%A9');
      assert.equal(info.root_path, '/api');
      assert.equal(info.scope_path, '/info');
      assert.deepEqual(info.query, { x: '1', y: 'é' });
      assert.equal(info.http_version, '1.1');
      assert.equal(info.started, 1, 'lifespan startup ran once before the first request');
      assert.equal(info.greeting, 'hello from lifespan', 'the lifespan state, in the request');
      const echo = await request(server.port, '/api/echo', { method: 'POST', body: 'hello body' });
      assert.equal(echo.text, 'hello body');
      const json = await request(server.port, '/api/json', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"k":[1,2]}',
      });
      assert.deepEqual(JSON.parse(json.text), { got: { k: [1, 2] } });
      const big = Buffer.alloc(10 * 1024 * 1024, 7);
      const bigEcho = await request(server.port, '/api/echo', { method: 'POST', body: big });
      assert.equal(bigEcho.body.length, big.length);
      assert.ok(bigEcho.body.equals(big));
      const c = await request(server.port, '/api/cookie', { headers: { cookie: 'k=old' } });
      assert.equal(JSON.parse(c.text).seen, 'old');
      assert.match(String(c.headers['set-cookie']), /^k=v; Path=\/; SameSite=lax/);
      const go = await request(server.port, '/api/go');
      assert.equal(go.status, 302);
      assert.equal(go.headers.location, '/elsewhere');
      assert.equal((await request(server.port, '/api/nothing')).status, 404);
      const boom = await request(server.port, '/api/boom');
      assert.equal(boom.status, 500);
      await logged(server.stderr, /RuntimeError: kaboom in starlette/);
    });

    it('streams a StreamingResponse, over HTTP/1.1 and HTTP/2 alike', async () => {
      const r = await request(server.port, '/api/stream?n=20');
      assert.equal(r.headers['transfer-encoding'], 'chunked');
      assert.equal(r.text.split('\n').filter(Boolean).length, 20);
      const session = h2();
      try {
        const stream = session.request({ ':path': '/api/info' });
        let body = '';
        stream.setEncoding('utf8').on('data', (d: string) => (body += d));
        await once(stream, 'end');
        assert.equal(JSON.parse(body).http_version, '2');
      } finally {
        session.close();
      }
    });

    it('echoes WebSocket messages over HTTP/1.1, closes with the application’s code, and refuses with 403', async () => {
      const ws = new WebSocket(`ws://127.0.0.1:${server.port}/api/ws`);
      await once(ws, 'open');
      ws.send('hi');
      const [text] = (await once(ws, 'message')) as [Buffer];
      assert.equal(text.toString(), 'echo hi');
      ws.send(Buffer.from([1, 2, 3]));
      const [bytes] = (await once(ws, 'message')) as [Buffer];
      assert.deepEqual([...bytes], [3, 2, 1]);
      const big = 'z'.repeat(1024 * 1024);
      ws.send(big);
      const [echoed] = (await once(ws, 'message')) as [Buffer];
      assert.equal(echoed.length, big.length + 5);
      ws.send('close');
      const [code] = (await once(ws, 'close')) as [number];
      assert.equal(code, 4001);
      const refused = new WebSocket(`ws://127.0.0.1:${server.port}/api/refuse`);
      const [, res] = (await once(refused, 'unexpected-response')) as [
        unknown,
        { statusCode: number },
      ];
      assert.equal(res.statusCode, 403);
      refused.on('error', () => undefined).terminate();
    });

    it('echoes WebSocket messages over HTTP/2 extended CONNECT', async () => {
      const session = h2();
      after(() => session.close());
      await once(session, 'remoteSettings');
      const stream = session.request({
        ':method': 'CONNECT',
        ':protocol': 'websocket',
        ':path': '/api/ws',
        ':scheme': 'https',
        'sec-websocket-version': '13',
      });
      const [headers] = (await once(stream, 'response')) as [Record<string, unknown>];
      assert.equal(headers[':status'], 200);
      // One masked text frame, "h2".
      const mask = Buffer.from([1, 2, 3, 4]);
      const payload = Buffer.from('h2').map((b, i) => b ^ mask[i % 4]!);
      stream.write(Buffer.concat([Buffer.from([0x81, 0x80 | 2]), mask, payload]));
      const [frame] = (await once(stream, 'data')) as [Buffer];
      assert.equal(frame[0], 0x81);
      assert.equal(frame.subarray(2, 2 + frame[1]!).toString(), 'echo h2');
      stream.close(constants.NGHTTP2_CANCEL);
      session.close();
    });

    it('refuses to start when the lifespan startup fails, with the application’s message', async () => {
      const file = join(dir, 'failing_lifespan.py');
      writeFileSync(
        file,
        'import contextlib\nfrom starlette.applications import Starlette\n\n' +
          '@contextlib.asynccontextmanager\nasync def lifespan(app):\n    raise RuntimeError("the database is down")\n    yield\n\n' +
          'application = Starlette(lifespan=lifespan)\n',
      );
      await assert.rejects(
        startServer(
          `global:\n  loadModules: [asgi]\n  pythonExecutable: ${FRAMEWORKS}\n  asgiApplicationPath: ${file}\n`,
        ),
        /asgi application .*failing_lifespan\.py could not start: [^]*the database is down/,
      );
      assert.deepEqual(bridges(file), []);
    });

    it('runs the lifespan shutdown when the server stops', async () => {
      const other = await startServer(
        `global:\n  loadModules: [asgi]\n  pythonExecutable: ${FRAMEWORKS}\n  asgiApplicationPath: ${app}\n`,
      );
      const { pid } = await getJson(other.port, '/info');
      await other.close();
      assert.match(readFileSync(lifespanLog, 'utf8'), new RegExp(`shutdown ${String(pid)}\\n`));
    });
  },
);

describe(
  'Python applications: starting, failing, restarting, reloading',
  { skip: PYTHON === undefined && 'no python3' },
  () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'portico-python-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    const plainApp = (name: string) => {
      const file = join(dir, `${name}.py`);
      writeFileSync(file, readFileSync(join(FIXTURES, 'plain_wsgi.py')));
      return file;
    };

    it('refuses to start an application that cannot be imported, naming the interpreter and quoting Python; no process is left', async () => {
      const cases: [string, RegExp][] = [
        [
          'import surely_not_installed_module\n',
          /ModuleNotFoundError: No module named 'surely_not_installed_module'/,
        ],
        ['def broken(:\n', /SyntaxError/],
        ['x = 1\n', /defines no `application`/],
      ];
      for (const [source, expected] of cases) {
        const file = join(dir, `broken_${cases.findIndex((c) => c[0] === source)}.py`);
        writeFileSync(file, source);
        await assert.rejects(
          startServer(
            `global:\n  loadModules: [wsgid]\n  pythonExecutable: ${PYTHON}\n  wsgidApplicationPath: ${file}\n`,
          ),
          (e: Error) => {
            assert.match(e.message, expected);
            assert.match(e.message, /the interpreter was \/\S+python\S*, Python 3\.\d+/);
            assert.match(e.message, new RegExp(`wsgid application ${file} could not start`));
            return true;
          },
        );
        assert.deepEqual(bridges(file), []);
      }
      await assert.rejects(
        startServer(
          `global:\n  loadModules: [asgi]\n  pythonExecutable: /nonexistent/python9\n  asgiApplicationPath: ${plainApp('x')}\n`,
        ),
        /:\d+:\d+: global\.pythonExecutable: \/nonexistent\/python9: not an executable file/,
      );
      // A file that is not there is a configuration error, with its position.
      await assert.rejects(
        startServer(
          `global:\n  loadModules: [asgi]\n  asgiApplicationPath: ${join(dir, 'missing.py')}\n`,
        ),
        /:\d+:\d+: global\.asgiApplicationPath: .*missing\.py: no such file or directory/,
      );
    });

    it(
      'names the interpreter that has a missing package, when the one on the PATH does not',
      {
        skip:
          !(
            FRAMEWORKS === '/usr/bin/python3' &&
            spawnSync('python3', ['-c', 'import starlette']).status === 1
          ) && "python3 on the PATH is Debian's, or has Starlette itself",
      },
      async () => {
        const file = join(dir, 'needs_starlette.py');
        writeFileSync(file, 'import starlette\napplication = None\n');
        await assert.rejects(
          startServer(`global:\n  loadModules: [asgi]\n  asgiApplicationPath: ${file}\n`),
          /No module named 'starlette'\n.*\/usr\/bin\/python3 has "starlette": set pythonExecutable: \/usr\/bin\/python3/,
        );
      },
    );

    it('takes a chunked body, HEAD, wsgi.file_wrapper and start_response with exc_info; a header a response cannot carry is a 502', async () => {
      const file = plainApp('protocol');
      const server = await startServer(
        `global:\n  loadModules: [wsgid]\n  pythonExecutable: ${PYTHON}\n  wsgidApplicationPath: ${file}\n`,
      );
      try {
        // Chunked: no Content-Length, so no CONTENT_LENGTH, and wsgi.input reads to the end.
        const chunked = await new Promise<string>((resolve, reject) => {
          const socket = connect(server.port, '127.0.0.1', () =>
            socket.write(
              'POST /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
            ),
          );
          let data = '';
          socket.setEncoding('latin1').on('data', (d: string) => (data += d));
          socket.on('end', () => resolve(data)).on('error', reject);
        });
        assert.match(chunked, /^HTTP\/1\.1 200 /);
        assert.match(chunked, /\r\nx-content-length: absent\r\n/i);
        assert.match(chunked, /hello world/);
        // PEP 3333: PATH_INFO holds the path's UTF-8 bytes as Latin-1 characters.
        const decoded = await request(server.port, '/caf%C3%A9');
        assert.match(decoded.text, / \/cafÃ©\n$/);
        const head = await request(server.port, '/echo', { method: 'HEAD' });
        assert.equal(head.status, 200);
        assert.equal(head.body.length, 0);
        const wrapped = await request(server.port, '/file');
        assert.equal(wrapped.text, readFileSync(file, 'utf8'));
        const retried = await request(server.port, '/exc-info');
        assert.equal(retried.status, 503);
        assert.equal(retried.headers['retry-after'], '5');
        assert.equal(retried.text, 'later');
        const bad = await request(server.port, '/bad-header');
        assert.equal(bad.status, 502);
        assert.doesNotMatch(bad.text, /never/);
        assert.match(
          server.stderr(),
          /\[upstream-failed\] wsgid .*protocol\.py: the application's response head was refused/,
        );
      } finally {
        await server.close();
      }
    });

    it('replaces a process that dies: its request gets 502, the others serve, and it serves again', async () => {
      const file = plainApp('dies');
      const server = await startServer(
        `global:\n  loadModules: [wsgi]\n  pythonExecutable: ${PYTHON}\n  wsgiApplicationPath: ${file}\n`,
      );
      try {
        const before = await request(server.port, '/hello');
        assert.equal(before.status, 200);
        const slow = request(server.port, '/slow');
        // /slow answers nothing until its process ends: the exit comes while it is in flight.
        await until(
          () =>
            (
              server.server.status() as {
                modules: { wsgi: { processes: { requests_in_flight: number }[] }[] };
              }
            ).modules.wsgi[0]!.processes[0]!.requests_in_flight,
          { ok: (n) => n === 1, what: '/slow in flight' },
        );
        const died = await request(server.port, '/exit');
        assert.equal(died.status, 502);
        assert.equal((await slow).status, 502, 'the request in flight on the dead process');
        // The next request waits for the new process instead of failing.
        const again = await request(server.port, '/hello');
        assert.equal(again.status, 200);
        assert.notEqual(again.text.split(' ')[1], before.text.split(' ')[1]);
        assert.match(server.stderr(), /exited with code 3; a new process starts/);
      } finally {
        await server.close();
      }
      assert.deepEqual(bridges(file), []);
    });

    it('gives up the work of a client that left while its process restarted: nothing stays in flight', async () => {
      // Slow to import (the application's own second), so requests wait for the new processes; a
      // response of 2 MiB, beyond what a process may send before the client's reading is credited
      // back.
      const file = join(dir, 'restarting.py');
      writeFileSync(
        file,
        'import time\ntime.sleep(1)\ndef application(environ, start_response):\n    start_response("200 OK", [("Content-Type", "application/octet-stream")])\n    return (b"x" * 65536 for _ in range(32))\n',
      );
      const server = await startServer(
        `global:\n  loadModules: [wsgid]\n  pythonExecutable: ${PYTHON}\n  wsgidApplicationPath: ${file}\n`,
      );
      const inFlight = () =>
        (
          server.server.status() as {
            modules: { wsgid: { processes: ({ requests_in_flight: number } | null)[] }[] };
          }
        ).modules.wsgid[0]!.processes.reduce((n, p) => n + (p?.requests_in_flight ?? 0), 0);
      try {
        for (const pid of bridges(file)) process.kill(pid, 'SIGKILL');
        // Until Portico has seen them die: the requests then wait for the new ones.
        await logged(server.stderr, /a new process starts/);
        const received = server.server.requestsTotal;
        const sockets = await Promise.all(
          [1, 2].map(async () => {
            const socket = connect(server.port, '127.0.0.1');
            await once(socket, 'connect');
            socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
            return socket;
          }),
        );
        // Both requests wait for a process when their clients leave.
        await until(() => server.server.requestsTotal - received, {
          ok: (n) => n === 2,
          what: 'both requests received',
        });
        for (const socket of sockets) socket.destroy();
        // Both processes serve again: a process stuck on a left client's response would not.
        const answers = await Promise.all([1, 2, 3, 4].map(() => request(server.port, '/small')));
        assert.deepEqual(
          answers.map((r) => r.status),
          [200, 200, 200, 200],
        );
        assert.equal(inFlight(), 0);
      } finally {
        await server.close();
      }
    });

    it('serves two applications on two hosts at once, each in its own processes', async () => {
      const one = plainApp('one');
      const two = plainApp('two');
      const server = await startServer(
        `global:\n  loadModules: [wsgi, asgi]\n  pythonExecutable: ${PYTHON}\n` +
          `hosts:\n  - domain: one.test\n    wsgiApplicationPath: ${one}\n  - domain: two.test\n    wsgiApplicationPath: ${two}\n`,
      );
      try {
        const a = await request(server.port, '/x', { headers: { host: 'one.test' } });
        const b = await request(server.port, '/y', { headers: { host: 'two.test' } });
        assert.match(a.text, /^plain \d+ \/x\n$/);
        assert.match(b.text, /^plain \d+ \/y\n$/);
        assert.notEqual(a.text.split(' ')[1], b.text.split(' ')[1]);
        assert.equal(bridges(one).length, 1);
        assert.equal(bridges(two).length, 1);
        assert.equal(
          (await request(server.port, '/x', { headers: { host: 'three.test' } })).status,
          404,
        );
      } finally {
        await server.close();
      }
      assert.deepEqual([...bridges(one), ...bridges(two)], []);
    });

    it('reloads under load without a failed request, runs the new code, refuses a broken application with 422, and leaves no process after 100 reloads', async () => {
      const file = plainApp('reloaded');
      const conf = (path: string, extra = '') =>
        `global:\n  loadModules: [wsgid]\n  pythonExecutable: ${PYTHON}\n  wsgidApplicationPath: ${file}\n  wsgidPath: ${path}\n${extra}`;
      const server = await startServer(conf('/'));
      try {
        let failures = 0;
        let served = 0;
        let running = true;
        // /moved/x is served under either mount point.
        const load = Array.from({ length: 8 }, async () => {
          while (running) {
            const r = await request(server.port, '/moved/x');
            if (r.status === 200) served++;
            else failures++;
          }
        });
        for (let i = 0; i < 10; i++) {
          // The mount point moves too: requests follow the configuration they began with.
          server.rewrite(conf(i % 2 === 0 ? '/moved' : '/'));
          assert.equal((await server.server.reloadFromSource('test')).ok, true);
          // Requests run between reloads, under each configuration.
          const seen = served + failures;
          await until(() => served + failures > seen, { what: 'a request after the reload' });
        }
        running = false;
        await Promise.all(load);
        assert.equal(failures, 0);
        assert.ok(served > 50);
        // A reload runs the application's current code.
        writeFileSync(file, readFileSync(file, 'utf8').replace("'plain'", "'changed'"));
        assert.equal((await server.server.reloadFromSource('test')).ok, true);
        assert.match((await request(server.port, '/x')).text, /^changed /);
        // environmentVariables reach the new processes, which start before Portico sets them.
        server.rewrite(conf('/', '  environmentVariables:\n    APP_NAME: renamed\n'));
        assert.equal((await server.server.reloadFromSource('test')).ok, true);
        assert.match((await request(server.port, '/x')).text, /^renamed /);
        server.rewrite(conf('/'));
        // A broken application keeps the running one.
        const good = readFileSync(file, 'utf8');
        writeFileSync(file, 'import surely_not_installed_module\n');
        const refused = await server.server.reloadFromSource('test');
        assert.equal(refused.ok, false);
        assert.equal(!refused.ok && refused.status, 422);
        assert.match(
          !refused.ok ? refused.details.join('\n') : '',
          /No module named 'surely_not_installed_module'/,
        );
        assert.equal((await request(server.port, '/x')).status, 200);
        writeFileSync(file, good);
        for (let i = 0; i < 100; i++)
          assert.equal((await server.server.reloadFromSource('test')).ok, true);
        await until(
          () =>
            bridges(file).length ===
            (server.server.status() as { modules: { wsgid: { processes: unknown[] }[] } }).modules
              .wsgid[0]!.processes.length,
          { what: 'as many bridge processes as the pool lists' },
        );
      } finally {
        // Portico sets environmentVariables in its own process, which is this one.
        delete process.env.APP_NAME;
        await server.close();
      }
      assert.deepEqual(bridges(file), []);
    });
  },
);
