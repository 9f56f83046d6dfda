// The command line run from the TypeScript sources, for the adversarial suite's server processes.
import { main } from '../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
