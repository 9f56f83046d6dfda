// glibc's malloc keeps what a flood of connections freed inside its heap and gives back only the
// top of it; malloc_trim(0) returns every free page. There is no public Node API for it, so it is
// reached through koffi, an optional dependency: without koffi, or on a C library that has no
// malloc_trim (musl, macOS), there is nothing to call and the memory is reused by the next surge.

import { createRequire } from 'node:module';

/**
 * A function that gives the C allocator's free pages back to the system, or undefined where that
 * cannot be done. Loads koffi's native part on the first call only: a process that never trims
 * (a command, a test without `--expose-gc`) never maps it.
 */
export function allocatorTrim(): (() => void) | undefined {
  if (found === undefined) found = { trim: findMallocTrim() };
  return found.trim;
}

let found: { readonly trim: (() => void) | undefined } | undefined;

function findMallocTrim(): (() => void) | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    // The running program's own symbols, which include the C library it was linked with.
    const mallocTrim = koffi.load(null).func('int malloc_trim(size_t pad)');
    return () => mallocTrim(0);
  } catch {
    return undefined;
  }
}
