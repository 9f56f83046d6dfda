// The scgi module's own rows of the property table (config/properties.ts explains the columns).
import { SCOPES, row, type PropertyRows } from '../../config/properties.js';
import { str } from '../../config/types.js';

export const SCGI_PROPERTIES = {
  scgiTo: row({
    type: str('gateway-url'),
    default: 'tcp://localhost:4000/',
    scopes: SCOPES,
    since: '1.0.0',
    summary: 'SCGI target: `tcp://host:port/` or `unix:///path`.',
    listedAfter: 'cgiScriptInterpreters',
  }),
  scgiPath: row({
    type: str('url-path'),
    scopes: SCOPES,
    since: '1.0.0',
    summary: 'URL prefix handled by SCGI; unset, SCGI is inactive.',
  }),
} as const satisfies PropertyRows;
