// The `wsgi` module (PEP 3333, REFERENCE-behaviour.md §18): the application in one Python process,
// on a pool of threads (wsgi.multithread).
import { pythonModule } from '../../gateway/python-module.js';

export const wsgi = pythonModule('wsgi', (s) => ({
  application: s.wsgiApplicationPath,
  path: s.wsgiPath,
  clearImportPath: s.wsgiClearModuleImportPath,
}));
