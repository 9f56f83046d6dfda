// FastCGI's request head, read back with the record reader the exchange uses (FastCGI spec §3).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  RecordReader,
  RecordType,
  requestHead,
  type ParsedRecord,
} from '../../src/modules/fcgi/records.js';

function lengthAt(content: Buffer, at: number): [number, number] {
  return content[at]! < 128
    ? [content[at]!, at + 1]
    : [content.readUInt32BE(at) & 0x7fffffff, at + 4];
}

/** The name-value pairs of PARAMS content, as [name, value bytes]. */
function pairs(content: Buffer): [string, Buffer][] {
  const out: [string, Buffer][] = [];
  for (let at = 0; at < content.length;) {
    const [nameLength, next] = lengthAt(content, at);
    const [valueLength, start] = lengthAt(content, next);
    const name = content.toString('latin1', start, start + nameLength);
    out.push([name, content.subarray(start + nameLength, start + nameLength + valueLength)]);
    at = start + nameLength + valueLength;
  }
  return out;
}

/**
 * Read in pieces of `size` bytes, each copied into one reused buffer as the connection reads:
 * records are found across chunk boundaries, and what the reader keeps is its own.
 */
function read(head: Buffer, size = 1): ParsedRecord[] {
  const reader = new RecordReader();
  const found: ParsedRecord[] = [];
  const scratch = Buffer.alloc(size);
  for (let at = 0; at < head.length; at += size) {
    const length = head.copy(scratch, 0, at, at + size);
    for (const record of reader.push(scratch.subarray(0, length)))
      found.push({ ...record, content: Buffer.from(record.content) });
    scratch.fill(0xee);
  }
  assert.ok(reader.empty, 'the head ends on a record boundary');
  return found;
}

it('writes BEGIN_REQUEST with keep-conn, the pairs, and the empty PARAMS and STDIN', () => {
  const long = 'x'.repeat(300);
  const vars = new Map([
    ['REQUEST_METHOD', 'GET'],
    ['SCRIPT_FILENAME', '/srv/www/café.php'],
    ['HTTP_X_LATIN', 'caf\u00e9'],
    ['HTTP_X_LONG', long],
    ['EMPTY', ''],
  ]);
  const head = Buffer.from(
    requestHead(vars, { withoutBody: true, keepConnection: true }),
    'latin1',
  );
  assert.equal(head.length % 8, 0, 'every record padded to a multiple of 8');
  const found = read(head);
  assert.deepEqual(
    found.map((r) => r.type),
    [RecordType.BeginRequest, RecordType.Params, RecordType.Params, RecordType.Stdin],
  );
  assert.deepEqual([...found[0]!.content], [0, 1, 1, 0, 0, 0, 0, 0], 'responder, FCGI_KEEP_CONN');
  assert.deepEqual(pairs(found[1]!.content), [
    ['REQUEST_METHOD', Buffer.from('GET')],
    // Decoded paths as UTF-8, what the client sent as Latin-1 (its bytes back).
    ['SCRIPT_FILENAME', Buffer.from('/srv/www/café.php', 'utf8')],
    ['HTTP_X_LATIN', Buffer.from([0x63, 0x61, 0x66, 0xe9])],
    ['HTTP_X_LONG', Buffer.from(long)],
    ['EMPTY', Buffer.alloc(0)],
  ]);
  assert.equal(found[2]!.content.length, 0);
  assert.equal(found[3]!.content.length, 0);
  assert.ok(found.every((r) => r.requestId === 1));
});

it('leaves STDIN to the body, and splits PARAMS beyond 65,535 bytes', () => {
  const vars = new Map([
    ['HTTP_COOKIE', 'c'.repeat(70_000)],
    ['HTTP_X_MORE', 'm'.repeat(60_000)],
  ]);
  const found = read(
    Buffer.from(requestHead(vars, { withoutBody: false, keepConnection: false }), 'latin1'),
    4093,
  );
  // Without FCGI_KEEP_CONN the application closes the connection after the response.
  assert.equal(found[0]!.content[2], 0);
  assert.deepEqual(
    found.map((r) => [r.type, r.content.length]),
    [
      [RecordType.BeginRequest, 8],
      [RecordType.Params, 65_535],
      // Two pairs: 1 + 4 length bytes each, names of 11 bytes.
      [RecordType.Params, 130_000 + 2 * 5 + 22 - 65_535],
      [RecordType.Params, 0],
    ],
  );
  const content = Buffer.concat([found[1]!.content, found[2]!.content]);
  assert.deepEqual(
    pairs(content).map(([name, value]) => [name, value.length]),
    [
      ['HTTP_COOKIE', 70_000],
      ['HTTP_X_MORE', 60_000],
    ],
  );
});
