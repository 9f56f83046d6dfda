// PHP behind Portico as PHP users meet it: Debian's php-fpm over a Unix socket and TCP, started by
// the test with its own pool, and real clients. $_GET, $_POST, $_COOKIE, $_FILES (a 10 MB upload),
// PATH_INFO, header(), http_response_code(), redirects, sessions, a 10 MB streamed echo,
// REMOTE_USER after basic authentication, HTTPS=on over TLS, php-fpm recycling its workers
// (pm.max_requests) and restarted under load, hostile paths.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { curl } from '../helpers/curl.js';
import { request } from '../helpers/http.js';
import { FPM, startFpm, type Fpm } from '../helpers/php-fpm.js';
import { freePort, startServer, type RunningServer } from '../helpers/server.js';
import { SERVER_CERT, SERVER_KEY } from '../helpers/tls.js';
import { logged, until } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-fcgi-'));
const www = join(dir, 'www');
mkdirSync(join(www, 'app'), { recursive: true });
after(() => rmSync(dir, { recursive: true, force: true }));

const PHP: Record<string, string> = {
  'info.php': `<?php
header('Content-Type: application/json');
echo json_encode([
  'get' => $_GET, 'post' => $_POST, 'cookie' => $_COOKIE,
  'path_info' => $_SERVER['PATH_INFO'] ?? null, 'script' => $_SERVER['SCRIPT_NAME'],
  'uri' => $_SERVER['REQUEST_URI'], 'https' => $_SERVER['HTTPS'] ?? null,
  'user' => $_SERVER['REMOTE_USER'] ?? null, 'method' => $_SERVER['REQUEST_METHOD'],
  'proxy' => $_SERVER['HTTP_PROXY'] ?? null, 'host' => $_SERVER['HTTP_HOST'] ?? null,
  'app' => $_SERVER['APP_TEXT'] ?? null,
]);`,
  'upload.php': `<?php
$f = $_FILES['file'];
echo $f['name'], ' ', $f['size'], ' ', md5_file($f['tmp_name']), ' ', $_POST['note'];`,
  'status.php': `<?php http_response_code(418); header('X-Made-By: php'); echo "teapot";`,
  'redirect.php': `<?php header('Location: /elsewhere'); `,
  'session.php': `<?php session_save_path(sys_get_temp_dir()); session_start();
$_SESSION['n'] = ($_SESSION['n'] ?? 0) + 1; echo $_SESSION['n'];`,
  'big.php': `<?php for ($i = 0; $i < 10 * 1024; $i++) { echo str_repeat(chr(65 + $i % 26), 1024); flush(); }`,
  'stderr.php': `<?php error_log(str_repeat('e', 200)); echo 'ok';`,
  // The script's own 200 ms of work (a sleep in PHP), not a wait of the test.
  'slow.php': `<?php usleep(200000); echo 'slept';`,
  'fatal.php': `<?php undefined_function();`,
  'app/index.php': `<?php echo 'index of app';`,
};
for (const [name, code] of Object.entries(PHP)) writeFileSync(join(www, name), code);
writeFileSync(join(www, 'secret.txt'), 'not php');

describe('FastCGI with php-fpm', { skip: FPM === undefined && 'php-fpm is not installed' }, () => {
  let fpm: Fpm;
  let unixServer: RunningServer;
  let tcpServer: RunningServer;
  let secureServer: RunningServer;
  let sport: number;
  before(async () => {
    fpm = await startFpm(join(dir, 'main'));
    sport = await freePort();
    unixServer = await startServer(
      `global:\n  wwwroot: ${www}\n  loadModules: [fcgi]\n  fcgiScriptExtensions: [.php]\n  fcgiTo: unix://${fpm.socket}\n` +
        `  users:\n    - name: alice\n      pass: "$argon2id$v=19$m=19456,t=2,p=1$jatcrXK/j9HwQmwvi6X0SA$hIdvJjBANVqJveWsK92Q0bQoSWRKvAPaZy9yF8BnsQc"\n` +
        `  nonStandardCodes:\n    - scode: 401\n      regex: "^/info\\\\.php/private"\n` +
        `  environmentVariables:\n    APP_TEXT: "café €"\n`,
    );
    secureServer = await startServer(
      `global:\n  wwwroot: ${www}\n  loadModules: [fcgi]\n  fcgiScriptExtensions: [.php]\n  fcgiTo: unix://${fpm.socket}\n` +
        `  sport: "127.0.0.1:${sport}"\n  secure: true\n  cert: ${SERVER_CERT}\n  key: ${SERVER_KEY}\n`,
    );
    tcpServer = await startServer(
      `global:\n  wwwroot: ${www}\n  loadModules: [fcgi]\n  fcgiScriptExtensions: [.php]\n  fcgiTo: tcp://127.0.0.1:${fpm.port}/\n` +
        `  environmentVariables:\n    APP_TEXT: "café €"\n`,
    );
  });
  after(async () => {
    await unixServer?.close();
    await tcpServer?.close();
    await secureServer?.close();
    await fpm?.stop();
  });

  it('runs PHP over a Unix socket and TCP: $_GET, $_POST, $_COOKIE, PATH_INFO, REQUEST_URI; HTTP_PROXY never reaches PHP', async () => {
    for (const server of [unixServer, tcpServer]) {
      const r = await request(server.port, '/info.php/route/7?a=1&b=%C3%A9', {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          cookie: 'c1=v1; c2=v2',
          proxy: 'http://attacker.test:8080',
          host: 'site.test',
        },
        body: 'x=1&y=two',
      });
      assert.equal(r.status, 200, r.body.toString());
      const info = JSON.parse(r.body.toString()) as Record<string, unknown>;
      assert.deepEqual(info.get, { a: '1', b: 'é' });
      assert.deepEqual(info.post, { x: '1', y: 'two' });
      assert.deepEqual(info.cookie, { c1: 'v1', c2: 'v2' });
      assert.equal(info.path_info, '/route/7');
      assert.equal(info.script, '/info.php');
      assert.equal(info.uri, '/info.php/route/7?a=1&b=%C3%A9');
      assert.equal(info.proxy, null);
      assert.equal(info.host, 'site.test');
      assert.equal(info.https, null);
      // A configured value is text, sent as UTF-8.
      assert.equal(info.app, 'café €');
    }
  });

  it('takes a 10 MB multipart upload into $_FILES', async () => {
    const file = Buffer.alloc(10 * 1024 * 1024, 7);
    const form = new FormData();
    form.set('note', 'hello');
    form.set('file', new Blob([file]), 'ten.bin');
    const r = await fetch(`${unixServer.url}/upload.php`, { method: 'POST', body: form });
    const { createHash } = await import('node:crypto');
    assert.equal(
      await r.text(),
      `ten.bin ${file.length} ${createHash('md5').update(file).digest('hex')} hello`,
    );
  });

  it('passes a chunked body whole with its real length: $_POST from curl, a streamed multipart upload', async () => {
    const posted = await curl([
      '-s',
      '-H',
      'Transfer-Encoding: chunked',
      '-d',
      'a=1&b=2',
      `${unixServer.url}/info.php`,
    ]);
    assert.deepEqual((JSON.parse(posted.stdout) as { post: unknown }).post, { a: '1', b: '2' });
    // Past what is kept in memory: the rest goes through a temporary file, gone afterwards.
    const file = Buffer.alloc(3 * 1024 * 1024, 9);
    const form = new FormData();
    form.set('note', 'streamed');
    form.set('file', new Blob([file]), 'three.bin');
    const encoded = new Response(form);
    const r = await fetch(`${tcpServer.url}/upload.php`, {
      method: 'POST',
      body: encoded.body,
      headers: { 'content-type': encoded.headers.get('content-type')! },
      duplex: 'half',
    } as RequestInit);
    const { createHash } = await import('node:crypto');
    assert.equal(
      await r.text(),
      `three.bin ${file.length} ${createHash('md5').update(file).digest('hex')} streamed`,
    );
    assert.deepEqual(
      readdirSync(tmpdir()).filter((f) => f.startsWith('portico-body-')),
      [],
      'no temporary file is left',
    );
  });

  it('header(), http_response_code(), Location, sessions, a directory index', async () => {
    const teapot = await request(unixServer.port, '/status.php');
    assert.deepEqual(
      [teapot.status, teapot.headers['x-made-by'], teapot.body.toString()],
      [418, 'php', 'teapot'],
    );
    const moved = await request(unixServer.port, '/redirect.php');
    assert.deepEqual([moved.status, moved.headers.location], [302, '/elsewhere']);
    const first = await request(unixServer.port, '/session.php');
    const cookie = String(first.headers['set-cookie']).split(';')[0]!;
    const second = await request(unixServer.port, '/session.php', { headers: { cookie } });
    assert.deepEqual([first.body.toString(), second.body.toString()], ['1', '2']);
    assert.equal((await request(unixServer.port, '/app/')).body.toString(), 'index of app');
  });

  it('streams a 10 MB echo, and PHP errors reach the error log, not the client', async () => {
    const big = await request(unixServer.port, '/big.php');
    assert.equal(big.body.length, 10 * 1024 * 1024);
    assert.equal(big.body.subarray(0, 1024).toString(), 'A'.repeat(1024));
    assert.equal((await request(unixServer.port, '/stderr.php')).body.toString(), 'ok');
    const fatal = await request(unixServer.port, '/fatal.php');
    assert.equal(fatal.status, 500);
    await logged(
      unixServer.stderr,
      /FastCGI unix:\/\/.*: the application wrote to its error output: PHP message: e{200}/,
    );
    await logged(unixServer.stderr, /Call to undefined function undefined_function/);
  });

  it('REMOTE_USER after basic authentication, HTTPS=on over TLS', async () => {
    const auth = `Basic ${Buffer.from('alice:change-me').toString('base64')}`;
    const denied = await request(unixServer.port, '/info.php/private');
    assert.equal(denied.status, 401);
    const allowed = await request(unixServer.port, '/info.php/private', {
      headers: { authorization: auth },
    });
    assert.equal((JSON.parse(allowed.body.toString()) as { user: string }).user, 'alice');
    const secure = await request(sport, '/info.php', { tls: true });
    assert.equal((JSON.parse(secure.body.toString()) as { https: string }).https, 'on');
  });

  it('frees the php-fpm child when the client goes away in the middle of an upload', async () => {
    // Over TCP: that pool of four children serves only tcpServer, whose kept connections each hold one.
    const received = tcpServer.server.requestsTotal;
    const socket = connect(tcpServer.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(
      'POST /upload.php HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 10000000\r\n\r\n',
    );
    socket.write(Buffer.alloc(256 * 1024, 1));
    await until(() => tcpServer.server.requestsTotal > received, { what: 'the upload begun' });
    socket.destroy();
    await until(() => tcpServer.server.connectionsActive === 0, { what: 'the upload cut' });
    // Four children: were one still held by the cut upload, one of these would wait for ever.
    const started = Date.now();
    const statuses = await Promise.all(
      Array.from({ length: 4 }, async () => (await request(tcpServer.port, '/stderr.php')).status),
    );
    assert.deepEqual(statuses, [200, 200, 200, 200]);
    assert.ok(Date.now() - started < 5000);
    assert.equal(tcpServer.server.connectionsActive, 0);
    // A client that left is not the application's failure.
    assert.doesNotMatch(tcpServer.stderr(), /the client went away/);
  });

  it('never runs a file outside wwwroot, or one that is not a script', async () => {
    writeFileSync(join(dir, 'outside.php'), '<?php echo "escaped";');
    for (const path of [
      '/../outside.php',
      '/%2e%2e/outside.php',
      '/..%2Foutside.php',
      '/secret.txt/x.php',
      '/nope.php',
    ]) {
      const r = await request(unixServer.port, path);
      assert.ok(!r.body.toString().includes('escaped'), path);
      assert.notEqual(r.status, 200, `${path}: ${r.status}`);
    }
    assert.equal((await request(unixServer.port, '/secret.txt')).body.toString(), 'not php');
  });

  it('replaces connections php-fpm recycles (pm.max_requests) without failing a request', async () => {
    const recycling = await startFpm(join(dir, 'recycling'), 3);
    const server = await startServer(
      `global:\n  wwwroot: ${www}\n  loadModules: [fcgi]\n  fcgiScriptExtensions: [.php]\n  fcgiTo: unix://${recycling.socket}\n`,
    );
    try {
      const statuses: number[] = [];
      for (let round = 0; round < 10; round++)
        statuses.push(
          ...(await Promise.all(
            Array.from(
              { length: 4 },
              async () => (await request(server.port, '/stderr.php')).status,
            ),
          )),
        );
      assert.deepEqual(new Set(statuses), new Set([200]));
    } finally {
      await server.close();
      await recycling.stop();
    }
  });

  it('serves more requests at once than php-fpm has children: none waits for ever behind a kept connection', async () => {
    // php-fpm's child stays with a kept connection; one opened beyond its children would wait in
    // its listen queue until a kept one closed, which is never.
    const few = await startFpm(join(dir, 'few'), 0, 2);
    const server = await startServer(
      `global:\n  wwwroot: ${www}\n  loadModules: [fcgi]\n  fcgiScriptExtensions: [.php]\n  fcgiTo: unix://${few.socket}\n`,
    );
    try {
      const started = Date.now();
      for (let round = 0; round < 2; round++) {
        const bodies = await Promise.all(
          Array.from({ length: 12 }, async () =>
            (await request(server.port, '/slow.php')).body.toString(),
          ),
        );
        assert.deepEqual(new Set(bodies), new Set(['slept']));
      }
      // 24 requests of 200 ms on two children: 2.4 s, not a hang.
      assert.ok(Date.now() - started < 6000, `${Date.now() - started} ms`);
    } finally {
      await server.close();
      await few.stop();
    }
  });

  it('answers 503 while php-fpm is down, and serves again within a second of its restart under load', async () => {
    const restarting = await startFpm(join(dir, 'restarting'));
    const server = await startServer(
      `global:\n  wwwroot: ${www}\n  loadModules: [fcgi]\n  fcgiScriptExtensions: [.php]\n  fcgiTo: unix://${restarting.socket}\n`,
    );
    try {
      let stop = false;
      const seen: number[] = [];
      const load = Promise.all(
        Array.from({ length: 4 }, async () => {
          while (!stop) {
            const r = await request(server.port, '/stderr.php').catch(() => undefined);
            seen.push(r?.status ?? 0);
          }
        }),
      );
      await until(() => seen.length >= 4, { what: 'requests served before the stop' });
      await restarting.stop();
      rmSync(restarting.socket, { force: true });
      const stoppedAt = seen.length;
      await until(() => seen.slice(stoppedAt).includes(503), { what: 'a 503 under load' });
      const down = await request(server.port, '/stderr.php');
      assert.equal(down.status, 503);
      const again = await startFpm(join(dir, 'restarting'));
      const restartedAt = Date.now();
      let ok = 0;
      while (ok === 0 && Date.now() - restartedAt < 1000)
        ok = (await request(server.port, '/stderr.php')).status === 200 ? 1 : 0;
      stop = true;
      await load;
      assert.equal(ok, 1, 'served within a second of the restart');
      assert.ok(
        seen.every((s) => s === 200 || s === 503 || s === 502),
        `statuses: ${[...new Set(seen)]}\n${server.stderr()}`,
      );
      await again.stop();
    } finally {
      await server.close();
    }
  });
});
