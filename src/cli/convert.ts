// `portico convert FILE [--to kdl|yaml]`: the file in the other syntax on stdout. The whole
// configuration (includes too) is validated first; placeholders and include lines are kept.
import { readFile } from 'node:fs/promises';
import { attachComments, commentsOf } from '../config/comments.js';
import { toKdl, toYaml } from '../config/convert.js';
import { Diagnostics } from '../config/diagnostics.js';
import { loadConfig, parseText, syntaxOf, type Syntax } from '../config/load.js';
import { PROPERTY_TABLE } from '../modules/registry.js';
import { configChecks } from '../server/config-checks.js';
import { printDiagnostics } from './config-file.js';
import type { CommandIo } from './io.js';

export async function convertCommand(
  file: string | undefined,
  to: string | undefined,
  io: CommandIo,
): Promise<number> {
  if (!file) {
    io.stderr.write('usage: portico convert FILE [--to kdl|yaml]\n');
    return 2;
  }
  const from = syntaxOf(file);
  if (!from) {
    io.stderr.write(`${file}: unsupported configuration file type (use .yaml, .yml or .kdl)\n`);
    return 1;
  }
  if (to !== undefined && to !== 'kdl' && to !== 'yaml') {
    io.stderr.write(`--to takes kdl or yaml, not ${JSON.stringify(to)}\n`);
    return 2;
  }
  const target: Syntax = (to as Syntax | undefined) ?? (from === 'yaml' ? 'kdl' : 'yaml');
  const properties = PROPERTY_TABLE;
  const checked = await loadConfig(file, {
    keepPlaceholders: true,
    properties,
    checks: configChecks(),
  });
  printDiagnostics(checked.diagnostics, io);
  if (!checked.config) return 1;
  const diags = new Diagnostics();
  const text = await readFile(file, 'utf8');
  const own = parseText(text, from, file, diags, properties);
  if (!own || own.kind !== 'map') return 1;
  const end = attachComments(own, commentsOf(text, from));
  io.stdout.write(target === 'kdl' ? toKdl(own, properties, end) : toYaml(own, properties, end));
  return 0;
}
