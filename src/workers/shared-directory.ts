// Where the workers of one server keep the tables they share (store/lmdb-tables.ts): a directory
// of the primary's, named after its process id, removed when it stops. One left by a primary that
// was killed is removed by the next primary that starts.
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'portico-shared-';

export class SharedDirectory {
  readonly path: string;

  constructor(parent: string = tmpdir()) {
    removeOrphans(parent);
    this.path = join(parent, `${PREFIX}${process.pid}`);
    // A directory left under this id by a process that had it before: nothing in it is ours.
    rmSync(this.path, { recursive: true, force: true });
    mkdirSync(this.path, { mode: 0o700 });
  }

  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

function removeOrphans(parent: string): void {
  for (const name of readdirSync(parent)) {
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length));
    if (!Number.isInteger(pid) || pid <= 0 || alive(pid)) continue;
    try {
      rmSync(join(parent, name), { recursive: true, force: true });
    } catch {
      // Another user's, most likely: theirs to remove, and no reason not to start.
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, under another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
