// The `asgi` module (ASGI 3, REFERENCE-behaviour.md §18): the application on one asyncio loop in
// one Python process: HTTP, WebSocket (HTTP/1.1 upgrade and HTTP/2 extended CONNECT) and lifespan.
import { pythonModule } from '../../python/module.js';
import { ASGI_PROPERTIES } from './properties.js';

export const asgi = pythonModule('asgi', ASGI_PROPERTIES, (s) => ({
  executable: s.pythonExecutable,
  application: s.asgiApplicationPath,
  path: s.asgiPath,
  clearImportPath: s.asgiClearModuleImportPath,
}));
