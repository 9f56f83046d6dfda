// What the property types cannot say about backend URLs: user information in one is never sent
// (no Authorization is made from it, as in Ferron and nginx), so a user who wrote it is told; and,
// when files are checked, a Unix socket that is not there is a warning, not an error (its server
// may start after Portico; until then its requests get a 502).
import { statSync } from 'node:fs';
import { parseBackendUrl } from '../../config/backend-url.js';
import { inWords } from '../../config/system-errors.js';
import type { ModuleCheck } from '../../plan/module.js';
import type { RPROXY_PROPERTIES } from './properties.js';

const TARGETS = ['proxyTo', 'secureProxyTo'] as const;

export const checkBackendUrls: ModuleCheck<typeof RPROXY_PROPERTIES> = (
  _config,
  scopes,
  diags,
  { files },
) => {
  for (const scope of scopes) {
    for (const name of TARGETS) {
      const entry = scope.keys.get(name);
      const urls = scope.settings[name];
      if (entry === undefined || urls === undefined) continue;
      urls.forEach((url, i) => {
        const written = entry.value.kind === 'list' ? entry.value.items[i] : undefined;
        const warn = (message: string) =>
          diags.warn(
            written?.pos ?? entry.value.pos,
            written ? `${scope.path}.${name}[${i}]` : `${scope.path}.${name}`,
            message,
          );
        const u = URL.canParse(url) ? new URL(url) : undefined;
        if (u !== undefined && (u.username !== '' || u.password !== ''))
          warn(
            'user information in a backend URL is not sent to the backend; the backend sees no credentials',
          );
        const socket = files ? socketProblem(url) : undefined;
        if (socket !== undefined) warn(socket);
      });
    }
  }
};

function socketProblem(url: string): string | undefined {
  const parsed = parseBackendUrl(url);
  const path = typeof parsed === 'string' ? undefined : parsed.socketPath;
  if (path === undefined) return undefined;
  let found;
  try {
    found = statSync(path, { throwIfNoEntry: false });
  } catch (e) {
    return `${path} cannot be reached (${inWords(e)}): its requests get a 502`;
  }
  if (found === undefined)
    return `no Unix socket at ${path} yet: its requests get a 502 until a server listens there`;
  return found.isSocket() ? undefined : `${path} is not a Unix socket: its requests get a 502`;
}
