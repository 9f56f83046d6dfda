// What the property types cannot say about the cache's place: stages run in `loadModules` order,
// so a cache listed before `fauth` answers from what it stored before authentication is asked.
import { globalPlace, type ConfigCheck } from '../../config/checks.js';

export const checkModuleOrder: ConfigCheck = (config, scopes, diags) => {
  const modules = config.global.loadModules ?? [];
  const cache = modules.indexOf('cache');
  const fauth = modules.indexOf('fauth');
  if (cache < 0 || fauth < 0 || cache > fauth) return;
  const place = globalPlace(scopes, 'loadModules');
  diags.warn(
    place.pos,
    place.path,
    'cache comes before fauth: stored responses are served without asking the authentication server; list fauth first',
  );
};
