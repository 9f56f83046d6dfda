// What `validate` says of the cgi module before a request finds out: an interpreter, for an
// extension the configuration runs through CGI, that cannot run here. A warning: a script with its
// execute bit runs itself, and the interpreter may be installed after the configuration.
import { missingExecutable } from '../../config/executables.js';
import type { ModuleCheck } from '../../plan/module.js';
import { interpretersWith } from './interpreters.js';
import type { CGI_PROPERTIES } from './properties.js';

export const checkInterpreters: ModuleCheck<typeof CGI_PROPERTIES> = (
  config,
  scopes,
  diags,
  { files },
) => {
  if (!files || !(config.global.loadModules ?? []).includes('cgi')) return;
  const globalTable = scopes.find((s) => s.path === 'global')?.settings.cgiScriptInterpreters;
  for (const scope of scopes) {
    const entry = scope.keys.get('cgiScriptExtensions');
    const extensions = scope.settings.cgiScriptExtensions;
    if (entry === undefined || extensions === undefined) continue;
    const table = interpretersWith({ ...globalTable, ...scope.settings.cgiScriptInterpreters });
    for (const extension of extensions) {
      const command = table[extension.toLowerCase()];
      const missing = command && missingExecutable(command[0]!);
      if (missing)
        diags.warn(
          entry.value.pos,
          `${scope.path}.cgiScriptExtensions`,
          `${missing}: a ${extension} script without its execute bit cannot run (set cgiScriptInterpreters, or install it)`,
        );
    }
  }
};
