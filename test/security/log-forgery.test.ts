// Forging access log lines: header values and request lines full of quotes, backslashes, bytes
// that are no UTF-8, line and paragraph separators, bidirectional overrides and control bytes
// (which Node refuses, and Portico logs as the refused line). Every request is one line of the
// json log and of a template log, printable ASCII, parsed back to what was sent; no client other
// than the real one appears; the server serves others all along.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { request } from '../helpers/http.js';
import { until } from '../helpers/wait.js';
import { exchange, statusLines } from './harness.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

let p: PorticoProcess;

before(async () => {
  p = await spawnPortico(
    `global:
  wwwroot: www
  logFilePath: access.json
  logFormat: json
hosts:
  - domain: t.test
    logFilePath: template.log
    logFormat: '{client} "{request}" {status} "{user_agent}" "{referer}"'
`,
    { files: { 'www/index.html': 'hello' } },
  );
});

after(() => p?.stop());

const lines = (name: string) =>
  readFileSync(join(p.dir, name), 'latin1').split('\n').filter(Boolean);

// What a client can put in a field line (no CR or LF: Node ends or refuses the field there).
const FORGED = '","client":"10.0.0.1","status":200,"x":"\\\\" 10.0.0.1 - - [01/Jan/2000] "GET /';
// UTF-8 bytes of line and paragraph separators and a right-to-left override, sent as bytes.
const UTF8_TRICKS = Buffer.from(' \u2028 \u2029 \u202e', 'utf8').toString('latin1');

/** Bytes of one request, Latin-1: each character one byte. */
const bytes = (text: string) => Buffer.from(text, 'latin1');

it('hostile fields stay in one printable line each, parsed back as sent, the server serving', async () => {
  const sent: { host: string; ua: string; referer: string }[] = [];
  for (const host of ['a.test', 't.test']) {
    const variants = [
      { ua: `ua${FORGED}`, referer: `http://r/${FORGED}` },
      { ua: `ua${UTF8_TRICKS}`, referer: 'http://r/\xff\xfe\xc3(' },
      { ua: 'tab\there\x80\xbf', referer: `\\x0A${FORGED}` },
    ];
    for (const { ua, referer } of variants) {
      const answer = await exchange(
        p.port,
        bytes(
          `GET /index.html HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: ${ua}\r\n` +
            `Referer: ${referer}\r\nConnection: close\r\n\r\n`,
        ),
      );
      assert.deepEqual(statusLines(answer.data), ['HTTP/1.1 200 OK']);
      sent.push({ host, ua, referer });
      assert.equal((await request(p.port, '/index.html')).text, 'hello', 'others are served');
    }
  }
  // Control bytes in a field, and in the request line: refused by Node's parser, and logged.
  const refused = [
    `GET /index.html HTTP/1.1\r\nHost: a.test\r\nUser-Agent: a\x1b[31m\x07\r\n\r\n`,
    `GET /"\x01${FORGED}\xff HTTP/1.1\r\nHost: a.test\r\n\r\n`,
  ];
  for (const text of refused)
    assert.deepEqual(statusLines((await exchange(p.port, bytes(text))).data), [
      'HTTP/1.1 400 Bad Request',
    ]);
  assert.equal((await request(p.port, '/index.html')).text, 'hello');

  // The global log: the a.test requests, the plain ones in between, the two refusals.
  const json = await until(() => lines('access.json'), {
    ok: (l) => l.length === 3 + 7 + 2,
    what: 'every request of the global log',
  });
  const template = await until(() => lines('template.log'), {
    ok: (l) => l.length === 3,
    what: "t.test's three requests",
  });
  for (const line of [...json, ...template])
    assert.match(line, /^[\x20-\x7e]+$/, `printable ASCII: ${line}`);
  const entries = json.map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.ok(
    entries.every((e) => e.client === '127.0.0.1'),
    'no forged client',
  );
  // As sent: UTF-8 read as UTF-8, any other byte as the Latin-1 character of its value.
  const asText = (v: string) => {
    const b = Buffer.from(v, 'latin1');
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(b);
    } catch {
      return v;
    }
  };
  const hostile = entries.filter((e) => e.host === 'a.test' && e.status === 200);
  assert.deepEqual(
    hostile.map((e) => [e.user_agent, e.referer]),
    sent.filter((s) => s.host === 'a.test').map((s) => [asText(s.ua), asText(s.referer)]),
  );
  const refusals = entries.filter((e) => e.status === 400);
  assert.equal(refusals.length, 2);
  assert.equal(refusals[1]!.refused, `GET /"\x01${FORGED}\xff HTTP/1.1`);
  // The template escapes as the combined format does; its fields stay where they are.
  for (const line of template)
    assert.match(
      line,
      /^127\.0\.0\.1 "GET \/index\.html HTTP\/1\.1" 200 "(?:[^"\\]|\\.)*" "(?:[^"\\]|\\.)*"$/,
    );
  assert.ok(p.alive());
});
