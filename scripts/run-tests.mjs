// Runs every test/**/*.test.ts with Node's test runner over tsx. Node 20's --test takes no globs,
// so the files are listed here; extra arguments (e.g. a file or --test-name-pattern) pass through.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function findTests(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'fixtures' ? [] : findTests(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

// The whole suite runs three files side by side: most of a file's time is spent waiting on
// servers, processes and timeouts, not on the CPU. On 2 cores three finish well before two and as
// soon as four, and unlike four still pass beside a second run of the suite. Files named on the
// command line (one file; `npm run fuzz`, whose targets each want a core) run one at a time unless
// --test-concurrency says otherwise.
const CONCURRENCY = 3;

const args = process.argv.slice(2);
const named = args.some((a) => a.endsWith('.ts'));
const files = named ? [] : findTests('test').sort();
const concurrency =
  named || args.some((a) => a.startsWith('--test-concurrency'))
    ? []
    : [`--test-concurrency=${CONCURRENCY}`];
// A test that hangs fails after two minutes instead of holding CI until its own limit.
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-timeout=120000', ...concurrency, ...args, ...files],
  {
    stdio: 'inherit',
  },
);
process.exit(result.status ?? 1);
