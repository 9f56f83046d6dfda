// The asgi module's rows of the property table (config/properties.ts explains the columns): its own,
// and those it shares with the other Python modules.
import { GLOBAL_ONLY, SCOPES, row, type PropertyRows } from '../../config/properties.js';
import { bool, str } from '../../config/types.js';
import { PYTHON_PROPERTIES } from '../../python/properties.js';

export const ASGI_PROPERTIES = {
  ...PYTHON_PROPERTIES,
  asgiClearModuleImportPath: row({
    type: bool(),
    default: false,
    scopes: GLOBAL_ONLY,
    since: '1.1.0',
    summary:
      'Removes the application’s directory from `sys.path` once it is loaded; imports inside functions must then not rely on it.',
    listedAfter: 'wsgiClearModuleImportPath',
  }),
  asgiApplicationPath: row({
    type: str('path'),
    scopes: SCOPES,
    since: '1.1.0',
    summary:
      'File defining `application`, an ASGI 3 callable (HTTP, WebSocket, lifespan), run on an asyncio loop in one Python process.',
    listedAfter: 'wsgidPath',
  }),
  asgiPath: row({
    type: str('url-path'),
    default: '/',
    scopes: SCOPES,
    since: '1.1.0',
    summary:
      'URL prefix handled by the ASGI application (at a segment boundary); it is `root_path`, the rest `path`.',
  }),
} as const satisfies PropertyRows;
