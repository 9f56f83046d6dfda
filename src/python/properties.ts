// The rows the Python modules share (config/properties.ts explains the columns): each of wsgi,
// wsgid and asgi brings those it reads, and the table lists such a row once, with all of them.
import { GLOBAL_ONLY, row, type PropertyRows } from '../config/properties.js';
import { bool, str } from '../config/types.js';

/** Read by every Python module. */
export const PYTHON_PROPERTIES = {
  pythonExecutable: row({
    // A command name (looked up in PATH) or a path, so it is not made relative to the file.
    type: str('command'),
    default: 'python3',
    scopes: GLOBAL_ONLY,
    since: 'Portico',
    summary:
      'Interpreter for the wsgi, wsgid and asgi modules: a name looked up on the PATH or a path (the one whose packages the application needs, e.g. `/usr/bin/python3` or a virtualenv’s `bin/python`).',
    listedAfter: 'automaticTLSDirectoryUrl',
  }),
} as const satisfies PropertyRows;

/** Read by wsgi and wsgid: Ferron has no wsgid property of its own for this. */
export const WSGI_SHARED_PROPERTIES = {
  wsgiClearModuleImportPath: row({
    type: bool(),
    default: false,
    scopes: GLOBAL_ONLY,
    since: '1.1.0',
    summary:
      'Removes the application’s directory from `sys.path` once it is loaded (for `wsgi` and `wsgid`); imports inside functions must then not rely on it.',
    listedAfter: 'maximumCacheEntries',
  }),
} as const satisfies PropertyRows;
