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
  {
    title: 'Global and host properties',
    test: (r) => r.scopes.length === 2 && r.scopes.join() === 'global,host',
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
\`validate\` checks what \`run\` checks before it listens (certificates, log files, application files,
interpreters); \`portico validate --apps FILE\` also starts the Python applications as \`run\` does
(each imported) and stops them again.
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
  variable is an error. Ferron's overrides (\`FERRON_PORT\`, \`FERRON_CERT\`, \`FERRON_SNI_*_CERT\`,
  \`FERRON_ENV_*\`…, and the same names with \`PORTICO_\`) set global properties over the files:
  docs/running.md, Environment overrides.
- **Merging**: settings of global → host → location → errorConfig are merged when the configuration
  is loaded: scalars replace; \`proxyTo\`, \`secureProxyTo\`, \`indexFiles\` and \`respond\` replace;
  \`allow\` and \`deny\` are one rule list, and a scope that sets either replaces both (as nginx's
  access rules); other lists concatenate, parent first (a location's \`rateLimit\` entries apply
  beside its host's and the global ones); mappings merge key by key, the child winning (header names
  compared case-insensitively).
- **Response headers**: each response's head is finished in one order: \`removeHeaders\` takes names
  out (a backend's \`X-Powered-By\`, the \`Server\` header), \`setHeaders\` replaces or adds, then
  \`customHeaders\` adds what is still absent, for every response (files, errors, redirects, cached,
  proxied, CGI, FastCGI, SCGI and Python ones).
- **Logs**: \`logFilePath\`, \`errorLogFilePath\` and \`logFormat\` may also be set in a host: its
  requests and errors go to its own files, in its own format; requests no host matched and the
  server's own messages go to the global ones. Hosts naming the same file share it. The formats,
  their fields and GoAccess invocations are in [running.md](running.md#log-formats).
- **Sensitive** values (private key paths, passwords, the admin token, every
  \`environmentVariables\` value, custom or set headers that carry a credential such as \`Authorization\`,
  \`Cookie\` or \`X-Api-Key\`, credentials in URLs) are shown as \`"[redacted]"\` by the admin API's
  \`/config\`.
- **Errors** are reported all at once as \`FILE:LINE:COL: path: message\`; warnings (exit status 0)
  as \`FILE:LINE:COL: warning: path: message\`.
`;

const LOCATIONS = `## Locations

A request finds its location in nginx's order:

1. Its host is chosen (\`domain\`, \`ip\`), else the global configuration answers it.
2. The longest prefix location is found: among the host's locations without a condition, the one
   whose \`path\` is the longest that equals the request's path or lies above it at a \`/\`
   (\`/api\` takes \`/api\` and \`/api/x\`, never \`/apix\`).
3. The locations with a condition (\`pathRegex\`, \`matchMethods\`, \`matchHeaders\`,
   \`matchQuery\`) are tried in file order, and the first whose conditions all hold (its \`path\`
   too, when it has one) answers instead. When none holds, the prefix location answers, or the host
   itself when there is none.

A location with a condition may leave out \`path\`: it then takes any path its conditions accept
(in KDL, \`location { pathRegex r"\\.css$" … }\`). Its settings are its host's and its own, never
those of the prefix location it wins over.

- \`path\` and \`pathRegex\` read the path the prefix look-up reads: sanitized and URL-decoded,
  without the query (\`/a/../b%2Ecss\` is \`/b.css\`), before \`rewriteMap\` runs, so a rewrite
  does not move a request to another location.
- \`matchMethods\` compares the method as sent, case-sensitively: \`HEAD\` is listed beside \`GET\`
  where it should go the same way.
- \`matchHeaders\` names compare case-insensitively; the value is the field as received, a field
  sent twice being \`a, b\`. \`matchQuery\` reads each parameter's URL-decoded values (\`+\` is a
  space; \`?debug\` has the value ""), and holds when one of them matches. An absent header or
  parameter never matches.
- Patterns are Rust \`regex\` syntax, as in \`rewriteMap\`, and are searched for, not anchored:
  write \`^…$\` to match a whole value.

A worked example:

\`\`\`yaml
hosts:
  - domain: example.com
    wwwroot: /var/www/example
    locations:
      - path: /static                        # 1
        customHeaders:
          Cache-Control: no-cache
      - pathRegex: "\\\\.(css|js)$"             # 2
        customHeaders:
          Cache-Control: "public, max-age=31536000, immutable"
      - path: /api                           # 3
        matchMethods: [POST, PUT, PATCH, DELETE]
        proxyTo: http://127.0.0.1:3001
      - path: /api                           # 4
        proxyTo: http://127.0.0.1:3000
      - matchHeaders:                        # 5
          X-Canary: "^on$"
        proxyTo: http://127.0.0.1:3002
\`\`\`

| Request | Location | Why |
|---|---|---|
| \`GET /static/logo.png\` | 1 | the longest prefix; no condition holds |
| \`GET /static/app.css\` | 2 | its pattern holds, which wins over the prefix \`/static\` |
| \`GET /app.js\` with \`X-Canary: on\` | 2 | 2 and 5 both hold; 2 comes first in the file |
| \`POST /api/orders\` | 3 | path and method hold |
| \`GET /api/orders\` | 4 | 3's method does not hold: the longest prefix answers |
| \`GET /about\` with \`X-Canary: on\` | 5 | no path to match, its header holds |
| \`GET /about\` | the host | no prefix, no condition |

\`portico explain -c portico.yaml http://example.com/static/app.css\` prints which host and location
a request lands on and why, the settings there and the stages that run, without starting anything.

A request that no conditional location takes has tried them all, as in nginx; their path
patterns are joined into one, so that a path none of them can match costs a single search. What the patterns read is bounded by the request head: 16 KB over HTTP/1.1
(beyond it, 414 or 431), 64 KB of fields over HTTP/2 (\`http2Settings.maxHeaderListSize\`). Within
that, a pattern's time is the operator's choice: the engine backtracks, so nested repetitions
(\`(a+)+$\`) can take exponential time, and a pattern that may start anywhere and begins with a
repetition (\`.*\\.php$\`, \`[^/]+\\.gz$\`) takes time growing with the square of the input's
length. \`portico validate\` warns of the latter; anchored (\`^.*\\.php$\`) or begun with a literal
(\`/[^/]+\\.gz$\`), the same pattern runs in linear time.
`;

export function referenceMarkdown(table: PropertyTable): string {
  const parts = [INTRO, LOCATIONS];
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
