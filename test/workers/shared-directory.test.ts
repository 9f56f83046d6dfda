// The primary's directory for the workers' shared tables: its own, private, gone when removed, and
// one a killed primary left behind removed by the next.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { SharedDirectory } from '../../src/workers/shared-directory.js';

const parent = mkdtempSync(join(tmpdir(), 'portico-shared-test-'));
after(() => rmSync(parent, { recursive: true, force: true }));

it('makes a private directory, removes orphans of dead primaries and keeps live ones', () => {
  const dead = spawnSync(process.execPath, ['-e', '']).pid!;
  const orphan = join(parent, `portico-shared-${dead}`);
  const live = join(parent, `portico-shared-${process.ppid}`);
  mkdirSync(orphan);
  mkdirSync(live);
  const shared = new SharedDirectory(parent);
  assert.equal(shared.path, join(parent, `portico-shared-${process.pid}`));
  assert.equal(statSync(shared.path).mode & 0o777, 0o700);
  assert.equal(existsSync(orphan), false);
  assert.equal(existsSync(live), true);
  shared.remove();
  assert.equal(existsSync(shared.path), false);
});
