// `portico passwd [USERNAME]`: hashes a password for HTTP basic authentication and prints the
// entry to paste into the `users` list of the configuration.
import { stringify } from 'yaml';
import { hashPassword } from '../auth/password.js';
import type { CommandIo } from './io.js';

const USAGE = `Usage: portico passwd [USERNAME]

Hashes a password with Argon2id (Ferron's parameters) and prints the entry for the
\`users\` list of the configuration:

  - name: USERNAME
    pass: "$argon2id$v=19$m=19456,t=2,p=1$..."

On a terminal, asks for USERNAME if it is not given, then for the password twice,
without echoing it. Otherwise reads the password from the first line of standard
input, and USERNAME must be given.
`;

// Thrown out of a terminal prompt when the user gives up (Ctrl-C, Ctrl-D, hang-up).
class Aborted extends Error {
  constructor(readonly exitCode: number) {
    super('aborted');
  }
}

/** Runs the command; resolves to the exit code. `io` is the process's streams, or fakes in tests. */
export async function passwd(args: string[], io: CommandIo): Promise<number> {
  const fail = (exitCode: number, message: string): number => {
    io.stderr.write(`portico passwd: ${message}\n`);
    return exitCode;
  };

  let name: string | undefined;
  let options = true;
  for (const arg of args) {
    if (options && (arg === '--help' || arg === '-h')) {
      io.stdout.write(USAGE);
      return 0;
    }
    if (options && arg === '--') options = false;
    else if (options && arg.startsWith('-')) return fail(2, `unknown option ${arg} (see --help)`);
    else if (name === undefined) name = arg;
    else return fail(2, 'expected at most one USERNAME (see --help)');
  }

  let password: string;
  if (io.stdin.isTTY) {
    const terminal = openTerminal(io.stdin, io.stderr);
    try {
      name ??= await terminal.readLine('Username: ', true);
      const problem = nameProblem(name);
      if (problem) return fail(2, problem);
      password = await terminal.readLine('Password: ', false);
      // An empty password is refused below; asking to confirm it first would only waste a step.
      if (password !== '' && (await terminal.readLine('Confirm password: ', false)) !== password) {
        return fail(1, 'the passwords do not match');
      }
    } catch (error) {
      if (!(error instanceof Aborted)) throw error;
      return error.exitCode === 130 ? 130 : fail(error.exitCode, 'aborted');
    } finally {
      terminal.close();
    }
  } else {
    if (name === undefined) {
      return fail(2, 'standard input is not a terminal, so pass USERNAME as an argument');
    }
    const problem = nameProblem(name);
    if (problem) return fail(2, problem);
    password = await readFirstLine(io.stdin);
  }

  if (password === '') return fail(1, 'refusing an empty password');
  const hash = await hashPassword(password);
  // The name is user text, so yaml quotes it only when YAML needs that (lineWidth 0: never
  // folded). The hash needs no escaping; a JSON string is a valid YAML double-quoted scalar.
  const yamlName = stringify(name, { lineWidth: 0 }).trimEnd();
  io.stdout.write(`- name: ${yamlName}\n  pass: ${JSON.stringify(hash)}\n`);
  return 0;
}

// Basic authentication splits `user:password` at the first colon, so a name with one could never
// log in; control characters have no business in a name and would garble the YAML and terminal.
function nameProblem(name: string): string | null {
  if (name === '') return 'USERNAME must not be empty';
  if (/[:\p{Cc}]/u.test(name)) return 'USERNAME must not contain ":" or control characters';
  return null;
}

// The password from a pipe or file: its first line without the line ending. Reading stops there,
// so an endless producer (`yes pw | portico passwd alice`) cannot make this wait forever.
async function readFirstLine(input: NodeJS.ReadStream): Promise<string> {
  input.setEncoding('utf8');
  let text = '';
  for await (const chunk of input) {
    text += chunk;
    const end = text.indexOf('\n');
    if (end !== -1) return text.slice(0, end).replace(/\r$/, '');
  }
  return text;
}

// Line input from a terminal in raw mode: nothing is echoed unless asked for, and Ctrl-C and
// Ctrl-D arrive as characters rather than as a signal and an end of file, so they can abort
// cleanly with the terminal restored.
function openTerminal(input: NodeJS.ReadStream, output: NodeJS.WritableStream) {
  let pending = ''; // typed (or pasted) ahead of the current prompt
  let ended = false;
  let wake = (): void => {};
  const onData = (chunk: string): void => {
    pending += chunk;
    wake();
  };
  const onEnd = (): void => {
    ended = true;
    wake();
  };
  input.setEncoding('utf8');
  input.setRawMode(true);
  input.on('data', onData).on('end', onEnd);

  async function readLine(prompt: string, echo: boolean): Promise<string> {
    output.write(prompt);
    let line = '';
    for (;;) {
      while (pending === '') {
        if (ended) throw new Aborted(1);
        await new Promise<void>((resolve) => (wake = resolve));
      }
      const [char = ''] = pending; // one code point
      pending = pending.slice(char.length);
      if (char === '\r' || char === '\n') {
        output.write('\n');
        return line;
      } else if (char === '\x03') {
        output.write('^C\n');
        throw new Aborted(130);
      } else if (char === '\x04') {
        output.write('\n');
        throw new Aborted(1);
      } else if (char === '\x7f' || char === '\b') {
        if (echo && line !== '') output.write('\b \b');
        line = line.replace(/.$/su, '');
      } else {
        line += char;
        if (echo) output.write(char);
      }
    }
  }

  function close(): void {
    input.off('data', onData).off('end', onEnd);
    input.setRawMode(false);
    input.pause(); // lets the process exit
  }

  return { readLine, close };
}
