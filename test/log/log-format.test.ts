// `logFormat` without a server: each named format's line for one request, exactly; the json line
// parsed back whatever a client put in its fields; templates compiled and refused with positions.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { AccessLogEntry } from '../../src/log/access-entry.js';
import { formatAccessLine } from '../../src/log/clf-line.js';
import { accessFormat, type AccessFormat } from '../../src/log/log-format.js';
import { PLACEHOLDERS } from '../../src/log/log-template.js';

process.env.TZ = 'UTC';

const entry: AccessLogEntry = {
  clientIp: '::ffff:192.0.2.1',
  user: 'frank',
  time: new Date(Date.UTC(2000, 9, 10, 13, 55, 36, 250)),
  method: 'GET',
  target: '/apache_pb.gif?x=1',
  protocol: 'HTTP/1.1',
  status: 200,
  length: 2326,
  referer: 'http://www.example.com/start.html',
  userAgent: 'Mozilla/4.08 [en] (Win98; I ;Nav)',
  host: 'www.example.com',
  durationMs: 1234,
  upstreamMs: 7.6,
  tlsVersion: 'TLSv1.3',
  cacheStatus: 'MISS',
};

function format(spec: string): AccessFormat {
  const parsed = accessFormat(spec);
  assert.ok(!('problem' in parsed), `${spec}: ${'problem' in parsed ? parsed.problem : ''}`);
  return parsed;
}

function problem(spec: string): string {
  const parsed = accessFormat(spec);
  assert.ok('problem' in parsed, `${spec} is refused`);
  return parsed.problem;
}

const json = (e: AccessLogEntry) => JSON.parse(format('json').line(e)) as Record<string, unknown>;

test('combined is the line the access log always wrote; common is it without the last two fields', () => {
  assert.equal(format('combined').line(entry), formatAccessLine(entry));
  assert.equal(
    format('combined').line(entry),
    '192.0.2.1 - frank [10/Oct/2000:13:55:36 +0000] "GET /apache_pb.gif?x=1 HTTP/1.1" 200 2326 ' +
      '"http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"\n',
  );
  assert.equal(
    format('common').line(entry),
    '192.0.2.1 - frank [10/Oct/2000:13:55:36 +0000] "GET /apache_pb.gif?x=1 HTTP/1.1" 200 2326\n',
  );
  assert.equal(format('combined').extended, false);
  assert.equal(format('common').extended, false);
});

test('json: one object per line, its keys in order, with their types', () => {
  const line = format('json').line(entry);
  assert.ok(line.endsWith('}\n') && !line.slice(0, -1).includes('\n'), line);
  assert.deepEqual(JSON.parse(line), {
    time: '2000-10-10T13:55:36+00:00',
    client: '192.0.2.1',
    user: 'frank',
    host: 'www.example.com',
    method: 'GET',
    path: '/apache_pb.gif?x=1',
    protocol: 'HTTP/1.1',
    status: 200,
    bytes: 2326,
    duration: 1.234,
    upstream_time: 0.008,
    tls: 'TLSv1.3',
    cache: 'MISS',
    user_agent: 'Mozilla/4.08 [en] (Win98; I ;Nav)',
    referer: 'http://www.example.com/start.html',
  });
  assert.equal(format('json').extended, true);
});

test('json: what is absent is null; a refused request has no method or path but its line', () => {
  const absent: AccessLogEntry = {
    ...entry,
    user: undefined,
    length: undefined,
    referer: undefined,
    userAgent: undefined,
    host: undefined,
    upstreamMs: undefined,
    tlsVersion: undefined,
    cacheStatus: undefined,
  };
  const parsed = json(absent);
  for (const key of [
    'user',
    'host',
    'bytes',
    'upstream_time',
    'tls',
    'cache',
    'user_agent',
    'referer',
  ])
    assert.equal(parsed[key], null, key);
  assert.equal('refused' in parsed, false);
  const refused = json({ ...absent, method: '', target: '', rawLine: 'HELLO \x01', status: 400 });
  assert.deepEqual(
    [refused.method, refused.path, refused.refused, refused.status],
    [null, null, 'HELLO \x01', 400],
  );
});

test('json: quotes, control bytes, non-UTF-8 and line separators stay inside one printable line', () => {
  const forged = '"}\n{"client":"10.0.0.1","status":200}\r\x1b[31m\x7f\\';
  // Node hands header bytes over as Latin-1 characters, one per byte.
  const bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
  const hostile: AccessLogEntry = {
    ...entry,
    user: `eve${forged}`,
    target: `/a${forged}`,
    userAgent: bytes(`ua ${forged} café \u2028\u2029 \u202e`),
    // \xFF\xFE is no UTF-8: every byte stays the Latin-1 character of its value.
    referer: `http://x/\xff\xfe${forged}\xc3\xa9\x85`,
  };
  const line = format('json').line(hostile);
  assert.match(line, /^[\x20-\x7e]*\n$/, 'one line of printable ASCII');
  const parsed = json(hostile);
  assert.equal(parsed.user, hostile.user);
  assert.equal(parsed.path, hostile.target);
  assert.equal(parsed.user_agent, `ua ${forged} café \u2028\u2029 \u202e`, 'UTF-8 read as UTF-8');
  assert.equal(parsed.referer, hostile.referer);
  assert.equal(parsed.client, '192.0.2.1');
  assert.equal(parsed.status, 200);
  // Beyond the Basic Multilingual Plane, and a lone surrogate, still valid JSON.
  assert.equal(json({ ...entry, userAgent: 'x😀\ud800y' }).user_agent, 'x😀\ud800y');
});

test('a template: every placeholder, text and braces around them', () => {
  const all = Object.keys(PLACEHOLDERS)
    .map((name) => `${name}={${name}}`)
    .join(' ');
  const line = format(`{{${all}}}`).line({ ...entry, userAgent: 'say "hi"\n' });
  assert.equal(
    line,
    '{client=192.0.2.1 user=frank time=10/Oct/2000:13:55:36 +0000 time_iso=2000-10-10T13:55:36+00:00 ' +
      'request=GET /apache_pb.gif?x=1 HTTP/1.1 method=GET path=/apache_pb.gif?x=1 protocol=HTTP/1.1 ' +
      'status=200 bytes=2326 duration=1.234 duration_ms=1234 upstream_time=0.008 tls=TLSv1.3 ' +
      'cache=MISS host=www.example.com user_agent=say \\"hi\\"\\x0A ' +
      'referer=http://www.example.com/start.html}\n',
  );
  assert.equal(format(`{{${all}}}`).extended, true);
  assert.equal(format('{client} "{request}" {status}').extended, false);
  assert.equal(
    format('{client} {upstream_time} {tls} {cache} {host}').line({
      ...entry,
      upstreamMs: undefined,
      tlsVersion: undefined,
      cacheStatus: undefined,
      host: undefined,
    }),
    '192.0.2.1 - - - -\n',
  );
});

test('refused: an unknown placeholder or name, a lone or open brace, a control character', () => {
  assert.match(
    problem('{client} {bogus} {status}'),
    /^unknown placeholder \{bogus\} at character 10; known: \{client\}, \{user\}, /,
  );
  assert.equal(
    problem('fancy'),
    'unknown format "fancy": one of combined, common, json, or a template with {placeholders}',
  );
  assert.match(problem('JSON'), /^unknown format "JSON"/, 'names are lower case');
  assert.match(problem('{status'), /^a \{ at character 1 is not closed/);
  assert.match(problem('{status} }'), /^a lone \} at character 10/);
  assert.match(problem('{status}\n{client}'), /^a control character at character 9: /);
  assert.match(problem('{constructor}'), /^unknown placeholder \{constructor\}/);
});

test("docs/running.md lists every placeholder and every json key, in the json line's order", () => {
  const docs = readFileSync(new URL('../../docs/running.md', import.meta.url), 'utf8');
  const section = docs.slice(docs.indexOf('### Log formats'));
  const documented = (pattern: RegExp) => [...section.matchAll(pattern)].map((m) => m[1]);
  assert.deepEqual(documented(/^\| `\{(\w+)\}` \|/gm), Object.keys(PLACEHOLDERS));
  assert.deepEqual(documented(/^\| `(\w+)` \| (?:string|number)/gm), [
    ...Object.keys(json(entry)),
    'refused',
  ]);
});
