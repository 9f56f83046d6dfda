// The fauth module's own rows of the property table (config/properties.ts explains the columns).
import { SCOPES, row, type PropertyRows } from '../../config/properties.js';
import { list, str } from '../../config/types.js';

export const FAUTH_PROPERTIES = {
  authTo: row({
    type: str('http-url'),
    scopes: SCOPES,
    since: '1.0.0',
    summary:
      'Base URL for forwarded authentication requests: each request is first sent there as a GET to this URL’s own path and query (the original path is not appended), with the client’s headers and `X-Forwarded-For`, `-Proto`, `-Host`, `-Method` and `-Uri` naming the original request. A 2xx lets it through; any other answer is what the client gets.',
    listedAfter: 'fcgiPath',
  }),
  forwardedAuthCopyHeaders: row({
    type: list(str('header-name')),
    scopes: SCOPES,
    since: '1.0.0',
    summary:
      'Response headers copied from the authentication server response to the original request.',
  }),
} as const satisfies PropertyRows;
