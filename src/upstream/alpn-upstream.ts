// An HTTPS backend under `proxyHTTP2`: each new connection offers h2 and HTTP/1.1 by ALPN, as
// Caddy's does. While the backend chooses h2, requests go to the HTTP/2 session pool; once it
// chooses HTTP/1.1 they go to an undici pool from then on (what waited for the answer too), and
// so do WebSocket handshakes, which the HTTP/1.1 pool upgrades.
import type { Backend } from './backend.js';
import { Http2Pool } from './http2-pool.js';
import type {
  UpstreamDispatcher,
  UpstreamHandler,
  UpstreamRequest,
  PoolPolicy,
} from './transport.js';

export class AlpnUpstream implements UpstreamDispatcher {
  private readonly http2: Http2Pool;
  private http1: UpstreamDispatcher | undefined;
  /** The backend chose HTTP/1.1. */
  private choseHttp1 = false;

  constructor(
    backend: Backend,
    policy: PoolPolicy,
    private readonly makeHttp1: () => UpstreamDispatcher,
  ) {
    this.http2 = new Http2Pool(backend, policy, {
      onHttp1: (waiting) => {
        this.choseHttp1 = true;
        for (const { options, handler } of waiting) this.pool1().dispatch(options, handler);
      },
    });
  }

  dispatch(options: UpstreamRequest, handler: UpstreamHandler): boolean {
    return this.choseHttp1 || options.upgrade
      ? this.pool1().dispatch(options, handler)
      : this.http2.dispatch(options, handler);
  }

  close(): Promise<void> {
    return Promise.all([this.http2.close(), this.http1?.close()]).then(() => undefined);
  }

  private pool1(): UpstreamDispatcher {
    return (this.http1 ??= this.makeHttp1());
  }
}
