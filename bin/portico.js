#!/usr/bin/env -S node --max-semi-space-size=8
// The command line. The TypeScript sources are compiled to dist/ by `npm install` (prepare).
// The flag caps V8's young generation at 2 × 8 MiB: under load the default (2 × 16 MiB) costs
// ~20 MB more memory and is slower (bench/memory.sh, bench/static.sh). `node bin/portico.js`
// bypasses this line; pass the flag there too (npm start does).
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
