// The `wsgid` module (PEP 3333, REFERENCE-behaviour.md §18): one Python process per CPU, each
// serving one request at a time (wsgi.multiprocess); a request goes to the less busy of two.
import { pythonModule } from '../../python/module.js';
import { WSGID_PROPERTIES } from './properties.js';

export const wsgid = pythonModule('wsgid', WSGID_PROPERTIES, (s) => ({
  executable: s.pythonExecutable,
  application: s.wsgidApplicationPath,
  path: s.wsgidPath,
  // Ferron has no wsgid property of its own for this; the wsgi one applies.
  clearImportPath: s.wsgiClearModuleImportPath,
}));
