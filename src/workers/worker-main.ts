// The entry of a worker process; node:cluster starts it with the primary's Node flags.
import { runWorker } from './worker.js';

process.exitCode = await runWorker();
