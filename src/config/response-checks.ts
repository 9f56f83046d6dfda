// What the property table cannot say of the properties that shape responses: the names
// removeHeaders may not take, a respond's fields that do not go together or a body too large, and
// mimeTypes extensions that could never match.
import type { Diagnostics } from './diagnostics.js';
import { NOT_CUSTOM_HEADERS, RESPOND_BODY_MAX } from './properties.js';
import type { Pos, RawEntry, RawNode } from './raw.js';
import type { ScopeRecord } from './validate.js';

const NOT_REMOVABLE: Readonly<Record<string, string>> = {
  ...NOT_CUSTOM_HEADERS,
  'content-length': 'the server sets it from each body, and a client needs it to find the end',
  date: 'a server with a clock must send it (RFC 9110 §6.6.1), and the server adds it to every response',
};

/** Statuses whose responses have no content, so a body could not be sent (RFC 9110 §6.4.1). */
const WITHOUT_CONTENT = new Set([204, 205, 304]);

export function checkResponseSettings(record: ScopeRecord, diags: Diagnostics): void {
  const s = record.settings;
  const entry = (name: string): RawEntry | undefined => record.keys.get(name);
  s.removeHeaders?.forEach((name, i) => {
    const reason = Object.hasOwn(NOT_REMOVABLE, name.toLowerCase())
      ? NOT_REMOVABLE[name.toLowerCase()]
      : undefined;
    if (reason !== undefined)
      diags.error(
        itemPos(entry('removeHeaders')!.value, i),
        `${record.path}.removeHeaders[${i}]`,
        `"${name}" cannot be removed: ${reason}`,
      );
  });
  const respond = s.respond;
  if (respond !== undefined) {
    const at = entry('respond')!;
    const field = (name: string): Pos => keyPos(at, name) ?? at.keyPos;
    const path = `${record.path}.respond`;
    if (respond.abort === true) {
      const others = (['status', 'body', 'contentType'] as const).filter(
        (name) => respond[name] !== undefined,
      );
      if (others.length > 0)
        diags.error(
          field('abort'),
          `${path}.abort`,
          `abort closes the connection without a response: it cannot go with ${others.join(' or ')}`,
        );
    }
    if (respond.body !== undefined) {
      const bytes = Buffer.byteLength(respond.body);
      if (bytes > RESPOND_BODY_MAX)
        diags.error(
          field('body'),
          `${path}.body`,
          `${bytes} bytes is more than a fixed response may hold (${RESPOND_BODY_MAX}); serve a file instead`,
        );
      if (respond.status !== undefined && WITHOUT_CONTENT.has(respond.status))
        diags.error(
          field('body'),
          `${path}.body`,
          `a ${respond.status} response has no content (RFC 9110 §6.4.1), so it cannot carry a body`,
        );
    }
  }
  const seen = new Map<string, string>();
  for (const extension of Object.keys(s.mimeTypes ?? {})) {
    const key = entry('mimeTypes')!;
    const pos = keyPos(key, extension) ?? key.keyPos;
    const at = `${record.path}.mimeTypes.${extension}`;
    const lower = extension.toLowerCase();
    if (extension.indexOf('.', 1) > 0)
      diags.error(
        pos,
        at,
        `only the last extension of a name counts ("${extension.slice(extension.lastIndexOf('.'))}" of "name${extension}")`,
      );
    const first = seen.get(lower);
    if (first !== undefined)
      diags.error(pos, at, `the same extension as "${first}" (extensions ignore case)`);
    else seen.set(lower, extension);
  }
}

function itemPos(node: RawNode, index: number): Pos {
  return node.kind === 'list' ? (node.items[index]?.pos ?? node.pos) : node.pos;
}

function keyPos(entry: RawEntry, key: string): Pos | undefined {
  return entry.value.kind === 'map'
    ? entry.value.entries.find((e) => e.key === key)?.keyPos
    : undefined;
}
