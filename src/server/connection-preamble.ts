// What a connection sends before its protocol's first byte, read before the connection is handed
// to its protocol server: a PROXY protocol header (with `proxyProtocol`), then, on a plain listener
// with `enableH2C`, whether HTTP/2's connection preface follows (HTTP/1.1 otherwise). Only what it
// takes to decide is buffered: at most a PROXY header (proxy-header.ts bounds it) and 24 bytes, all
// within the request-header time limit counted from the accept. The bytes read past the preamble
// are put back for the protocol to read.
import type { Socket } from 'node:net';
import { canonical } from '../http/ip-list.js';
import {
  proxySignature,
  readProxyHeader,
  type ProxiedClient,
  type ProxyReading,
} from './proxy-header.js';

/** RFC 9113 §3.4: what a client with prior knowledge sends first. */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export interface PreambleOptions {
  /**
   * Whether a peer may send a PROXY header (`undefined`: a Unix-socket peer); absent, no header is
   * looked for.
   */
  readonly trusts?: (peer: string | undefined) => boolean;
  /** Look for HTTP/2's connection preface. */
  readonly h2c: boolean;
  readonly timeoutMs: number;
}

export interface Preamble {
  /** Whom a PROXY header named; undefined when none did (the peer speaks for itself). */
  readonly client: ProxiedClient | undefined;
  readonly http2: boolean;
}

export interface PreambleHooks {
  /** The preamble is read; what followed it is back in the paused socket. */
  readonly done: (preamble: Preamble) => void;
  /** The connection is refused and destroyed; `reason` is for the error log (undefined: nothing to say). */
  readonly refused: (reason: string | undefined) => void;
}

export function readPreamble(socket: Socket, options: PreambleOptions, hooks: PreambleHooks): void {
  let buffered: Buffer = Buffer.alloc(0);
  let proxyRead = options.trusts === undefined;
  let client: ProxiedClient | undefined;
  const peer = socket.remoteAddress === undefined ? undefined : canonical(socket.remoteAddress);
  const refuse = (reason: string | undefined) => {
    stop();
    socket.destroy();
    hooks.refused(reason);
  };
  // A connection that sent nothing is closed as HTTP closes an idle one: without a word.
  const timer = setTimeout(
    () =>
      refuse(
        proxyRead || buffered.length === 0
          ? undefined
          : `${shown(peer)}: no complete PROXY header within requestHeaderTimeout (${options.timeoutMs} ms)`,
      ),
    options.timeoutMs,
  );
  const stop = () => {
    clearTimeout(timer);
    socket.off('data', onData);
    socket.off('end', onEnd);
    socket.off('error', onError);
    socket.off('close', stop);
  };
  const onEnd = () => refuse(undefined);
  const onError = () => refuse(undefined);
  const onData = (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    if (!proxyRead) {
      const reading = readHeader(buffered, options.trusts!(peer));
      if (reading.kind === 'more') return;
      if (reading.kind === 'malformed') return refuse(`${shown(peer)}: ${reading.reason}`);
      if (reading.kind === 'untrusted')
        return refuse(
          `${shown(peer)}: a PROXY header from a peer trustedProxies does not list (refused)`,
        );
      proxyRead = true;
      if (reading.kind === 'header') {
        client = reading.client && {
          ...reading.client,
          address: canonical(reading.client.address),
        };
        buffered = buffered.subarray(reading.length);
      }
    }
    let http2 = false;
    if (options.h2c) {
      const n = Math.min(buffered.length, PREFACE.length);
      const same = buffered.compare(PREFACE, 0, n, 0, n) === 0;
      if (same && n < PREFACE.length) return;
      http2 = same;
    }
    stop();
    socket.pause();
    if (buffered.length > 0) socket.unshift(buffered);
    hooks.done({ client, http2 });
  };
  socket.on('data', onData);
  socket.on('end', onEnd);
  socket.on('error', onError);
  socket.once('close', stop);
}

/** A peer trustedProxies does not list gets only as far as the signature. */
function readHeader(data: Buffer, trusted: boolean): ProxyReading | { readonly kind: 'untrusted' } {
  if (trusted) return readProxyHeader(data);
  const signature = proxySignature(data);
  if (signature === 'more') return { kind: 'more' };
  return signature === 'none' ? { kind: 'none' } : { kind: 'untrusted' };
}

function shown(peer: string | undefined): string {
  return peer === undefined ? 'a Unix-socket peer' : peer;
}
