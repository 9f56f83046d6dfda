// What compresses, by Content-Type: an allow list, as nginx's gzip_types and Caddy's encode
// matcher are, so an unknown binary (application/octet-stream, a response without a type) is sent
// as it is instead of costing CPU for nothing. Static files and dynamic responses use the same list;
// docs/running.md lists it.

/** Types other than text/* that are text underneath or compress well. */
const COMPRESSIBLE_TYPES: ReadonlySet<string> = new Set([
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'application/json',
  'application/xml',
  'application/xhtml+xml',
  'application/rss+xml',
  'application/atom+xml',
  'application/wasm',
  'application/x-sh',
  'application/x-httpd-php',
  'application/rtf',
  'application/toml',
  'application/yaml',
  'application/x-yaml',
  'application/graphql',
  'application/sql',
  'application/vnd.ms-fontobject',
  'application/x-font-ttf',
  'application/x-font-otf',
  'font/ttf',
  'font/otf',
  'font/collection',
  'image/svg+xml',
  'image/bmp',
  'image/x-ms-bmp',
  'image/x-icon',
  'image/vnd.microsoft.icon',
]);

/** A Content-Type's media type, parameters and case left out; '' when there is none. */
export function mediaType(contentType: string | undefined): string {
  if (contentType === undefined) return '';
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** Whether a body of this media type (mediaType's form) is worth compressing, size aside. */
export function isCompressibleType(type: string): boolean {
  return (
    type.startsWith('text/') ||
    type.endsWith('+json') ||
    type.endsWith('+xml') ||
    COMPRESSIBLE_TYPES.has(type)
  );
}
