// Two connections joined after a protocol switch (a WebSocket through the proxy): bytes flow both
// ways with backpressure, an end on one side ends the other, and either side closing or failing
// closes both, so neither is left open.
import type { Duplex } from 'node:stream';
import type { SwitchedConnection } from '../http/respond.js';

export function tunnel(client: SwitchedConnection, backend: Duplex): void {
  const close = () => {
    client.output.destroy();
    backend.destroy();
  };
  client.input.on('error', close);
  client.output.on('error', close).on('close', close);
  backend.on('error', close).on('close', close);
  client.input.pipe(backend);
  backend.pipe(client.output);
  // A client gone before the backend's 101 was relayed has had its 'close' already.
  if (client.output.destroyed || backend.destroyed) close();
}
