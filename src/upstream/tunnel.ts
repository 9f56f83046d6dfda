// Two connections joined after a protocol switch (a WebSocket through the proxy): bytes flow both
// ways with backpressure, an end on one side ends the other, and either side closing or failing
// closes both, so neither is left open.
import type { Duplex } from 'node:stream';

export function tunnel(a: Duplex, b: Duplex): void {
  const close = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', close).on('close', close);
  b.on('error', close).on('close', close);
  a.pipe(b);
  b.pipe(a);
}
