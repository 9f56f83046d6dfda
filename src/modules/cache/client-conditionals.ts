// A client's own conditional GET or HEAD answered from a stored response (RFC 9111 §4.3.2): 304
// when If-None-Match names its tag (weak comparison), or, without If-None-Match, when it was not
// modified since If-Modified-Since (its Last-Modified, else its Date).
import type { IncomingHttpHeaders } from 'node:http';
import type { RawHeaders } from '../../http/respond.js';
import { fieldValue, httpDate } from './fields.js';
import { weakTag, type StoredResponse } from './stored-response.js';

export function isNotModified(entry: StoredResponse, request: IncomingHttpHeaders): boolean {
  const ifNoneMatch = request['if-none-match'];
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch.trim() === '*') return true;
    if (entry.etag === undefined) return false;
    const tag = weakTag(entry.etag);
    return ifNoneMatch.split(',').some((t) => weakTag(t) === tag);
  }
  const since = httpDate(request['if-modified-since']);
  if (since === undefined) return false;
  const modified = httpDate(entry.lastModified ?? fieldValue(entry.headers, 'date'));
  return modified !== undefined && modified <= since;
}

// What a 304 carries of the response it stands for (RFC 9110 §15.4.5).
const NOT_MODIFIED_FIELDS = new Set([
  'cache-control',
  'content-location',
  'date',
  'etag',
  'expires',
  'vary',
]);

export function notModifiedFields(headers: RawHeaders): RawHeaders {
  const out: RawHeaders = [];
  for (let i = 0; i < headers.length; i += 2)
    if (NOT_MODIFIED_FIELDS.has(headers[i]!.toLowerCase())) out.push(headers[i]!, headers[i + 1]!);
  return out;
}
