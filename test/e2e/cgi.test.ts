// CGI as scripts meet it: shell and Perl scripts in cgi-bin, Python and php-cgi by extension, a
// script that fails before its headers, one that floods stderr while answering, one that never
// answers (cut by `timeout`, no process left), 200 requests at once against the process bound, and
// hostile paths.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { once } from 'node:events';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MAX_PROCESSES } from '../../src/modules/cgi/process-slots.js';
import { curl } from '../helpers/curl.js';
import { request, uploadThenAsk } from '../helpers/http.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { logged, until } from '../helpers/wait.js';

const has = (p: string) => spawnSync('sh', ['-c', `command -v ${p}`]).status === 0;
const phpCgi = has('php-cgi');
if (!phpCgi && process.env.CI) throw new Error('CI needs php-cgi');

const dir = mkdtempSync(join(tmpdir(), 'portico-cgi-'));
const www = join(dir, 'www');
mkdirSync(join(www, 'cgi-bin'), { recursive: true });
after(() => rmSync(dir, { recursive: true, force: true }));

const script = (name: string, text: string, executable = true) => {
  writeFileSync(join(www, name), text);
  if (executable) chmodSync(join(www, name), 0o755);
};
script(
  'cgi-bin/env.sh',
  '#!/bin/sh\nprintf "Content-Type: text/plain\\r\\n\\r\\n"\necho "$SCRIPT_NAME|$PATH_INFO|$QUERY_STRING|$REQUEST_METHOD|$REDIRECT_STATUS|$(pwd)"\ncat\n',
);
script(
  'cgi-bin/hello.pl',
  '#!/usr/bin/perl\nprint "Status: 202 Accepted\\nX-Lang: perl\\n\\nperl says hi";\n',
);
script('cgi-bin/fail.sh', '#!/bin/sh\necho "broken on purpose" >&2\nexit 3\n');
script(
  'cgi-bin/noisy.sh',
  '#!/bin/sh\nhead -c 1048576 /dev/zero | tr "\\0" e >&2\nprintf "Content-Type: text/plain\\n\\nstill fine"\n',
);
script('cgi-bin/forever.sh', '#!/bin/sh\nsleep 600\n');
script(
  'cgi-bin/linger.sh',
  '#!/bin/sh\nprintf "Content-Type: text/plain\\n\\nanswered"\nexec >&- 2>&-\nsleep 600\n',
);
script(
  'cgi-bin/upload.sh',
  '#!/bin/sh\ncat > /dev/null\nprintf "Content-Type: text/plain\\n\\nread it all"\n',
);
script('cgi-bin/slow.sh', '#!/bin/sh\nsleep 1\nprintf "Content-Type: text/plain\\n\\nslept"\n');
script('cgi-bin/quick.sh', '#!/bin/sh\nprintf "Content-Type: text/plain\\n\\nquick"\n');
// Starts a daemon of its own (a new session, out of reach of the group kill) that keeps the
// script's error output; its pid goes to bg.pids for the test to end it.
script(
  'cgi-bin/daemon.sh',
  '#!/bin/sh\nsetsid sleep 30 >/dev/null &\necho $! >> ../bg.pids\nprintf "Content-Type: text/plain\\n\\nstarted"\n',
);
script('cgi-bin/noheaders.sh', '#!/bin/sh\nprintf "just text"\n');
script(
  'by-ext.py',
  'print("Content-Type: text/plain")\nprint()\nprint("python by extension")\n',
  false,
);
script(
  'page.php',
  '<?php header("X-Php: cgi"); echo "php-cgi ", $_GET["n"] ?? "", " ", $_SERVER["REDIRECT_STATUS"];',
  false,
);
script('post.php', '<?php echo $_SERVER["CONTENT_LENGTH"], " ", json_encode($_POST);', false);
script('readme.txt', 'plain text', false);

/** A GET, or a POST of `body`. */
const get = (port: number, path: string, body?: string) =>
  request(port, path, body === undefined ? {} : { method: 'POST', body });

/** Processes whose command line names this test's folder. */
function scriptProcesses(): number {
  let n = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

describe('CGI', () => {
  let s: RunningServer;
  before(async () => {
    // Long enough for php-cgi and python3 to start on a machine busy with the other test files
    // (at 1500 ms one was cut once), short enough to test the cut of a script that never answers.
    s = await startServer(
      `global:\n  wwwroot: ${www}\n  loadModules: [cgi]\n  cgiScriptExtensions: [.py, .php]\n  timeout: 3000\n`,
    );
  });
  after(() => s?.close());

  it('runs cgi-bin scripts of any kind with the CGI variables, in their directory, with the body on stdin', async () => {
    const r = await get(s.port, '/cgi-bin/env.sh/more/info?a=1', 'the body');
    assert.equal(r.status, 200);
    assert.equal(
      r.text,
      `/cgi-bin/env.sh|/more/info|a=1|POST|200|${join(www, 'cgi-bin')}\nthe body`,
    );
    const perl = await get(s.port, '/cgi-bin/hello.pl');
    assert.deepEqual(
      [perl.status, perl.headers['x-lang'], perl.text],
      [202, 'perl', 'perl says hi'],
    );
    assert.equal((await get(s.port, '/cgi-bin/noheaders.sh')).text, 'just text');
  });

  it(
    'runs files by extension through their interpreter (python3, php-cgi); other files are static',
    { skip: !phpCgi && 'php-cgi is not installed' },
    async () => {
      assert.equal((await get(s.port, '/by-ext.py')).text, 'python by extension\n');
      const php = await get(s.port, '/page.php?n=5');
      assert.deepEqual([php.headers['x-php'], php.text], ['cgi', 'php-cgi 5 200']);
      assert.equal((await get(s.port, '/readme.txt')).text, 'plain text');
    },
  );

  it(
    'gives php-cgi a chunked body whole, with its real length',
    { skip: !phpCgi && 'php-cgi is not installed' },
    async () => {
      const posted = await curl([
        '-s',
        '-H',
        'Transfer-Encoding: chunked',
        '-d',
        'a=1&b=2',
        `${s.url}/post.php`,
      ]);
      assert.equal(posted.stdout, '7 {"a":"1","b":"2"}');
    },
  );

  it('answers 500 for a script that exits non-zero before its headers, and logs its stderr', async () => {
    assert.equal((await get(s.port, '/cgi-bin/fail.sh')).status, 500);
    await logged(
      s.stderr,
      /CGI \/cgi-bin\/fail\.sh: the script wrote to its error output: broken on purpose/,
    );
  });

  it('answers while the script writes a megabyte to stderr; the log keeps a bounded part', async () => {
    const r = await get(s.port, '/cgi-bin/noisy.sh');
    assert.deepEqual([r.status, r.text], [200, 'still fine']);
    await logged(s.stderr, /e{1000}… \(\d+ more bytes not logged\)/);
  });

  it('kills a script that never answers when the request times out: no process is left', async () => {
    const started = Date.now();
    await get(s.port, '/cgi-bin/forever.sh').catch(() => undefined);
    assert.ok(Date.now() - started < 5000);
    await until(scriptProcesses, { ok: (n) => n === 0, what: 'the script and its sleep gone' });
  });

  it('ends the script when the client goes away in the middle of an upload: no process or socket left', async () => {
    const socket = connect(s.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('POST /cgi-bin/upload.sh HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n');
    socket.write(Buffer.alloc(64 * 1024, 1));
    await until(scriptProcesses, { ok: (n) => n > 0, what: 'the script reading the upload' });
    socket.destroy();
    await until(scriptProcesses, { ok: (n) => n === 0, what: 'the script gone' });
    await until(() => s.server.connectionsActive, { ok: (n) => n === 0, what: 'no connection' });
  });

  it(`frees the process slot of a client gone before the answer: ${2 * MAX_PROCESSES} such clients leave scripts runnable`, async () => {
    // The client sends its request and leaves at once, so the script's answer finds the response
    // closed: that request must still end and give its slot back.
    await Promise.all(
      Array.from({ length: 2 * MAX_PROCESSES }, async () => {
        const socket = connect(s.port, '127.0.0.1');
        await once(socket, 'connect');
        socket.end('GET /cgi-bin/quick.sh HTTP/1.1\r\nHost: x\r\n\r\n');
        socket.destroy();
      }),
    );
    await until(scriptProcesses, { ok: (n) => n === 0, what: 'every script ended' });
    const started = Date.now();
    const r = await get(s.port, '/cgi-bin/quick.sh');
    assert.deepEqual([r.status, r.text], [200, 'quick']);
    // Without a free slot it would wait out the 3 s timeout.
    assert.ok(Date.now() - started < 2500, `answered after ${Date.now() - started} ms`);
  });

  it('frees the process slot of a script whose daemon keeps its error output', async (t) => {
    t.after(() => {
      for (const pid of readFileSync(join(www, 'bg.pids'), 'utf8').split('\n').filter(Boolean))
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // ended already
        }
    });
    const answers = await Promise.all(
      Array.from({ length: MAX_PROCESSES + 6 }, () => get(s.port, '/cgi-bin/daemon.sh')),
    );
    assert.ok(answers.every((r) => r.text === 'started'));
    const started = Date.now();
    const r = await get(s.port, '/cgi-bin/quick.sh');
    assert.deepEqual([r.status, r.text], [200, 'quick']);
    // Without a free slot it would wait out the 3 s timeout.
    assert.ok(Date.now() - started < 2500, `answered after ${Date.now() - started} ms`);
  });

  it('takes the rest of an upload the script did not read: the client finishes sending, its connection kept', async () => {
    // All of it goes out (a paused body stalled at about 3 MB, then the connection was reset);
    // the same connection answers the next request.
    const received = await uploadThenAsk(
      s.port,
      'POST /cgi-bin/quick.sh HTTP/1.1\r\nHost: x\r\n',
      20 * 1024 * 1024,
      'GET /cgi-bin/quick.sh HTTP/1.1\r\nHost: x\r\n\r\n',
      'quick',
    );
    assert.equal(received.split('HTTP/1.1 200').length - 1, 2, received);
  });

  it('leaves no script running after its response is complete (killed within 5 s at most)', async () => {
    const r = await get(s.port, '/cgi-bin/linger.sh');
    assert.equal(r.text, 'answered');
    await until(scriptProcesses, { ok: (n) => n === 0, what: 'the lingering script gone' });
  });

  it(`200 requests at once to a script that sleeps 1 s: never more than ${MAX_PROCESSES} processes, every request 200 or 503`, async (t) => {
    let most = 0;
    // Each script is a shell and its sleep: two processes per running script.
    const sampler = setInterval(
      () => (most = Math.max(most, Math.ceil(scriptProcesses() / 2))),
      50,
    );
    t.after(() => clearInterval(sampler));
    // The default timeout: the queue behind the bound takes about four seconds to drain.
    const busy = await startServer(`global:\n  wwwroot: ${www}\n  loadModules: [cgi]\n`);
    t.after(() => busy.close());
    const statuses = await Promise.all(
      Array.from({ length: 200 }, () =>
        get(busy.port, '/cgi-bin/slow.sh').then(
          (r) => r.status,
          () => 0,
        ),
      ),
    );
    clearInterval(sampler);
    assert.ok(most <= MAX_PROCESSES, `${most} scripts at once`);
    assert.ok(most > 1, 'they ran side by side');
    assert.ok(
      statuses.every((st) => st === 200 || st === 503),
      `statuses: ${[...new Set(statuses)]}`,
    );
  });

  it('never runs a file outside wwwroot', async () => {
    writeFileSync(
      join(dir, 'outside.sh'),
      '#!/bin/sh\nprintf "Content-Type: text/plain\\n\\nescaped"\n',
    );
    chmodSync(join(dir, 'outside.sh'), 0o755);
    for (const path of [
      '/cgi-bin/../../outside.sh',
      '/cgi-bin/%2e%2e/%2e%2e/outside.sh',
      '/cgi-bin/..%2f..%2foutside.sh',
    ])
      assert.ok(!(await get(s.port, path)).text.includes('escaped'), path);
  });
});
