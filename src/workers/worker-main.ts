// The entry of a worker process; node:cluster starts it with the primary's Node flags.
import { runWorker } from './worker.js';

const status = await runWorker();
// Its channel to the primary would keep a worker that could not start alive: it ends itself.
if (status !== 0) process.exit(status);
