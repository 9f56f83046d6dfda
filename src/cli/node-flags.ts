// The flags every serving Portico process runs Node with, in one place: the launcher
// (launcher.ts) starts `portico run` with them however Portico was started, and the bench scripts
// read them from here. docs/running.md (Memory) says what each costs and saves.

export const NODE_FLAGS: readonly string[] = [
  // V8's young generation capped at 2 × 8 MiB: under load the default (2 × 16 MiB) holds more
  // memory and is slower.
  '--max-semi-space-size=8',
  // After a quiet minute the memory reducer's full GC throws away the request path's compiled
  // code, and the next requests pay for compiling it again.
  '--no-memory-reducer',
  // With the reducer off, an idle server would never collect what a surge left dead: it runs a
  // collection itself (server/surge-gc.ts).
  '--expose-gc',
];

/** Whether this process was started with every one of NODE_FLAGS. */
export function hasNodeFlags(execArgv: readonly string[] = process.execArgv): boolean {
  return NODE_FLAGS.every((flag) => execArgv.includes(flag));
}
