import { statSync } from 'node:fs';

// System errors in words for messages a person reads ("no such file or directory", not ENOENT);
// the code stays in brackets for searching. Node 20 has no util.getSystemErrorMessage.

const WORDS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file or directory',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
  EIO: 'input/output error',
  ENXIO: 'no such device or address',
  EBUSY: 'resource busy',
};

/** `no such file or directory (ENOENT)` for a system error; the message for any other. */
export function inWords(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== undefined && WORDS[code] !== undefined) return `${WORDS[code]} (${code})`;
  return code ?? (error as Error).message;
}

/** The same for a bare code. */
export function codeInWords(code: string): string {
  return WORDS[code] === undefined ? code : `${WORDS[code]} (${code})`;
}

/** What is wrong with a path that should be `kind`, in words, or undefined when it is one. */
export function pathProblem(path: string, kind: 'directory' | 'file'): string | undefined {
  try {
    const stats = statSync(path);
    if (kind === 'directory' ? stats.isDirectory() : stats.isFile()) return undefined;
    return `not a ${kind === 'directory' ? 'directory' : 'regular file'}`;
  } catch (e) {
    return inWords(e);
  }
}
