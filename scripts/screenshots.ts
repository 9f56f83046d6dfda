// Regenerates docs/screenshots/*.png from the real server in headless Chromium at 1200x800: a
// directory listing, the default 404 page and the welcome page (the repository's wwwroot/).
// Usage: npx tsx scripts/screenshots.ts
import { mkdirSync, mkdtempSync, rmSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findChromium, screenshot } from '../test/helpers/chromium.js';
import { startServer } from '../test/helpers/server.js';

const repo = fileURLToPath(new URL('..', import.meta.url));
const out = join(repo, 'docs', 'screenshots');
const size = { width: 1200, height: 800 };

// Fixed sizes and dates, so regenerating gives the same pictures.
const SAMPLE: Record<string, { size: number; date: string }> = {
  'docs/': { size: 0, date: '2025-01-04T09:12:00Z' },
  'images/': { size: 0, date: '2024-12-18T16:40:00Z' },
  'CHANGELOG.md': { size: 14_630, date: '2025-01-06T14:03:00Z' },
  'café menu.pdf': { size: 286_720, date: '2024-11-29T11:25:00Z' },
  'portico-0.1.0.tar.gz': { size: 1_258_291, date: '2025-01-06T14:05:00Z' },
  'release notes.txt': { size: 2_310, date: '2025-01-06T13:58:00Z' },
  '.htaccess': { size: 120, date: '2024-10-01T08:00:00Z' },
};

const chromium = findChromium();
if (!chromium) {
  console.error('Chromium not found: install Debian package chromium, or set CHROMIUM_PATH.');
  process.exit(1);
}

const root = mkdtempSync(join(tmpdir(), 'portico-screenshots-'));
const downloads = join(root, 'downloads');
for (const [name, entry] of Object.entries(SAMPLE)) {
  const path = join(downloads, name);
  if (name.endsWith('/')) mkdirSync(path, { recursive: true });
  else {
    mkdirSync(downloads, { recursive: true });
    writeFileSync(path, '');
    truncateSync(path, entry.size);
  }
  utimesSync(path, new Date(entry.date), new Date(entry.date));
}

const site = await startServer(`
global:
  wwwroot: ${JSON.stringify(root)}
  enableDirectoryListing: true
  serverAdministratorEmail: webmaster@example.com
`);
const welcome = await startServer(`
global:
  wwwroot: ${JSON.stringify(join(repo, 'wwwroot'))}
`);
try {
  mkdirSync(out, { recursive: true });
  const pages: [string, string][] = [
    ['directory-listing.png', `${site.url}/downloads/`],
    ['error-page.png', `${site.url}/old/pricing.html`],
    ['welcome-page.png', `${welcome.url}/`],
  ];
  for (const [file, url] of pages) {
    await screenshot(chromium, url, join(out, file), size);
    console.log(`wrote docs/screenshots/${file}`);
  }
} finally {
  await Promise.all([site.close(), welcome.close()]);
  rmSync(root, { recursive: true, force: true });
}
