// The SCGI gateway (`scgi`, REFERENCE-behaviour.md §16.2): a URL prefix handed to an SCGI
// application over TCP or a Unix socket.
import { parseSocketAddress } from '../../gateway/socket-address.js';
import { gatewayLimits, type GatewayLimits } from '../../gateway/timeouts.js';
import { defineModule, type ModuleSettings } from '../../plan/module.js';
import { scgiStage } from './scgi-stage.js';
import { SCGI_PROPERTIES } from './properties.js';

export interface ScgiOptions {
  readonly to: string;
  readonly path: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly limits: GatewayLimits;
}

function options(s: ModuleSettings<typeof SCGI_PROPERTIES>): ScgiOptions | undefined {
  if (s.scgiPath === undefined) return undefined;
  return {
    to: s.scgiTo,
    path: s.scgiPath,
    environment: s.environmentVariables ?? {},
    limits: gatewayLimits(s),
  };
}

export const scgi = defineModule({
  name: 'scgi',
  properties: SCGI_PROPERTIES,
  options,
  provision: (o, _leases, { errorLog }) => ({
    stage: scgiStage({
      address: parseSocketAddress(o.to),
      path: o.path,
      environment: o.environment,
      limits: o.limits,
      errorLog,
    }),
  }),
});
