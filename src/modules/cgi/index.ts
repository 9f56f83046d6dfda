// The CGI gateway (`cgi`, RFC 3875 and REFERENCE-behaviour.md §16.1): scripts under `cgi-bin/` and
// files with a `cgiScriptExtensions` extension run as processes, at most 64 at once per server.
import { gatewayLimits, type GatewayLimits } from '../../gateway/timeouts.js';
import { defineModule, type ModuleSettings } from '../../plan/module.js';
import { cgiStage } from './cgi-stage.js';
import { checkInterpreters } from './check.js';
import { interpretersWith } from './interpreters.js';
import { ProcessSlots } from './process-slots.js';
import { CGI_PROPERTIES } from './properties.js';

export interface CgiOptions {
  readonly extensions: readonly string[];
  readonly interpreters: Readonly<Record<string, readonly string[]>>;
  readonly limits: GatewayLimits;
}

function options(s: ModuleSettings<typeof CGI_PROPERTIES>): CgiOptions | undefined {
  if (s.wwwroot === undefined) return undefined;
  return {
    extensions: s.cgiScriptExtensions ?? [],
    interpreters: interpretersWith(s.cgiScriptInterpreters),
    limits: gatewayLimits(s),
  };
}

export const cgi = defineModule({
  name: 'cgi',
  properties: CGI_PROPERTIES,
  check: checkInterpreters,
  options,
  provision: (o, leases, { errorLog }) => ({
    stage: cgiStage({
      extensions: o.extensions,
      interpreters: o.interpreters,
      // One bound for the whole server, kept across reloads.
      slots: leases.take('cgi:slots', () => new ProcessSlots()),
      limits: o.limits,
      errorLog,
    }),
  }),
});
