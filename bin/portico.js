#!/usr/bin/env node
// The command line. The TypeScript sources are compiled to dist/ by `npm install` (prepare).
// `run` starts the server with Node's flags (dist/cli/node-flags.js), whatever started this.
import { launch } from '../dist/cli/launcher.js';

process.exitCode = await launch(process.argv.slice(2), import.meta.filename);
