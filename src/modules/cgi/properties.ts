// The cgi module's own rows of the property table (config/properties.ts explains the columns).
import { SCOPES, row, type PropertyRows } from '../../config/properties.js';
import { list, mapOf, nullable, str } from '../../config/types.js';

export const CGI_PROPERTIES = {
  cgiScriptExtensions: row({
    type: list(str('file-extension')),
    scopes: SCOPES,
    since: '1.0.0',
    summary: 'Extensions handled by CGI outside the cgi-bin directory.',
    example: 'global:\n  loadModules: [cgi]\n  cgiScriptExtensions: [.php, .cgi]\n',
    listedAfter: 'maximumCacheResponseSize',
  }),
  cgiScriptInterpreters: row({
    type: mapOf('extension', nullable(list(str(), { nonEmpty: true })), {
      keyFormat: 'file-extension',
    }),
    scopes: SCOPES,
    since: '1.0.0',
    summary:
      'Key: extension. Value: the interpreter and its first arguments, or null to remove a default interpreter. Defaults exist for .pl, .py, .sh, .ksh, .csh, .rb and .php.',
    example:
      'global:\n  loadModules: [cgi]\n  cgiScriptInterpreters:\n    .php: [/usr/bin/php-cgi, -c, /etc/php/php.ini]\n    .sh: null\n',
  }),
} as const satisfies PropertyRows;
