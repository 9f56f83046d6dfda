// The generated pages as a browser sees them: a real server, headless Chromium's DOM after parsing
// (so escaping is checked where it matters) and screenshots that must decode and show something.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { dumpDom, findChromium, screenshot } from '../helpers/chromium.js';
import { startServer } from '../helpers/server.js';

const MTIME = new Date('2025-01-06T14:03:00Z');
const TRICKY = '<b>&"bold".txt';

function unescapeHtml(text: string): string {
  const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', nbsp: '\u00a0' };
  return text.replace(/&(#\d+|\w+);/g, (whole, name: string) =>
    name.startsWith('#') ? String.fromCodePoint(Number(name.slice(1))) : (named[name] ?? whole),
  );
}

interface Row {
  href: string;
  name: string;
  size: string;
  date: string;
}

/**
 * The listing's rows from Chromium's serialization. A link's text must be a single text node
 * (`[^<]*`): a file name that became markup would not match.
 */
function listingRows(dom: string): Row[] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(dom)?.[1];
  assert.ok(body, 'the listing has a table body');
  return [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map(([, tr]) => {
    const cells = [...tr!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!);
    assert.equal(cells.length, 3, tr);
    const link = /^<a href="([^"]*)">([^<]*)<\/a>$/.exec(cells[0]!);
    assert.ok(link, `a name cell holding one plain link: ${cells[0]}`);
    const text = (html: string) => unescapeHtml(html.replace(/<[^>]*>/g, ''));
    return {
      href: unescapeHtml(link[1]!),
      name: unescapeHtml(link[2]!),
      size: text(cells[1]!),
      date: text(cells[2]!),
    };
  });
}

interface PngSummary {
  width: number;
  height: number;
  colours: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes) and counts its colours. */
function summarizePng(file: Buffer): PngSummary {
  assert.ok(file.subarray(0, 8).equals(PNG_SIGNATURE), 'PNG signature');
  let header: Buffer | undefined;
  const idat: Buffer[] = [];
  for (let at = 8; at < file.length;) {
    const length = file.readUInt32BE(at);
    const type = file.toString('latin1', at + 4, at + 8);
    const data = file.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') header = data;
    else if (type === 'IDAT') idat.push(data);
    at += 12 + length;
  }
  assert.ok(header, 'IHDR chunk');
  const width = header.readUInt32BE(0);
  const height = header.readUInt32BE(4);
  const [depth, colourType, , , interlace] = header.subarray(8, 13);
  assert.equal(depth, 8, 'bit depth');
  assert.ok(colourType === 2 || colourType === 6, `colour type ${colourType}`);
  assert.equal(interlace, 0, 'interlacing');
  const channels = colourType === 6 ? 4 : 3;
  const stride = width * channels;
  const raw = inflateSync(Buffer.concat(idat));
  assert.equal(raw.length, height * (stride + 1), 'image data length');

  // Undo each row's filter (PNG spec, section 9) to get the pixels back.
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const source = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = y * stride;
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? pixels[row + x - channels]! : 0;
      const up = y > 0 ? pixels[row - stride + x]! : 0;
      const upLeft = x >= channels && y > 0 ? pixels[row - stride + x - channels]! : 0;
      let predicted = 0;
      if (filter === 1) predicted = left;
      else if (filter === 2) predicted = up;
      else if (filter === 3) predicted = (left + up) >> 1;
      else if (filter === 4) {
        const p = left + up - upLeft;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        predicted = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      } else assert.equal(filter, 0, `row ${y} filter type`);
      pixels[row + x] = (source[x]! + predicted) & 0xff;
    }
  }
  const colours = new Set<number>();
  for (let i = 0; i < pixels.length; i += channels) colours.add(pixels.readUIntBE(i, 3));
  return { width, height, colours: colours.size };
}

const chromium = findChromium();

test('generated pages in headless Chromium', async (t) => {
  if (!chromium) {
    if (process.env.CI)
      assert.fail(
        'Chromium not found: CI must install it (Debian package chromium) or set CHROMIUM_PATH',
      );
    t.skip('Chromium not found (install Debian package chromium, or set CHROMIUM_PATH)');
    return;
  }
  const root = mkdtempSync(join(tmpdir(), 'portico-browser-'));
  const shots = mkdtempSync(join(tmpdir(), 'portico-shots-'));
  // The folder's own name needs encoding too: links must be built on the encoded request path.
  const folder = join(root, 'shared files');
  const files: Record<string, number> = {
    [TRICKY]: 1536,
    'space name.txt': 0,
    'café.md': 5,
    '.secret': 3,
    'nested/inner.txt': 1,
  };
  for (const [name, size] of Object.entries(files)) {
    mkdirSync(join(folder, name, '..'), { recursive: true });
    writeFileSync(join(folder, name), 'x'.repeat(size));
    utimesSync(join(folder, name), MTIME, MTIME);
  }
  utimesSync(join(folder, 'nested'), MTIME, MTIME);
  const s = await startServer(`
global:
  wwwroot: ${JSON.stringify(root)}
  enableDirectoryListing: true
  serverAdministratorEmail: webmaster@example.com
`);
  const listingUrl = `${s.url}/shared%20files/`;
  const missingUrl = `${s.url}/no/such/page.html`;
  try {
    await t.test(
      'directory listing: escaped names as text, encoded links, no dotfiles',
      async () => {
        const dom = await dumpDom(chromium, listingUrl);
        assert.match(dom, /<title>Index of \/shared files\/<\/title>/);
        assert.match(dom, /<h1>Index of \/shared files\/<\/h1>/);
        assert.doesNotMatch(dom, /<b[\s>]/i, 'a file name must not become a <b> element');
        assert.doesNotMatch(dom, /secret/, 'dotfiles are not listed');
        const date = '2025-01-06 14:03';
        assert.deepEqual(listingRows(dom), [
          { href: '/', name: '../', size: '', date: '' },
          { href: '/shared%20files/nested/', name: 'nested/', size: '—', date },
          { href: '/shared%20files/%3Cb%3E%26%22bold%22.txt', name: TRICKY, size: '1.5 KiB', date },
          { href: '/shared%20files/caf%C3%A9.md', name: 'café.md', size: '5 B', date },
          { href: '/shared%20files/space%20name.txt', name: 'space name.txt', size: '0 B', date },
        ]);
        assert.match(dom, /<time datetime="2025-01-06T14:03:00.000Z">2025-01-06 14:03<\/time>/);
      },
    );

    await t.test(
      'default 404 page, without the administrator contact (REFERENCE §9: the 500 page only)',
      async () => {
        const dom = await dumpDom(chromium, missingUrl);
        assert.match(dom, /<title>404 Not Found<\/title>/);
        assert.match(dom, /<h1>404 Not Found<\/h1>/);
        assert.match(
          dom,
          /The page you asked for was not found\. Check the address for typing mistakes\./,
        );
        assert.doesNotMatch(dom, /webmaster@example\.com/);
      },
    );

    await t.test('screenshots at 1200x800 are valid, non-blank PNGs', async () => {
      for (const [name, url] of [
        ['listing', listingUrl],
        ['error', missingUrl],
      ] as const) {
        const file = join(shots, `${name}.png`);
        await screenshot(chromium, url, file, { width: 1200, height: 800 });
        const png = summarizePng(readFileSync(file));
        assert.equal(png.width, 1200, name);
        assert.equal(png.height, 800, name);
        // A blank page is one colour; anti-aliased text alone brings dozens.
        assert.ok(png.colours >= 16, `${name}: only ${png.colours} distinct colours`);
      }
    });
  } finally {
    await s.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(shots, { recursive: true, force: true });
  }
});
