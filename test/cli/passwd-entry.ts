// `portico passwd` on the real process streams, for the pseudo-terminal tests in passwd.test.ts
// (not a test itself: the runner only picks up *.test.ts).
import { passwd } from '../../src/cli/passwd.js';

process.exitCode = await passwd(process.argv.slice(2), process);
