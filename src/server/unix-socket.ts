// The file of a Unix-socket listener. A server that was killed leaves its socket file behind, and
// binding the path again fails: a socket file no one answers on (connecting is refused) is stale
// and removed first. Anything else at the path is left alone: a server answering there is another
// Portico or another program, and a regular file is never Portico's to delete. libuv removes the
// file when the listener closes.
import { chmod, lstat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { ListenError } from './listen-errors.js';

// A peer that neither answers nor refuses within this is taken as busy, not stale.
const PROBE_MS = 1_000;

/** Makes way for binding `path`: nothing there, or a stale socket file removed. */
export async function reclaimStaleSocket(path: string, id: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = (await lstat(path)).isSocket();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new ListenError(`cannot listen on ${id}: ${(e as Error).message}`);
  }
  if (!isSocket)
    throw new ListenError(
      `cannot listen on ${id}: ${path} exists and is not a socket (Portico removes only a stale socket file)`,
    );
  const answer = await probe(path);
  if (answer === 'refused') {
    await unlink(path).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT')
        throw new ListenError(`cannot remove the stale ${path}: ${e.message}`);
    });
    return;
  }
  throw new ListenError(
    `cannot listen on ${id}: ${answer === 'answered' ? 'another server is listening on' : 'cannot tell whether a server still listens on'} ${path}`,
  );
}

function probe(path: string): Promise<'answered' | 'refused' | 'unknown'> {
  return new Promise((resolve) => {
    const socket = connect({ path });
    const done = (answer: 'answered' | 'refused' | 'unknown') => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done('unknown'), PROBE_MS);
    socket.once('connect', () => done('answered'));
    socket.once('error', (e: NodeJS.ErrnoException) =>
      done(e.code === 'ECONNREFUSED' ? 'refused' : 'unknown'),
    );
  });
}

/** `socketMode` ("0660") applied to a socket file just bound. */
export async function applySocketMode(path: string, mode: string): Promise<void> {
  await chmod(path, parseInt(mode, 8));
}

/**
 * Reclaims the Unix sockets of `specs` not in `bound` (paths a running configuration holds): what
 * the primary of worker processes does before they listen, since node:cluster binds for them.
 */
export async function reclaimStaleSockets(
  specs: readonly { readonly id: string; readonly path?: string }[],
  bound: ReadonlySet<string> = new Set(),
): Promise<void> {
  for (const { id, path } of specs)
    if (path !== undefined && !bound.has(path)) await reclaimStaleSocket(path, id);
}
