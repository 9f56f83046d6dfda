// A location's `path` as the look-ups compare it: normalised once at compile time, then matched
// against the URL-decoded request path at a segment boundary (`/api` takes `/api` and `/api/x`,
// never `/apix`).

/** Trailing slashes removed and `//` collapsed: "" for "/". */
export function locationPrefix(path: string): string {
  return path.replace(/\/{2,}/g, '/').replace(/\/+$/, '');
}

/** Whether `decodedPath` equals `prefix` (a locationPrefix) or lies below it. */
export function underPrefix(decodedPath: string, prefix: string): boolean {
  return (
    decodedPath.startsWith(prefix) &&
    (decodedPath.length === prefix.length || decodedPath.charCodeAt(prefix.length) === 47)
  );
}
