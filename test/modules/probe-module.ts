// A module registered only in tests, to prove the module contract's lifecycle end to end. It
// stands in for `scgi` (a name `loadModules` accepts) and reads `scgiPath` and `scgiTo`: active
// where `scgiPath` is set, its options are the target, its resource is a real listening socket per
// target (so a leak shows as an open handle), and its stage answers which stage and resource served.
import { createServer, type Server } from 'node:net';
import type { Place } from '../../src/config/checks.js';
import { send } from '../../src/http/respond.js';
import { defineModule } from '../../src/plan/module.js';

export class ProbeResource {
  static opened = 0;
  static readonly live = new Set<ProbeResource>();
  readonly id = ++ProbeResource.opened;
  private readonly socket: Server = createServer().listen(0, '127.0.0.1');

  constructor(readonly target: string) {
    ProbeResource.live.add(this);
  }

  close(): Promise<void> {
    ProbeResource.live.delete(this);
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

export const probe = {
  provisioned: 0,
  /** Requests to a path ending in /slow wait for this to be resolved. */
  release: (): void => undefined,
  gate: Promise.resolve(),
  hold(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
  },
};

export const probeModule = defineModule<{ target: string }>({
  name: 'scgi',
  // Something the types cannot say: port 0 is no target. Reported where each scope wrote it.
  check: (_config, scopes, diags) => {
    for (const scope of scopes) {
      const entry = scope.keys.get('scgiTo');
      if (entry && /:0\/?$/.test(String(scope.settings.scgiTo))) {
        const at: Place = { pos: entry.value.pos, path: `${scope.path}.scgiTo` };
        diags.error(at.pos, at.path, 'port 0 is not a target');
      }
    }
  },
  options: (settings) =>
    settings.scgiPath === undefined ? undefined : { target: settings.scgiTo },
  provision: ({ target }, leases) => {
    const resource = leases.take(`probe:${target}`, () => new ProbeResource(target));
    const stage = ++probe.provisioned;
    return {
      stage: async (ctx) => {
        if (ctx.path.endsWith('/slow')) await probe.gate;
        send(
          ctx,
          200,
          ['Content-Type', 'text/plain'],
          `stage ${stage} resource ${resource.id} ${target}`,
        );
      },
      status: () => ({ target, resource: resource.id }),
    };
  },
});
