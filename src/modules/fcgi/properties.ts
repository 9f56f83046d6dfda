// The fcgi module's own rows of the property table (config/properties.ts explains the columns).
import { SCOPES, row, type PropertyRows } from '../../config/properties.js';
import { list, str } from '../../config/types.js';

export const FCGI_PROPERTIES = {
  fcgiScriptExtensions: row({
    type: list(str('file-extension')),
    scopes: SCOPES,
    since: '1.0.0',
    summary: 'Extensions handled via FastCGI outside the FastCGI path.',
    listedAfter: 'scgiPath',
  }),
  fcgiTo: row({
    type: str('gateway-url'),
    default: 'tcp://localhost:4000/',
    scopes: SCOPES,
    since: '1.0.0',
    summary: 'FastCGI target: `tcp://host:port/` or `unix:///path`.',
    example:
      'global:\n  loadModules: [fcgi]\n  fcgiScriptExtensions: [.php]\n  fcgiTo: unix:///run/php/php-fpm.sock\n',
  }),
  fcgiPath: row({
    type: str('url-path'),
    scopes: SCOPES,
    since: '1.0.0',
    summary: 'URL prefix handled by FastCGI; unset, the client is inactive.',
  }),
} as const satisfies PropertyRows;
