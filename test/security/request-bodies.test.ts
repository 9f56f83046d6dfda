// Request bodies sent to wear the server down: a Content-Length of ten gigabytes, and an endless
// chunked upload to a CGI script, whose body Portico reads whole before running it. With
// `maximumRequestBodySize` each ends in a 413 within the bound, the temporary file is closed, and
// others are served meanwhile.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { chmodSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { assertRecovered, baseline, type Baseline } from './harness.js';
import { spawnPortico, type PorticoProcess } from './portico-process.js';

const LIMIT = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'b');

/** Sends `head`, then chunks for as long as the server reads them; the answer's first line. */
async function upload(
  port: number,
  head: string,
  chunked: boolean,
): Promise<{ line: string; sent: number }> {
  const socket: Socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write(head);
  let answer = '';
  let sent = 0;
  socket.setEncoding('latin1').on('data', (d: string) => (answer += d));
  const closed = once(socket, 'close').catch(() => undefined);
  if (chunked) {
    const frame = Buffer.concat([
      Buffer.from(`${CHUNK.length.toString(16)}\r\n`),
      CHUNK,
      Buffer.from('\r\n'),
    ]);
    // Until the server answers or stops reading: never more than a bounded multiple of the limit.
    while (answer === '' && !socket.destroyed && sent < 64 * LIMIT) {
      sent += CHUNK.length;
      if (!socket.write(frame))
        await Promise.race([once(socket, 'drain').catch(() => undefined), closed]);
    }
  }
  await Promise.race([closed, once(socket, 'data').catch(() => undefined)]);
  socket.destroy();
  return { line: answer.split('\r\n')[0] ?? '', sent };
}

/** Deleted files the server still holds open: its spooled bodies, while a request uses one. */
function heldBodies(pid: number): string[] {
  const held: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.includes('portico-body-')) held.push(target);
    } catch {
      // closed meanwhile
    }
  }
  return held;
}

describe('hostile request bodies, with maximumRequestBodySize', () => {
  let portico: PorticoProcess;
  let base: Baseline;
  before(async () => {
    portico = await spawnPortico(
      `global:\n  wwwroot: .\n  loadModules: [cgi]\n  maximumRequestBodySize: ${LIMIT}\n`,
      {
        files: {
          'index.html': 'hello',
          'cgi-bin/count.sh': '#!/bin/sh\nprintf "Content-Type: text/plain\\n\\n"\nwc -c\n',
        },
      },
    );
    chmodSync(join(portico.dir, 'cgi-bin/count.sh'), 0o755);
    base = await baseline(portico, async () => {
      const r = await fetch(`${portico.url}/cgi-bin/count.sh`, { method: 'POST', body: 'warm' });
      assert.equal((await r.text()).trim(), '4');
    });
  });
  after(() => portico?.stop());

  it('a declared ten gigabytes is refused before any of it is read', async (t) => {
    const { line } = await upload(
      portico.port,
      'POST /cgi-bin/count.sh HTTP/1.1\r\nHost: x\r\nContent-Length: 10737418240\r\n\r\n',
      false,
    );
    assert.equal(line, 'HTTP/1.1 413 Payload Too Large');
    await assertRecovered(t, portico, base);
  });

  it('an endless chunked upload to a CGI script ends in a 413 at the bound; others are served meanwhile', async (t) => {
    const served = upload(
      portico.port,
      'POST /cgi-bin/count.sh HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n',
      true,
    );
    assert.equal(await (await fetch(`${portico.url}/index.html`)).text(), 'hello');
    const { line, sent } = await served;
    assert.equal(line, 'HTTP/1.1 413 Payload Too Large');
    // What the socket buffers hold on top of what the server read: far below the 64 MiB sent at most.
    assert.ok(sent < 16 * LIMIT, `the client sent ${sent} bytes`);
    assert.deepEqual(heldBodies(portico.pid), [], 'the temporary file is closed');
    await assertRecovered(t, portico, base);
  });
});
