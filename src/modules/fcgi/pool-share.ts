// What one process may take of a FastCGI application, whose children (php-fpm's) serve every
// worker process of the server alike: its part of the server's bounds, and whether it keeps
// connections between requests.

/** Connections in use at once per target for the whole server, whatever the application takes. */
export const MAX_CONNECTIONS = 256;
/** Requests that may wait for a connection, for the whole server; more get 503 at once. */
export const MAX_WAITING = 1024;

export interface PoolShare {
  /** Of MAX_CONNECTIONS. */
  readonly connections: number;
  /** Of MAX_WAITING. */
  readonly waiting: number;
  /** Connections are kept between requests (FCGI_KEEP_CONN). */
  readonly keep: boolean;
}

/**
 * The share of one of `workerProcesses`. A child stays with a kept connection, so one worker
 * keeping them would leave another's requests in php-fpm's listen queue for ever: with workers
 * each request connects anew, and that queue serves them all in turn (nginx's default, without
 * fastcgi_keep_conn).
 */
export function poolShare(workerProcesses: number): PoolShare {
  return {
    connections: Math.ceil(MAX_CONNECTIONS / workerProcesses),
    waiting: Math.ceil(MAX_WAITING / workerProcesses),
    keep: workerProcesses === 1,
  };
}
