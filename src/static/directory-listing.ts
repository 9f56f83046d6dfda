// The page for a directory without an index, when listing is enabled. It lists what could be
// served: dotfiles are hidden, and so are symlinks that leave wwwroot or lead nowhere, along with
// FIFOs, sockets and devices. Self-contained HTML: inline CSS, no script, no external resource.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { escapeHtml, htmlPage } from '../http/html.js';
import { isInside } from './file-cache.js';

export interface ListingEntry {
  readonly name: string;
  readonly directory: boolean;
  readonly size: number;
  readonly mtimeMs: number;
}

async function describe(
  dirReal: string,
  rootReal: string,
  name: string,
): Promise<ListingEntry | undefined> {
  try {
    const path = join(dirReal, name);
    const link = await fsp.lstat(path);
    if (link.isSymbolicLink() && !isInside(await fsp.realpath(path), rootReal)) return undefined;
    const stats = link.isSymbolicLink() ? await fsp.stat(path) : link;
    if (!stats.isFile() && !stats.isDirectory()) return undefined;
    return { name, directory: stats.isDirectory(), size: stats.size, mtimeMs: stats.mtimeMs };
  } catch {
    return undefined; // vanished since readdir, a broken link, or unreadable: not listed
  }
}

/** Directories first, then by name in UTF-8 byte order (stable, locale-free). */
function compareEntries(a: ListingEntry, b: ListingEntry): number {
  if (a.directory !== b.directory) return a.directory ? -1 : 1;
  return Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));
}

/** What the directory (already checked to lie inside wwwroot) holds, sorted. */
export async function readListing(dirReal: string, rootReal: string): Promise<ListingEntry[]> {
  const names = (await fsp.readdir(dirReal)).filter((name) => !name.startsWith('.'));
  const entries = await Promise.all(names.map((name) => describe(dirReal, rootReal, name)));
  return entries.filter((e): e is ListingEntry => e !== undefined).sort(compareEntries);
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** 1024-based: `512 B`, `1.5 KiB`, `23.4 MiB`, `117 GiB` (one decimal below 100). */
export function formatSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) ((value /= 1024), unit++);
  if (unit === 0) return `${bytes} B`;
  const text = value < 100 ? value.toFixed(1).replace(/\.0$/, '') : String(Math.round(value));
  return `${text} ${UNITS[unit]}`;
}

/** `2025-01-06 14:03`, in UTC: the same for every reader, whatever the server's time zone. */
export function formatDate(mtimeMs: number): string {
  return new Date(mtimeMs).toISOString().slice(0, 16).replace('T', ' ');
}

const STYLE = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--head:#f6f8fa;--hover:#f0f4fa;--link:#0969da}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#30363d;--head:#151b23;--hover:#1c2330;--link:#4493f8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",sans-serif}
main{max-width:64rem;margin:0 auto;padding:2rem 1rem 3rem}
h1{margin:0 0 1.25rem;font-size:1.35rem;font-weight:600;overflow-wrap:anywhere}
.list{border:1px solid var(--line);border-radius:.5rem;overflow:hidden}
table{width:100%;border-collapse:collapse}
th,td{padding:.55rem .9rem;text-align:left;vertical-align:top}
th{background:var(--head);color:var(--muted);font-size:.78rem;font-weight:600;letter-spacing:.04em;text-transform:uppercase}
td{border-top:1px solid var(--line)}
tbody tr:hover{background:var(--hover)}
.size,.date{white-space:nowrap;font-variant-numeric:tabular-nums;color:var(--muted)}
.size{text-align:right}
a{color:var(--link);text-decoration:none;overflow-wrap:anywhere}
a:hover,a:focus-visible{text-decoration:underline}
.dir a{font-weight:600}
.empty{color:var(--muted);text-align:center;padding:1.5rem}
@media (max-width:40rem){main{padding:1rem .5rem 2rem}h1{font-size:1.1rem}th,td{padding:.5rem .6rem}.date{display:none}}
`.trim();

export interface ListingPage {
  /** The directory as shown: the request path, decoded. */
  readonly title: string;
  /** The request path, percent-encoded, ending in `/`: the base of every link. */
  readonly base: string;
  readonly entries: readonly ListingEntry[];
}

function row(entry: ListingEntry, base: string): string {
  const href = escapeHtml(base + encodeURIComponent(entry.name) + (entry.directory ? '/' : ''));
  const name = escapeHtml(entry.name) + (entry.directory ? '/' : '');
  const size = entry.directory ? '—' : formatSize(entry.size);
  const iso = new Date(entry.mtimeMs).toISOString();
  return (
    `<tr${entry.directory ? ' class="dir"' : ''}><td><a href="${href}">${name}</a></td>` +
    `<td class="size">${size}</td><td class="date"><time datetime="${iso}">${formatDate(entry.mtimeMs)}</time></td></tr>`
  );
}

export function renderListing(page: ListingPage): string {
  const title = `Index of ${page.title}`;
  const rows: string[] = [];
  if (page.base !== '/') {
    const parent = page.base.slice(0, page.base.lastIndexOf('/', page.base.length - 2) + 1);
    rows.push(
      `<tr class="dir"><td><a href="${escapeHtml(parent)}">../</a></td><td class="size"></td><td class="date"></td></tr>`,
    );
  }
  for (const entry of page.entries) rows.push(row(entry, page.base));
  if (page.entries.length === 0)
    rows.push('<tr><td class="empty" colspan="3">This directory is empty.</td></tr>');
  return htmlPage(
    title,
    STYLE,
    `<main>
<h1>${escapeHtml(title)}</h1>
<div class="list">
<table>
<thead><tr><th>Name</th><th class="size">Size</th><th class="date">Last modified (UTC)</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
</div>
</main>`,
  );
}
