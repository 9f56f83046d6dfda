// The wsgi module's rows of the property table (config/properties.ts explains the columns): its own,
// and those it shares with the other Python modules.
import { SCOPES, row, type PropertyRows } from '../../config/properties.js';
import { str } from '../../config/types.js';
import { PYTHON_PROPERTIES, WSGI_SHARED_PROPERTIES } from '../../python/properties.js';

export const WSGI_PROPERTIES = {
  ...WSGI_SHARED_PROPERTIES,
  ...PYTHON_PROPERTIES,
  wsgiApplicationPath: row({
    type: str('path'),
    scopes: SCOPES,
    since: '1.1.0',
    summary:
      'File defining `application`, a WSGI callable, run in one Python process on a pool of threads (see docs/python.md).',
    listedAfter: 'disableProxyCertificateVerification',
  }),
  wsgiPath: row({
    type: str('url-path'),
    default: '/',
    scopes: SCOPES,
    since: '1.1.0',
    summary:
      'URL prefix handled by the WSGI application (at a segment boundary); it is `SCRIPT_NAME`, the rest `PATH_INFO`.',
  }),
} as const satisfies PropertyRows;
