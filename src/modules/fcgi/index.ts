// The FastCGI gateway (`fcgi`, REFERENCE-behaviour.md §16.3 with CONTRACT.md point 13): PHP behind
// php-fpm as nginx runs it, connections kept open in a bounded pool per target and shared by every
// Plan that names it.
import { parseSocketAddress } from '../../gateway/socket-address.js';
import { gatewayLimits, type GatewayLimits } from '../../gateway/timeouts.js';
import { defineModule, type ModuleSettings } from '../../plan/module.js';
import { FcgiConnections } from './connections.js';
import { poolShare } from './pool-share.js';
import { fcgiStage } from './fcgi-stage.js';
import { FCGI_PROPERTIES } from './properties.js';

export interface FcgiOptions {
  readonly to: string;
  readonly path: string | undefined;
  readonly extensions: readonly string[] | undefined;
  readonly environment: Readonly<Record<string, string>>;
  readonly limits: GatewayLimits;
}

function options(s: ModuleSettings<typeof FCGI_PROPERTIES>): FcgiOptions | undefined {
  const extensions = s.fcgiScriptExtensions?.length ? s.fcgiScriptExtensions : undefined;
  if (s.fcgiPath === undefined && extensions === undefined) return undefined;
  return {
    to: s.fcgiTo,
    path: s.fcgiPath,
    extensions,
    environment: s.environmentVariables ?? {},
    limits: gatewayLimits(s),
  };
}

export const fcgi = defineModule({
  name: 'fcgi',
  properties: FCGI_PROPERTIES,
  options,
  provision: (o, leases, { errorLog, workerProcesses }) => {
    const address = parseSocketAddress(o.to);
    const connect = o.limits.connectMs;
    const share = poolShare(workerProcesses);
    const connections = leases.take(
      `fcgi:${o.to} connect=${connect}`,
      () => new FcgiConnections(address, connect, share),
    );
    return {
      stage: fcgiStage({
        connections,
        path: o.path,
        extensions: o.extensions,
        environment: o.environment,
        limits: o.limits,
        errorLog,
      }),
    };
  },
});
