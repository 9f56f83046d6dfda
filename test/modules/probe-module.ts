// A module registered only in tests, to prove the module contract's lifecycle end to end: a module
// of its own (`probe`) with its own property rows, given to the test server in its module list.
// It is active where `probePath` is set, its options are the `probeTo` target, its resource is a
// real listening socket per target (so a leak shows as an open handle), and its stage answers
// which stage and resource served.
import { createServer, type Server } from 'node:net';
import { row, SCOPES, type PropertyRows } from '../../src/config/properties.js';
import { str } from '../../src/config/types.js';
import { send } from '../../src/http/respond.js';
import { defineModule, type ModuleCheck } from '../../src/plan/module.js';

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
  /** Resolves once a request to /slow waits at the gate. */
  arrived: Promise.resolve(),
  arrive: (): void => undefined,
  hold(): void {
    this.gate = new Promise((resolve) => (this.release = resolve));
    this.arrived = new Promise((resolve) => (this.arrive = resolve));
  },
};

export const PROBE_PROPERTIES = {
  probePath: row({
    type: str('url-path'),
    scopes: SCOPES,
    since: 'Portico',
    summary: 'URL prefix the probe answers; unset, it is inactive.',
  }),
  probeTo: row({
    type: str('gateway-url'),
    default: 'tcp://127.0.0.1:4000/',
    scopes: SCOPES,
    since: 'Portico',
    summary: 'The target the probe holds a resource for.',
  }),
} as const satisfies PropertyRows;

// Something the types cannot say: port 0 is no target. Reported where each scope wrote it.
const checkTargets: ModuleCheck<typeof PROBE_PROPERTIES> = (_config, scopes, diags) => {
  for (const scope of scopes) {
    const entry = scope.keys.get('probeTo');
    if (entry && /:0\/?$/.test(String(scope.settings.probeTo)))
      diags.error(entry.value.pos, `${scope.path}.probeTo`, 'port 0 is not a target');
  }
};

export const probeModule = defineModule({
  name: 'probe',
  properties: PROBE_PROPERTIES,
  check: checkTargets,
  options: (settings) =>
    settings.probePath === undefined ? undefined : { target: settings.probeTo },
  provision: ({ target }, leases) => {
    const resource = leases.take(`probe:${target}`, () => new ProbeResource(target));
    const stage = ++probe.provisioned;
    return {
      stage: async (ctx) => {
        if (ctx.path.endsWith('/slow')) {
          probe.arrive();
          await probe.gate;
        }
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
