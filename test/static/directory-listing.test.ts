import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { escapeHtml } from '../../src/http/html.js';
import {
  formatDate,
  formatSize,
  readListing,
  renderListing,
  type ListingEntry,
} from '../../src/static/directory-listing.js';

const WHEN = Date.UTC(2025, 0, 6, 14, 3, 59);

describe('formatSize', () => {
  it('uses 1024-based units with one decimal below 100', () => {
    const cases: [number, string][] = [
      [0, '0 B'],
      [1023, '1023 B'],
      [1024, '1 KiB'],
      [1536, '1.5 KiB'],
      [1024 * 99.94, '99.9 KiB'],
      [1024 * 150, '150 KiB'],
      [5 * 1024 ** 2 + 300 * 1024, '5.3 MiB'],
      [3 * 1024 ** 3, '3 GiB'],
      [2 * 1024 ** 4, '2 TiB'],
    ];
    for (const [bytes, text] of cases) assert.equal(formatSize(bytes), text, String(bytes));
  });
});

describe('formatDate', () => {
  it('prints UTC minutes, ISO-like', () => assert.equal(formatDate(WHEN), '2025-01-06 14:03'));
});

describe('renderListing', () => {
  const hostile: ListingEntry = {
    name: '<script>&"x',
    directory: false,
    size: 1536,
    mtimeMs: WHEN,
  };

  it('escapes names in text and encodes them in links', () => {
    const html = renderListing({ title: '/a/', base: '/a/', entries: [hostile] });
    assert.ok(!html.includes('<script>'), 'no raw tag');
    assert.ok(html.includes('&lt;script&gt;&amp;&quot;x'), 'escaped text');
    assert.ok(html.includes('href="/a/%3Cscript%3E%26%22x"'), 'percent-encoded link');
    assert.ok(html.includes('1.5 KiB'));
    assert.ok(html.includes('<time datetime="2025-01-06T14:03:59.000Z">2025-01-06 14:03</time>'));
  });

  it('escapes the title, links the parent except at the root, and marks directories', () => {
    const html = renderListing({
      title: '/x&y <b>/',
      base: '/x&y%20%3Cb%3E/',
      entries: [{ name: 'sub dir', directory: true, size: 4096, mtimeMs: WHEN }],
    });
    assert.ok(html.includes('<title>Index of /x&amp;y &lt;b&gt;/</title>'));
    assert.ok(html.includes('<h1>Index of /x&amp;y &lt;b&gt;/</h1>'));
    assert.ok(html.includes('<a href="/">../</a>'));
    assert.ok(html.includes('<a href="/x&amp;y%20%3Cb%3E/sub%20dir/">sub dir/</a>'));
    assert.ok(!renderListing({ title: '/', base: '/', entries: [] }).includes('../'));
    assert.ok(
      renderListing({ title: '/a/b/', base: '/a/b/', entries: [] }).includes(
        '<a href="/a/">../</a>',
      ),
    );
  });

  it('is a self-contained HTML5 page: no script, no external resource, light and dark styles', () => {
    const html = renderListing({ title: '/', base: '/', entries: [hostile] });
    assert.ok(html.startsWith('<!DOCTYPE html>'));
    assert.ok(html.includes('<meta name="viewport"'));
    assert.ok(html.includes('prefers-color-scheme:dark'));
    assert.ok(!/<script|<link|src=|url\(|@import/i.test(html));
    assert.ok(html.includes('This directory is empty.') === false);
    assert.ok(
      renderListing({ title: '/', base: '/', entries: [] }).includes('This directory is empty.'),
    );
  });

  it('escapes the five HTML specials', () =>
    assert.equal(
      escapeHtml(`<a href="x">'&'</a>`),
      '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;',
    ));
});

describe('readListing', () => {
  const base = mkdtempSync(join(tmpdir(), 'portico-static-listing-'));
  after(() => rmSync(base, { recursive: true, force: true }));
  const root = join(base, 'root');
  mkdirSync(join(root, 'b-dir'), { recursive: true });
  mkdirSync(join(root, 'A-dir'));
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(base, 'outside', 'secret.txt'), 'secret');
  writeFileSync(join(root, 'b.txt'), 'bb');
  writeFileSync(join(root, 'a.txt'), 'a');
  writeFileSync(join(root, 'Z.txt'), 'z');
  writeFileSync(join(root, 'é.txt'), 'e');
  writeFileSync(join(root, '.env'), 'hidden');
  mkdirSync(join(root, '.git'));
  symlinkSync(join(root, 'a.txt'), join(root, 'link-inside.txt'));
  symlinkSync(join(base, 'outside', 'secret.txt'), join(root, 'link-outside.txt'));
  symlinkSync(join(base, 'outside'), join(root, 'link-outside-dir'));
  symlinkSync('/etc', join(root, 'etc'));
  symlinkSync(join(root, 'nowhere'), join(root, 'broken'));
  utimesSync(join(root, 'a.txt'), WHEN / 1000, WHEN / 1000);

  it('lists directories first, then names byte-wise; hides dotfiles and links leaving the root', async () => {
    const entries = await readListing(realpathSync(root), realpathSync(root));
    assert.deepEqual(
      entries.map((e) => e.name),
      ['A-dir', 'b-dir', 'Z.txt', 'a.txt', 'b.txt', 'link-inside.txt', 'é.txt'],
    );
    const a = entries.find((e) => e.name === 'a.txt')!;
    assert.equal(a.size, 1);
    assert.equal(a.mtimeMs, WHEN);
    assert.equal(entries.find((e) => e.name === 'link-inside.txt')!.size, 1);
  });
});
