// The `wsgi` module (PEP 3333, REFERENCE-behaviour.md §18): the application in one Python process,
// on a pool of threads (wsgi.multithread).
import { pythonModule } from '../../python/module.js';
import { WSGI_PROPERTIES } from './properties.js';

export const wsgi = pythonModule('wsgi', WSGI_PROPERTIES, (s) => ({
  executable: s.pythonExecutable,
  application: s.wsgiApplicationPath,
  path: s.wsgiPath,
  clearImportPath: s.wsgiClearModuleImportPath,
}));
