// Why a listener could not bind, in the words an operator acts on.

export class ListenError extends Error {}

export function cannotListen(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'EADDRINUSE':
      return 'the address is already in use (another server is listening there)';
    case 'EACCES':
      return 'permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE; a Unix socket, write access to its folder)';
    case 'EADDRNOTAVAIL':
      return 'this machine has no such address';
    case 'ENOENT':
      return 'the Unix socket’s folder does not exist';
    default:
      return err.message;
  }
}
