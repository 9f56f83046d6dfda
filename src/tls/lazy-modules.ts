// Node's TLS, HTTPS and HTTP/2 modules cost about 5 MB of memory once loaded (bench/memory.sh);
// a server without HTTPS never loads them. Type-only imports elsewhere stay free.
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

export const tlsModule = (): typeof import('node:tls') =>
  load('node:tls') as typeof import('node:tls');
export const httpsModule = (): typeof import('node:https') =>
  load('node:https') as typeof import('node:https');
export const http2Module = (): typeof import('node:http2') =>
  load('node:http2') as typeof import('node:http2');
