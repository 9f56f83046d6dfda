// Which program runs a CGI script (REFERENCE-behaviour.md §16.1): an executable file runs itself
// (the kernel reads its `#!`); otherwise the interpreter for its extension, from the defaults as
// `cgiScriptInterpreters` changes them (a list adds or replaces, null removes). php-cgi for `.php`
// (CONTRACT.md); python3 for `.py`, as Debian names it.
import { extname } from 'node:path';

export const DEFAULT_INTERPRETERS: Readonly<Record<string, readonly string[]>> = {
  '.pl': ['perl'],
  '.py': ['python3'],
  '.sh': ['bash'],
  '.ksh': ['ksh'],
  '.csh': ['csh'],
  '.rb': ['ruby'],
  '.php': ['php-cgi'],
};

export function interpretersWith(
  configured: Readonly<Record<string, readonly string[] | null>> | undefined,
): Record<string, readonly string[]> {
  const table: Record<string, readonly string[]> = { ...DEFAULT_INTERPRETERS };
  for (const [extension, command] of Object.entries(configured ?? {})) {
    const key = extension.toLowerCase();
    if (command === null) delete table[key];
    else table[key] = command;
  }
  return table;
}

export interface CommandOptions {
  /** The file has an execute permission bit: it runs itself. */
  readonly executable: boolean;
  /** Interpreters by lower-cased extension (interpretersWith). */
  readonly interpreters: Readonly<Record<string, readonly string[]>>;
}

/** The command line for a script: itself when executable, else its interpreter; undefined: none. */
export function commandFor(
  filename: string,
  { executable, interpreters }: CommandOptions,
): readonly string[] | undefined {
  if (executable) return [filename];
  const interpreter = interpreters[extname(filename).toLowerCase()];
  return interpreter === undefined ? undefined : [...interpreter, filename];
}
