// The modules `loadModules` can name: adding one is its folder under src/modules/ (its stage, its
// property rows) and one line here. The server provisions them in `loadModules` order;
// server/config-checks.ts runs their checks. The build's property table is the core rows and
// theirs: whatever reads a configuration or describes it (the commands, the docs) is given it.
import { propertyTable } from '../config/property-table.js';
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

export const PROPERTY_TABLE = propertyTable(MODULES);
