// `followSymlinks`: whether a path whose real path leaves wwwroot is served. Links that stay inside
// wwwroot are always followed. `ownerMatch` follows one that leaves it only when every link on the
// way has the owner of what it points to (Apache's SymLinksIfOwnerMatch, nginx's
// `disable_symlinks if_not_owner`): a user who can write under wwwroot cannot link to another
// user's files. `always` is Ferron's rule; `never` serves nothing outside wwwroot.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';

export type SymlinkPolicy = 'ownerMatch' | 'always' | 'never';

/** Whether `decodedPath` under `rootReal`, whose real path lies outside it, may be served. */
export async function followsOutside(
  policy: SymlinkPolicy,
  rootReal: string,
  decodedPath: string,
): Promise<boolean> {
  if (policy !== 'ownerMatch') return policy === 'always';
  let path = rootReal;
  for (const part of decodedPath.split('/')) {
    if (part === '') continue;
    path = join(path, part);
    const link = await fsp.lstat(path);
    if (link.isSymbolicLink() && link.uid !== (await fsp.stat(path)).uid) return false;
  }
  return true;
}
