// What the property types cannot say about backend URLs: user information in one is never sent
// (no Authorization is made from it, as in Ferron and nginx), so a user who wrote it is told.
import type { ModuleCheck } from '../../plan/module.js';
import type { RPROXY_PROPERTIES } from './properties.js';

const TARGETS = ['proxyTo', 'secureProxyTo'] as const;

export const checkBackendUrls: ModuleCheck<typeof RPROXY_PROPERTIES> = (_config, scopes, diags) => {
  for (const scope of scopes) {
    for (const name of TARGETS) {
      const entry = scope.keys.get(name);
      const urls = scope.settings[name];
      if (entry === undefined || urls === undefined) continue;
      urls.forEach((url, i) => {
        const u = URL.canParse(url) ? new URL(url) : undefined;
        if (u === undefined || (u.username === '' && u.password === '')) return;
        const written = entry.value.kind === 'list' ? entry.value.items[i] : undefined;
        diags.warn(
          written?.pos ?? entry.value.pos,
          written ? `${scope.path}.${name}[${i}]` : `${scope.path}.${name}`,
          'user information in a backend URL is not sent to the backend; the backend sees no credentials',
        );
      });
    }
  }
};
