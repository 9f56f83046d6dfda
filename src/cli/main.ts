// The command line: `portico <command> [options]` (CONTRACT.md). Each command lives in its own file;
// this one only reads the arguments and dispatches.
import { parseArgs } from 'node:util';
import { VERSION } from '../version.js';
import type { CommandIo } from './io.js';

// Each command's code is imported when it runs: `run` stays free of convert/schema/passwd code
// (memory of a long-lived server), and `--version` loads almost nothing.

const HELP = `Portico ${VERSION}: a web server and reverse proxy, configured by Ferron 1.x YAML or KDL.

Usage: portico <command> [options]

Commands:
  run [-c FILE]          start the server (SIGHUP reloads, SIGTERM/SIGINT stop gracefully)
  validate [-c] [FILE] [--strict] [--apps]
                         check a configuration; prints "configuration OK" or every error
                         and warning (--strict: a warning fails it too; --apps: start the
                         Python applications as run does, then stop them)
  explain [-c FILE] URL [--method M] [--header 'N: V']...
                         which host and location answer a request and why, the settings
                         there and the stages that run, without starting anything
  convert FILE [--to kdl|yaml]
                         print a configuration in the other syntax
  passwd [USERNAME]      hash a password and print a \`users\` entry
  schema                 print the JSON Schema of the YAML syntax, for editors

Options:
  -c, --config FILE      configuration file; without it portico.kdl, portico.yaml or
                         portico.yml in the working directory, else the built-in default
  -h, --help             show this help
  -V, --version          show the version

Documentation: docs/configuration.md (every property), docs/ in the package.
`;

const processIo: CommandIo = {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
};

export async function main(argv: string[], io: CommandIo = processIo): Promise<number> {
  // `portico schema | head`: a reader that stops early closes the pipe; that is not an error.
  if (io === processIo)
    process.stdout.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') throw e;
      process.exit(0);
    });
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    io.stdout.write(HELP);
    return command === undefined ? 2 : 0;
  }
  if (command === '-V' || command === '--version' || command === 'version') {
    io.stdout.write(`portico ${VERSION}\n`);
    return 0;
  }
  if (command === 'passwd') return (await import('./passwd.js')).passwd(rest, io);

  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(rest);
  } catch (e) {
    io.stderr.write(`portico ${command}: ${(e as Error).message}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(HELP);
    return 0;
  }
  if ((values.strict || values.apps) && command !== 'validate')
    return usage(io, command, `--${values.strict ? 'strict' : 'apps'} is for validate`);
  if ((values.method !== undefined || values.header !== undefined) && command !== 'explain')
    return usage(io, command, '--method and --header are for explain');
  switch (command) {
    case 'run':
      if (positionals.length > 0 || values.to !== undefined)
        return usage(io, command, `unexpected argument ${positionals[0] ?? '--to'}`);
      return (await import('./run.js')).runCommand(values.config, io);
    case 'validate':
      // `validate FILE` as `convert FILE` takes it, beside CONTRACT.md's `-c FILE`.
      if (positionals.length > 1 || values.to !== undefined)
        return usage(io, command, `unexpected argument ${positionals[1] ?? '--to'}`);
      if (positionals.length === 1 && values.config !== undefined)
        return usage(io, command, 'give the file once, as FILE or with -c');
      return (await import('./validate.js')).validateCommand(values.config ?? positionals[0], io, {
        strict: values.strict === true,
        apps: values.apps === true,
      });
    case 'explain':
      if (positionals.length !== 1 || values.to !== undefined)
        return usage(io, command, 'expected one URL');
      return (await import('./explain.js')).explainCommand(
        values.config,
        positionals[0]!,
        { method: values.method, headers: values.header ?? [] },
        io,
      );
    case 'convert':
      if (positionals.length > 1 || values.config !== undefined)
        return usage(io, command, 'expected one FILE');
      return (await import('./convert.js')).convertCommand(positionals[0], values.to, io);
    case 'schema': {
      if (positionals.length > 0)
        return usage(io, command, `unexpected argument ${positionals[0]}`);
      const { configSchema } = await import('../config/schema.js');
      const { PROPERTY_TABLE } = await import('../modules/registry.js');
      io.stdout.write(`${JSON.stringify(configSchema(PROPERTY_TABLE), null, 2)}\n`);
      return 0;
    }
    default:
      return usage(io, command, 'unknown command');
  }
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      config: { type: 'string', short: 'c' },
      to: { type: 'string' },
      strict: { type: 'boolean' },
      apps: { type: 'boolean' },
      method: { type: 'string' },
      header: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

function usage(io: CommandIo, command: string, problem: string): number {
  io.stderr.write(`portico ${command}: ${problem} (see portico --help)\n`);
  return 2;
}
