// docs/configuration.md, generated from the property table (`npm run docs`; a test fails when the
// committed file is stale). Examples are written once, in YAML, and shown in KDL through `convert`.
import { toKdl } from './convert.js';
import { Diagnostics, formatDiagnostic } from './diagnostics.js';
import type { PropertyTable } from './property-table.js';
import type { PropertyRow } from './properties.js';
import { parseYaml } from './yaml.js';
import { typeName, type ObjectSpec, type Spec } from './types.js';

const SCOPE_SECTIONS: { title: string; test: (r: PropertyRow) => boolean }[] = [
  {
    title: 'Global-only properties',
    test: (r) => r.scopes.length === 1 && r.scopes[0] === 'global',
  },
  { title: 'Host structure', test: (r) => r.scopes.length === 1 && r.scopes[0] !== 'global' },
  {
    title: 'Properties valid in every scope (global, host, location, errorConfig)',
    test: (r) => r.scopes.length === 4,
  },
  {
    title: 'Properties of global, host and location scopes (not errorConfig)',
    test: (r) => r.scopes.length === 3 && !r.scopes.includes('errorConfig'),
  },
];

function defaultText(value: unknown): string {
  return value === undefined ? 'none' : `\`${JSON.stringify(value)}\``;
}

function anchor(name: string): string {
  return name.toLowerCase();
}

function moduleText(table: PropertyTable, name: string): string {
  const m = table.modulesOf(name);
  return m.length === 0 ? '' : m.map((x) => `\`${x}\``).join(', ');
}

/** The KDL twin of a YAML example; an example that does not convert is a bug in the table. */
export function exampleInKdl(yaml: string, properties: PropertyTable): string {
  const diags = new Diagnostics();
  const raw = parseYaml(yaml, 'example', diags);
  if (!raw || raw.kind !== 'map' || diags.hasErrors)
    throw new Error(`bad example:\n${diags.list.map(formatDiagnostic).join('\n')}`);
  return toKdl(raw, properties);
}

function objectOf(spec: Spec): ObjectSpec | undefined {
  if (spec.kind === 'object') return spec;
  if (spec.kind === 'list' || spec.kind === 'nullable') return objectOf(spec.of);
  if (spec.kind === 'map') return objectOf(spec.values);
  return undefined;
}

function sensitiveText(row: PropertyRow): string {
  if (row.sensitive) return 'yes';
  if (row.type.kind === 'map' && row.type.sensitiveValues) return 'values';
  return redactedPart(row.type) ? 'some values' : 'no';
}

/** Which values of a mapping `/config` hides, in words; empty when none. */
function redactedPart(spec: Spec): string {
  if (spec.kind !== 'map') return '';
  if (spec.sensitiveValues) return `every value (each ${spec.keyLabel} is shown)`;
  const names = (spec.sensitiveKeys ?? []).map((k) => `\`${k}\``);
  const words = (spec.sensitiveKeyWords ?? []).map((w) => `\`${w}\``);
  const parts = [
    names.length ? `the values of ${names.join(', ')}` : '',
    words.length ? `of any ${spec.keyLabel} containing ${words.join(', ')}` : '',
  ].filter(Boolean);
  return parts.length ? `${parts.join(' and ')}, compared case-insensitively` : '';
}

function detail(table: PropertyTable, name: string): string {
  const row = table.row(name)!;
  const lines = [`### \`${name}\``, '', row.summary, ''];
  lines.push(
    '| Type | Default | Scopes | Module | Since | Sensitive |',
    '|---|---|---|---|---|---|',
  );
  lines.push(
    `| ${typeName(row.type)} | ${defaultText(row.default)} | ${row.scopes.join(', ')} | ${moduleText(table, name) || '—'} | ${row.since} | ${sensitiveText(row)} |`,
  );
  const redacted = redactedPart(row.type);
  if (redacted) lines.push('', `Redacted in \`/config\`: ${redacted}.`);
  const synonyms = row.synonyms ?? [];
  if (synonyms.length > 0)
    lines.push(
      '',
      `Also accepted: ${synonyms.map((s) => `\`${s}\``).join(', ')} (the same property).`,
    );
  const aliases = Object.entries(table.aliases).filter(
    ([alias, target]) => target === name && !synonyms.includes(alias),
  );
  if (aliases.length > 0) {
    lines.push(
      '',
      `Also accepted, with a warning: ${aliases.map(([a]) => `\`${a}\` (Ferron's spelling)`).join(', ')}.`,
    );
  }
  const fields = objectOf(row.type);
  if (fields) {
    lines.push('', '| Field | Type | Default | Meaning |', '|---|---|---|---|');
    for (const [field, f] of Object.entries(fields.fields)) {
      const notes = [
        f.required ? 'Required.' : '',
        f.sensitive ? 'Sensitive (redacted in `/config`).' : '',
        f.aliases?.length ? `Also accepted as \`${f.aliases.join('`, `')}\`, with a warning.` : '',
      ]
        .filter(Boolean)
        .join(' ');
      lines.push(
        `| \`${field}\` | ${typeName(f.spec)} | ${defaultText(f.default)} | ${f.summary}${notes ? ` ${notes}` : ''} |`,
      );
    }
  }
  if (row.example) {
    lines.push(
      '',
      'YAML:',
      '',
      '```yaml',
      row.example.trimEnd(),
      '```',
      '',
      'KDL:',
      '',
      '```kdl',
      exampleInKdl(row.example, table).trimEnd(),
      '```',
    );
  }
  lines.push('');
  return lines.join('\n');
}

const INTRO = `# Configuration reference

<!-- Generated by \`npm run docs\` from src/config/properties.ts and each module's properties.ts; edit those, not this file. -->

Portico reads Ferron 1.x's YAML (\`.yaml\`, \`.yml\`) or the same model in KDL (\`.kdl\`). Both have
the same property names; \`portico convert FILE\` turns one into the other, comments included, and
\`portico validate FILE\` checks a file without starting anything: every error and warning (a
missing \`wwwroot\` or \`errorPages\` file, a certificate out of its validity period) with its line.
A property Portico does not know is a warning that names the nearest one it knows
(\`unknown property, ignored; did you mean "wwwroot"?\`), and the server starts, as Ferron 1.x does;
\`portico validate --strict FILE\` exits 1 on any warning, for a pipeline that wants none ignored.
\`portico schema\` prints a JSON Schema of the YAML syntax for editors (also in
[portico.schema.json](portico.schema.json)): with the YAML language server, put
\`# yaml-language-server: $schema=./docs/portico.schema.json\` at the top of \`portico.yaml\`.

## Files

- **YAML**: top-level \`global\` (global properties), \`hosts\` (a list of hosts, each with \`domain\`
  and/or \`ip\`, \`locations\` and \`errorConfig\`) and \`include\`.
- **KDL** (KDL 1.0: \`true\`, \`false\`, \`null\` are bare; KDL 2.0's \`#true\` is read too):
  a \`global { … }\` block, \`host domain="…" ip="…" { … }\` blocks with \`location "/path" { … }\` and
  \`errorConfig scode=404 { … }\` inside, and \`include "glob" …\`. A scalar property is a node with one
  argument, a list a node with several, a mapping a node with children, a list of objects the node
  repeated with \`key=value\` properties (or children for list fields). A boolean node without a
  value means \`true\` (\`health\` is \`health true\`).
- **Includes**: \`include\` globs are relative to the file that names them; a glob that matches nothing
  is fine, an unreadable file or an include cycle is an error that names the chain. Included hosts come
  after the including file's; included \`global\` keys are used where the including file does not set
  them (among included files, a later one wins). YAML and KDL files can include each other.
- **Paths**: a relative path (\`wwwroot\`, \`cert\`, \`key\`, log files, error pages, application
  files…) is relative to the directory of the file that holds it, as \`include\` globs are, so a
  configuration works from any working directory.
- **Applications and static files**: a module set on a host (\`proxyTo\`, \`wsgiApplicationPath\`…)
  answers every path of it, \`/static/\` included. To serve files beside an application, set the
  application in \`location "/"\` and a \`wwwroot\` in a \`location "/static"\` (files under
  \`wwwroot/static/\`): the longest matching location wins, and a location's \`wwwroot\` is a root
  under which the whole path is looked up.
- **Environment**: \`{{env.NAME}}\` anywhere in a string is replaced by the variable's value; an unset
  variable is an error.
- **Merging**: settings of global → host → location → errorConfig are merged when the configuration
  is loaded: scalars replace; \`proxyTo\` and \`secureProxyTo\` replace; \`allow\` and \`deny\` are one
  rule list, and a scope that sets either replaces both (as nginx's access rules); other lists
  concatenate, parent first (a location's \`rateLimit\` entries apply beside its host's and the
  global ones); mappings merge key by key, the child winning.
- **Sensitive** values (private key paths, passwords, the admin token, every
  \`environmentVariables\` value, custom headers that carry a credential such as \`Authorization\`,
  \`Cookie\` or \`X-Api-Key\`, credentials in URLs) are shown as \`"[redacted]"\` by the admin API's
  \`/config\`.
- **Errors** are reported all at once as \`FILE:LINE:COL: path: message\`; warnings (exit status 0)
  as \`FILE:LINE:COL: warning: path: message\`.
`;

export function referenceMarkdown(table: PropertyTable): string {
  const parts = [INTRO];
  for (const section of SCOPE_SECTIONS) {
    parts.push(
      `## ${section.title}`,
      '',
      '| Property | Type | Default | Module | Since |',
      '|---|---|---|---|---|',
    );
    for (const name of table.names) {
      const row = table.row(name)!;
      if (!section.test(row)) continue;
      parts.push(
        `| [\`${name}\`](#${anchor(name)}) | ${typeName(row.type)} | ${defaultText(row.default)} | ${moduleText(table, name)} | ${row.since} |`,
      );
    }
    parts.push('');
  }
  parts.push('## Properties in detail', '');
  for (const name of table.names) parts.push(detail(table, name));
  return `${parts.join('\n').trimEnd()}\n`;
}
