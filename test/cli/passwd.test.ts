import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { test, type TestContext } from 'node:test';
import { parse } from 'yaml';
import { verifyPassword } from '../../src/auth/password.js';
import { passwd } from '../../src/cli/passwd.js';

const ARGON2ID = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/;

// Runs passwd() on fake streams: stdin is a pipe (not a TTY) carrying `input`.
async function runPiped(args: string[], input: string) {
  const stdin = new PassThrough();
  stdin.end(input);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const code = await passwd(args, { stdin: stdin as unknown as NodeJS.ReadStream, stdout, stderr });
  return { code, stdout: String(stdout.read() ?? ''), stderr: String(stderr.read() ?? '') };
}

// The single `users` entry printed on stdout, parsed as YAML.
function parseEntry(text: string): { name: string; pass: string } {
  const list: unknown = parse(text);
  assert.ok(Array.isArray(list) && list.length === 1, `one YAML list item expected in ${text}`);
  return list[0] as { name: string; pass: string };
}

test('piped: one line in, one YAML users entry out whose hash verifies', async () => {
  const { code, stdout, stderr } = await runPiped(['alice'], 'correct horse\n');
  assert.equal(code, 0, stderr);
  assert.match(stdout, /^- name: alice\n {2}pass: "\$argon2id\$[^"\n]+"\n$/);
  const entry = parseEntry(stdout);
  assert.equal(entry.name, 'alice');
  assert.match(entry.pass, ARGON2ID);
  assert.equal(await verifyPassword(entry.pass, 'correct horse'), true);
  assert.equal(await verifyPassword(entry.pass, 'correct horse\n'), false);
});

test('piped: strips \\r\\n, keeps inner spaces, and reads only the first line', async () => {
  const crlf = await runPiped(['bob'], ' pass word \r\nsecond line\n');
  assert.equal(crlf.code, 0, crlf.stderr);
  assert.equal(await verifyPassword(parseEntry(crlf.stdout).pass, ' pass word '), true);
  const noNewline = await runPiped(['bob'], 'no newline');
  assert.equal(noNewline.code, 0, noNewline.stderr);
  assert.equal(await verifyPassword(parseEntry(noNewline.stdout).pass, 'no newline'), true);
});

test('piped: names are YAML-quoted only when needed and round-trip', async () => {
  const names = [
    'true',
    '123',
    'a #b',
    ' lead',
    'trail ',
    "o'brien",
    '"q"',
    '- x',
    '*star',
    'ünï €',
  ];
  names.push('long name '.repeat(20)); // longer than yaml's default line width
  for (const name of names) {
    const { code, stdout, stderr } = await runPiped(['--', name], 'pw\n');
    assert.equal(code, 0, stderr);
    assert.equal(parseEntry(stdout).name, name, stdout);
  }
  assert.match((await runPiped(['plain.name'], 'pw\n')).stdout, /^- name: plain\.name\n/);
});

test('piped: refusals', async () => {
  const cases: [string[], string, number, RegExp][] = [
    [[], 'pw\n', 2, /pass USERNAME/],
    [['a:b'], 'pw\n', 2, /":"/],
    [['a\tb'], 'pw\n', 2, /control/],
    [['a\u0085b'], 'pw\n', 2, /control/],
    [[''], 'pw\n', 2, /empty/],
    [['alice'], '\n', 1, /empty password/],
    [['alice'], '', 1, /empty password/],
    [['alice', 'bob'], 'pw\n', 2, /at most one/],
    [['--bogus'], 'pw\n', 2, /unknown option/],
  ];
  for (const [args, input, expected, message] of cases) {
    const { code, stdout, stderr } = await runPiped(args, input);
    assert.equal(code, expected, `${JSON.stringify(args)}: ${stderr}`);
    assert.match(stderr, message);
    assert.equal(stdout, '');
  }
});

test('-- lets a USERNAME start with a dash; --help prints usage', async () => {
  const dashed = await runPiped(['--', '-dash'], 'pw\n');
  assert.equal(dashed.code, 0, dashed.stderr);
  assert.equal(parseEntry(dashed.stdout).name, '-dash');
  const help = await runPiped(['--help'], '');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: portico passwd \[USERNAME\]/);
});

// --- On a real terminal, through util-linux `script`, which runs the command on a pseudo-terminal
// and copies what we write to its stdin into it. ---

const ENTRY = fileURLToPath(new URL('./passwd-entry.ts', import.meta.url));
const hasScript = !spawnSync('script', ['--version']).error;

function skipWithoutScript(t: TestContext): boolean {
  if (hasScript) return false;
  if (process.env.CI) assert.fail('util-linux `script` is required for the terminal tests on CI');
  t.skip('util-linux `script` is not installed');
  return true;
}

const shellQuote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

// Runs passwd on a pty. `steps` pairs a prompt to wait for with the keystrokes to send after it,
// so nothing is typed before raw mode is on (the line discipline would echo it). Resolves to the
// exit code and everything the terminal showed.
function runOnTerminal(args: string[], steps: [prompt: string, keys: string][]) {
  const command = [process.execPath, '--import', 'tsx', ENTRY, ...args].map(shellQuote).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
  });
  let screen = '';
  let seen = 0; // how much of `screen` earlier prompts have consumed
  const pending = [...steps];
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    screen += chunk;
    for (let step = pending[0]; step; step = pending[0]) {
      const at = screen.indexOf(step[0], seen);
      if (at === -1) break;
      seen = at + step[0].length;
      pending.shift();
      child.stdin.write(step[1]);
    }
  });
  return new Promise<{ code: number | null; screen: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`timed out; the terminal showed: ${JSON.stringify(screen)}`));
    }, 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen: screen.replaceAll('\r\n', '\n') });
    });
  });
}

test('terminal: prompts twice without echo and prints a verifying entry', async (t) => {
  if (skipWithoutScript(t)) return;
  const password = 'Sw0rdfish-\u00e9t\u00e9';
  const { code, screen } = await runOnTerminal(
    ['alice'],
    [
      ['Password: ', `${password}x\x7f\r`], // the backspace takes the x back
      ['Confirm password: ', `${password}\r`],
    ],
  );
  assert.equal(code, 0, screen);
  assert.ok(!screen.includes(password.slice(0, 6)), `password echoed: ${JSON.stringify(screen)}`);
  assert.ok(!screen.includes('Username: '));
  const entry = parseEntry(screen.slice(screen.indexOf('- name: ')));
  assert.equal(entry.name, 'alice');
  assert.equal(await verifyPassword(entry.pass, password), true);
});

test('terminal: asks for the username with echo when it is not given', async (t) => {
  if (skipWithoutScript(t)) return;
  const { code, screen } = await runOnTerminal(
    [],
    [
      ['Username: ', 'bobx\x7f\r'],
      ['Password: ', 'pw-1\r'],
      ['Confirm password: ', 'pw-1\r'],
    ],
  );
  assert.equal(code, 0, screen);
  assert.ok(screen.includes('Username: bobx\b \b\n'), JSON.stringify(screen));
  assert.ok(!screen.includes('pw-1'), JSON.stringify(screen));
  const entry = parseEntry(screen.slice(screen.indexOf('- name: ')));
  assert.equal(entry.name, 'bob');
  assert.equal(await verifyPassword(entry.pass, 'pw-1'), true);
});

test('terminal: a mismatched confirmation exits 1 and prints nothing', async (t) => {
  if (skipWithoutScript(t)) return;
  const { code, screen } = await runOnTerminal(
    ['alice'],
    [
      ['Password: ', 'first-secret\r'],
      ['Confirm password: ', 'other-secret\r'],
    ],
  );
  assert.equal(code, 1, screen);
  assert.match(screen, /do not match/);
  assert.ok(!screen.includes('secret'), JSON.stringify(screen));
  assert.ok(!screen.includes('- name:'));
});

test('terminal: Ctrl-C exits 130, Ctrl-D exits 1, an empty password exits 1', async (t) => {
  if (skipWithoutScript(t)) return;
  const interrupted = await runOnTerminal(['alice'], [['Password: ', 'abc\x03']]);
  assert.equal(interrupted.code, 130, interrupted.screen);
  const ended = await runOnTerminal(['alice'], [['Password: ', 'abc\x04']]);
  assert.equal(ended.code, 1, ended.screen);
  assert.match(ended.screen, /aborted/);
  const empty = await runOnTerminal(['alice'], [['Password: ', '\r']]);
  assert.equal(empty.code, 1, empty.screen);
  assert.match(empty.screen, /empty password/);
  for (const run of [interrupted, ended, empty]) assert.ok(!run.screen.includes('- name:'));
});
