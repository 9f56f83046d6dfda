// Forwarded authentication (`fauth`, REFERENCE §17 with CONTRACT point 11): before the request goes
// on, a GET to `authTo` carrying its headers asks whether it may. A 2xx lets it through with the
// `forwardedAuthCopyHeaders` of that answer; anything else (a 302 to a login page, a 401) is the
// answer the client gets, headers and body. Works with Authelia, Authentik and oauth2-proxy.
import { defineModule, type ModuleSettings } from '../../plan/module.js';
import { parseBackend } from '../../upstream/backend.js';
import { exchange, type ExchangeFailure } from '../../upstream/exchange.js';
import { upstreamError } from '../../upstream/failures.js';
import { leaseUpstream, poolPolicy } from '../../upstream/pools.js';
import type { PoolPolicy } from '../../upstream/transport.js';
import { forwardedHeaders } from '../../upstream/request-headers.js';
import { replaceRequestHeaders } from './copy-headers.js';
import { FAUTH_PROPERTIES } from './properties.js';

export interface FauthOptions {
  readonly authTo: string;
  /** Lower-cased. */
  readonly copy: readonly string[];
  readonly pools: PoolPolicy;
}

function options(s: ModuleSettings<typeof FAUTH_PROPERTIES>): FauthOptions | undefined {
  if (s.authTo === undefined) return undefined;
  return {
    authTo: s.authTo,
    copy: (s.forwardedAuthCopyHeaders ?? []).map((name) => name.toLowerCase()),
    // Always verified: there is no option to turn it off for authentication (REFERENCE §17).
    pools: poolPolicy(s, { verify: true }),
  };
}

const allowed = (status: number) => status >= 200 && status < 300;

export const fauth = defineModule({
  name: 'fauth',
  properties: FAUTH_PROPERTIES,
  options,
  provision: (o, leases, { errorLog }) => {
    const server = parseBackend(o.authTo);
    // The authentication server's own path and query; the original path is not appended.
    const url = new URL(o.authTo);
    const path = url.pathname + url.search;
    const upstream = leaseUpstream(leases, server, o.pools);
    return {
      stage: async (ctx, next) => {
        const headers = forwardedHeaders(ctx, {
          authority: server.authority,
          xForwarded: true,
          authentication: true,
        });
        let answer: Awaited<ReturnType<typeof exchange>>;
        try {
          answer = await exchange(ctx, upstream, server, {
            method: 'GET',
            path,
            headers,
            body: undefined,
            keep: allowed,
            errorLog,
          });
        } catch (e) {
          throw upstreamError(server, (e as ExchangeFailure).error, 'authentication at');
        }
        // Not allowed: the authentication server's answer has gone to the client.
        if (answer === undefined) return;
        replaceRequestHeaders(ctx.req, answer.headers, o.copy);
        return next(ctx);
      },
    };
  },
});
