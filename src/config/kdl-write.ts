// Raw tree (YAML shape, already validated) → KDL 1.0 text, written the way CONTRACT.md's mapping
// reads it back: scalars as one argument, lists as several, mappings and the admin block as
// children, lists of objects as repeated nodes with key=value properties.
import { own } from './own.js';
import type { PropertyTable } from './property-table.js';
import { entryOf, type RawEntry, type RawMap, type RawNode, type RawScalarValue } from './raw.js';
import type { ObjectSpec, Spec } from './types.js';

const INDENT = '    ';
const BARE_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export function kdlString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (mustEscape(code)) out += `\\u{${code.toString(16)}}`;
    else out += ch;
  }
  return `${out}"`;
}

/**
 * Characters KDL does not allow as themselves in a string (control characters, the direction
 * marks and embeddings, a byte order mark), those it would read as a line break (KDL 2.0), and
 * lone surrogates, which UTF-8 output could not carry. The C1 controls go too, being invisible.
 */
function mustEscape(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x200e ||
    code === 0x200f ||
    (code >= 0x2028 && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069) ||
    (code >= 0xd800 && code <= 0xdfff) ||
    code === 0xfeff
  );
}

export function kdlIdentifier(name: string): string {
  return BARE_IDENTIFIER.test(name) && name !== 'true' && name !== 'false' && name !== 'null'
    ? name
    : kdlString(name);
}

function kdlValue(v: RawScalarValue): string {
  if (typeof v === 'string') return kdlString(v);
  if (v === null) return 'null';
  return String(v);
}

function scalarOf(node: RawNode): string {
  return node.kind === 'scalar' ? kdlValue(node.value) : 'null';
}

/** The whole file, each node written as `properties` says; `endComments` follow its last entry. */
export function writeKdl(
  root: RawMap,
  properties: PropertyTable,
  endComments: readonly string[] = [],
): string {
  const blocks: string[] = [];
  const globalEntry = entryOf(root, 'global');
  const global = globalEntry?.value;
  if (global?.kind === 'map')
    blocks.push(commentLines([globalEntry!], 0) + block('global', scope(global, 1, properties)));
  const hostsEntry = entryOf(root, 'hosts');
  const hosts = hostsEntry?.value;
  if (hosts?.kind === 'list') {
    let lead = commentLines([hostsEntry!], 0);
    for (const host of hosts.items) {
      if (host.kind !== 'map') continue;
      const selectorEntries = host.entries.filter((e) => e.key === 'domain' || e.key === 'ip');
      const selectors = selectorEntries.map((e) => ` ${e.key}=${scalarOf(e.value)}`).join('');
      const rest: RawMap = {
        ...host,
        entries: host.entries.filter((e) => e.key !== 'domain' && e.key !== 'ip'),
      };
      blocks.push(
        lead +
          commentLines(selectorEntries, 0) +
          block(`host${selectors}`, scope(rest, 1, properties)),
      );
      lead = '';
    }
  }
  const includeEntry = entryOf(root, 'include');
  const include = includeEntry?.value;
  if (include) {
    const items = include.kind === 'list' ? include.items : [include];
    blocks.push(
      `${commentLines([includeEntry!], 0)}include${items.map((i) => ` ${scalarOf(i)}`).join('')}\n`,
    );
  }
  if (endComments.length > 0) blocks.push(endComments.map((c) => `//${c}\n`).join(''));
  return blocks.join('\n');
}

/** The comments of these entries, as `//` lines at this depth. */
function commentLines(entries: readonly RawEntry[], depth: number): string {
  const pad = INDENT.repeat(depth);
  return entries
    .flatMap((e) => e.comments ?? [])
    .map((c) => `${pad}//${c}\n`)
    .join('');
}

function block(head: string, body: string[], depth = 0): string {
  const pad = INDENT.repeat(depth);
  return body.length === 0
    ? `${pad}${head} {\n${pad}}\n`
    : `${pad}${head} {\n${body.join('')}${pad}}\n`;
}

function scope(map: RawMap, depth: number, properties: PropertyTable): string[] {
  const lines: string[] = [];
  for (const entry of map.entries) {
    const value = entry.value;
    if ((entry.key === 'locations' || entry.key === 'errorConfig') && value.kind === 'list') {
      lines.push(commentLines([entry], depth));
      for (const item of value.items) {
        if (item.kind !== 'map') continue;
        const lead = entry.key === 'locations' ? 'path' : 'scode';
        const leadValue = entryOf(item, lead)?.value;
        const head =
          entry.key === 'locations'
            ? `location${leadValue ? ` ${scalarOf(leadValue)}` : ''}`
            : `errorConfig${leadValue ? ` scode=${scalarOf(leadValue)}` : ''}`;
        const rest: RawMap = { ...item, entries: item.entries.filter((e) => e.key !== lead) };
        lines.push(
          commentLines(
            item.entries.filter((e) => e.key === lead),
            depth,
          ),
          block(head, scope(rest, depth + 1, properties), depth),
        );
      }
      continue;
    }
    const spec = properties.row(entry.key)?.type;
    lines.push(commentLines([entry], depth), ...property(entry.key, value, spec, depth));
  }
  return lines;
}

/** One property as node(s); `spec` undefined only for names the validator already refused. */
function property(name: string, node: RawNode, spec: Spec | undefined, depth: number): string[] {
  const pad = INDENT.repeat(depth);
  const id = kdlIdentifier(name);
  const s = spec && pick(spec, node);
  if (s?.kind === 'list' && s.of.kind === 'object') {
    // A lone object (`single`) is the one-item list.
    if (node.kind === 'list')
      return node.items.map((item) => objectNode(id, item, s.of as ObjectSpec, depth));
    if (node.kind === 'map' && s.single) return [objectNode(id, node, s.of, depth)];
  }
  if (node.kind === 'list')
    return [`${pad}${id}${node.items.map((i) => ` ${scalarOf(i)}`).join('')}\n`];
  if (node.kind === 'map') {
    if (s?.kind === 'object')
      return [
        block(
          id,
          node.entries.flatMap((e) => [
            commentLines([e], depth + 1),
            ...property(e.key, e.value, own(s.fields, e.key)?.spec, depth + 1),
          ]),
          depth,
        ),
      ];
    const values = s?.kind === 'map' ? s.values : undefined;
    const children = node.entries.map((e) => {
      const valueSpec = values && pick(values, e.value);
      return (
        commentLines([e], depth + 1) +
        (valueSpec?.kind === 'object'
          ? objectNode(kdlIdentifier(e.key), e.value, valueSpec, depth + 1)
          : property(e.key, e.value, values, depth + 1).join(''))
      );
    });
    return [block(id, children, depth)];
  }
  return [`${pad}${id} ${scalarOf(node)}\n`];
}

/** An object inside a list or mapping: scalar fields as properties, the rest as children. */
function objectNode(id: string, node: RawNode, spec: ObjectSpec, depth: number): string {
  const pad = INDENT.repeat(depth);
  if (node.kind !== 'map') return `${pad}${id}\n`;
  const props = node.entries.filter((e) => e.value.kind === 'scalar');
  const nested = node.entries.filter((e) => e.value.kind !== 'scalar');
  const head = `${id}${props.map((e) => ` ${kdlIdentifier(e.key)}=${scalarOf(e.value)}`).join('')}`;
  const lead = commentLines(props, depth);
  if (nested.length === 0) return `${lead}${pad}${head}\n`;
  return (
    lead +
    block(
      head,
      nested.flatMap((e) => [
        commentLines([e], depth + 1),
        ...property(e.key, e.value, own(spec.fields, e.key)?.spec, depth + 1),
      ]),
      depth,
    )
  );
}

/** The branch of a union or nullable spec that this node takes. */
function pick(spec: Spec, node: RawNode): Spec {
  if (spec.kind === 'nullable')
    return node.kind === 'scalar' && node.value === null ? spec : pick(spec.of, node);
  if (spec.kind === 'union') {
    const want = node.kind === 'list' ? 'list' : node.kind === 'map' ? 'map' : 'scalar';
    const option = spec.options.find((o) =>
      want === 'list'
        ? o.kind === 'list'
        : want === 'map'
          ? o.kind === 'map' || o.kind === 'object'
          : o.kind !== 'list' && o.kind !== 'map' && o.kind !== 'object',
    );
    return option ?? spec;
  }
  return spec;
}
