// The modules `loadModules` can name: adding one is its folder under src/modules/ and one line
// here. The server provisions them in `loadModules` order; server/config-checks.ts runs their checks.
import type { Module } from '../plan/module.js';
import { cache } from './cache/index.js';
import { cgi } from './cgi/index.js';
import { fauth } from './fauth/index.js';
import { fcgi } from './fcgi/index.js';
import { rproxy } from './rproxy/index.js';
import { scgi } from './scgi/index.js';
import { asgi } from './asgi/index.js';
import { wsgi } from './wsgi/index.js';
import { wsgid } from './wsgid/index.js';

export const MODULES: readonly Module[] = [
  cache,
  fauth,
  rproxy,
  cgi,
  scgi,
  fcgi,
  wsgi,
  wsgid,
  asgi,
];
