// Header fields of a response as respond.ts carries them: a flat [name, value, …] list.
import { parseHttpDate } from '../../http/http-date.js';
import type { RawHeaders } from '../../http/respond.js';

/** Every line of a field, joined as one list (RFC 9110 §5.3); undefined when absent. */
export function fieldValue(headers: RawHeaders, lower: string): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name.length !== lower.length || name.toLowerCase() !== lower) continue;
    value = value === undefined ? headers[i + 1]! : `${value}, ${headers[i + 1]!}`;
  }
  return value;
}

/** The list without the fields `drop` names (lower-case). */
export function withoutFields(headers: RawHeaders, drop: ReadonlySet<string>): RawHeaders {
  const out: RawHeaders = [];
  for (let i = 0; i < headers.length; i += 2)
    if (!drop.has(headers[i]!.toLowerCase())) out.push(headers[i]!, headers[i + 1]!);
  return out;
}

/** A comma-separated list field's members, lower-cased (Vary, Connection). */
export function listMembers(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((m) => m.trim().toLowerCase())
    .filter((m) => m !== '');
}

/** An HTTP date in ms since the epoch; undefined when absent or not a date (http-date.ts). */
export const httpDate = parseHttpDate;
