#!/usr/bin/env -S node --max-semi-space-size=8 --no-memory-reducer --expose-gc
// The command line. The TypeScript sources are compiled to dist/ by `npm install` (prepare).
// --max-semi-space-size caps V8's young generation at 2 × 8 MiB: under load the default
// (2 × 16 MiB) costs ~20 MB more memory and is slower (bench/memory.sh, bench/static.sh).
// --no-memory-reducer: after a minute without requests V8's memory reducer runs a full GC that
// lets the object shapes of requests die, and with them the optimized code of ~50 functions of
// the request path; the next requests then pay for compiling it again (a third more CPU per
// request for several seconds; bench/static.sh's header). `node bin/portico.js` bypasses this
// line; pass the flags there too (npm start and bench/ do).
// --expose-gc: with the memory reducer off, an idle server never collects what a surge of
// connections left dead in its heap; the server runs one collection once a surge has passed
// (src/server/surge-gc.ts).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
