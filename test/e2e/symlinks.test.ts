// Symbolic links as Debian's DokuWiki package lays them out: wwwroot is /usr/share/dokuwiki, and
// lib/tpl/dokuwiki/images/logo.png links to a file under /var/lib/dokuwiki. nginx, Apache, Caddy
// and Ferron serve it; `followSymlinks` says when Portico does.
import assert from 'node:assert/strict';
import { lchownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type RunningServer } from '../helpers/server.js';

const dir = mkdtempSync(join(tmpdir(), 'portico-symlinks-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const www = join(dir, 'usr/share/dokuwiki');
const images = join(www, 'lib/tpl/dokuwiki/images');
const data = join(dir, 'var/lib/dokuwiki/data/media/wiki');
mkdirSync(images, { recursive: true });
mkdirSync(data, { recursive: true });
writeFileSync(join(data, 'logo.png'), 'the wiki logo');
writeFileSync(join(www, 'doku.txt'), 'inside');
symlinkSync(join(data, 'logo.png'), join(images, 'logo.png'));
// A link inside wwwroot, to a file inside it.
symlinkSync(join(www, 'doku.txt'), join(www, 'alias.txt'));
// A link that another user owns, to this user's file: an upload folder's trick.
const root = process.getuid?.() === 0;
symlinkSync(join(data, 'logo.png'), join(images, 'foreign.png'));
if (root) lchownSync(join(images, 'foreign.png'), 65534, 65534);

describe('followSymlinks', () => {
  const servers = new Map<string, RunningServer>();
  before(async () => {
    for (const policy of ['default', 'ownerMatch', 'always', 'never'])
      servers.set(
        policy,
        await startServer(
          `global:\n  wwwroot: ${www}\n${policy === 'default' ? '' : `  followSymlinks: ${policy}\n`}`,
        ),
      );
  });
  after(() => Promise.all([...servers.values()].map((s) => s.close())));

  const status = async (policy: string, path: string) => {
    const r = await fetch(`${servers.get(policy)!.url}${path}`);
    return [r.status, r.status === 200 ? await r.text() : ''];
  };

  it('serves DokuWiki’s logo, linked out of wwwroot by its owner, by default and with always', async () => {
    for (const policy of ['default', 'ownerMatch', 'always'])
      assert.deepEqual(
        await status(policy, '/lib/tpl/dokuwiki/images/logo.png'),
        [200, 'the wiki logo'],
        policy,
      );
  });

  it('never: nothing outside wwwroot, links inside still followed', async () => {
    assert.deepEqual(await status('never', '/lib/tpl/dokuwiki/images/logo.png'), [404, '']);
    for (const policy of servers.keys())
      assert.deepEqual(await status(policy, '/alias.txt'), [200, 'inside'], policy);
  });

  it(
    'ownerMatch refuses a link whose owner is not its target’s; always follows it',
    { skip: !root && 'changing a link’s owner needs root' },
    async () => {
      assert.deepEqual(await status('default', '/lib/tpl/dokuwiki/images/foreign.png'), [404, '']);
      assert.deepEqual(await status('always', '/lib/tpl/dokuwiki/images/foreign.png'), [
        200,
        'the wiki logo',
      ]);
    },
  );
});
