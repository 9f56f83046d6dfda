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

const args = process.argv.slice(2);
const files = args.some((a) => a.endsWith('.ts')) ? [] : findTests('test').sort();
// A test that hangs fails after two minutes instead of holding CI until its own limit.
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-timeout=120000', ...args, ...files],
  {
    stdio: 'inherit',
  },
);
process.exit(result.status ?? 1);
