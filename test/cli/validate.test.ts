// `portico validate` on every broken file kept in test/fixtures/invalid: each must exit 1 and print
// exactly the errors its trailing `expect:` comments list, as FILE:LINE:COL: path: message. The
// cases run main() in this process; one runs the real command line, which must print the same.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, runCli, runMain } from '../helpers/cli.js';

const INVALID = join(ROOT, 'test/fixtures/invalid');
const VALID = join(ROOT, 'test/fixtures/valid');
const WARNINGS = join(ROOT, 'test/fixtures/warnings');
const files = readdirSync(INVALID).sort();

function expectations(file: string): string[] {
  return (
    readFileSync(join(INVALID, file), 'utf8')
      .split('\n')
      .map((line) => /^(?:#|\/\/) expect: (\d+:\d+) (.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      // Messages name resolved paths; <FIXTURES> stands for wherever this checkout is.
      .map((m) => `${file}:${m[1]}: ${m[2]!.replaceAll('<FIXTURES>', join(ROOT, 'test/fixtures'))}`)
  );
}

describe('validate refuses broken configurations', () => {
  it('keeps at least 30 broken files, each with expectations', () => {
    assert.ok(files.length >= 30, `only ${files.length} broken files`);
    for (const f of files) assert.ok(expectations(f).length > 0, `${f} has no expect: line`);
  });

  for (const file of files) {
    it(file, async () => {
      const { code, stdout, stderr } = await runMain(['validate', '-c', file], { cwd: INVALID });
      assert.equal(code, 1, stderr);
      assert.equal(stdout, '');
      const errors = stderr
        .split('\n')
        .filter(
          (l) => l.startsWith(`${file}:`) && !l.includes(': warning: ') && /^\S+:\d+:\d+: /.test(l),
        );
      assert.deepEqual(errors, expectations(file));
      assert.match(
        stderr,
        new RegExp(
          `${file.replace('.', '\\.')}: ${errors.length} errors?, configuration not valid\\n$`,
        ),
      );
    });
  }
});

describe('validate accepts the samples', () => {
  for (const file of ['everything.yaml', 'everything.kdl']) {
    it(`${file}: exit 0, "configuration OK", no warnings`, async () => {
      const { code, stdout, stderr } = await runMain(['validate', '--config', file], {
        cwd: VALID,
      });
      assert.equal(stderr, '');
      assert.equal(stdout, 'configuration OK\n');
      assert.equal(code, 0);
    });
  }

  // Unknown properties among them: Ferron 1.x starts with them, and so does Portico.
  for (const file of readdirSync(WARNINGS).sort())
    it(`${file}: prints its warnings and still exits 0; --strict refuses it`, async () => {
      const { code, stdout, stderr } = await runMain(['validate', '-c', file], { cwd: WARNINGS });
      assert.equal(code, 0);
      assert.equal(stdout, 'configuration OK\n');
      const lines = stderr.trimEnd().split('\n');
      const expected = readFileSync(join(WARNINGS, file), 'utf8')
        .split('\n')
        .map((l) => /^(?:#|\/\/) expect: (\d+:\d+) (.*)$/.exec(l))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => `${file}:${m[1]}: warning: ${m[2]}`);
      assert.deepEqual(lines, expected);
      const strict = await runMain(['validate', '--strict', '-c', file], { cwd: WARNINGS });
      assert.equal(strict.code, 1);
      assert.equal(strict.stdout, '');
      assert.equal(
        strict.stderr,
        `${stderr}${file}: ${expected.length} warning${expected.length === 1 ? '' : 's'}, refused by --strict\n`,
      );
    });
});

describe('the real command line', () => {
  it('prints what main() prints and exits with its status, for a broken file and a sample', async () => {
    const broken = 'check-every-error.yaml';
    assert.deepEqual(
      await runCli(['validate', '-c', broken], { cwd: INVALID }),
      await runMain(['validate', '-c', broken], { cwd: INVALID }),
    );
    assert.deepEqual(await runCli(['validate', '-c', 'everything.yaml'], { cwd: VALID }), {
      code: 0,
      stdout: 'configuration OK\n',
      stderr: '',
    });
  });
});
