// The files a configuration serves from, looked at when it is validated: a wwwroot that is not
// there or not a directory, or an errorPages file that cannot be read, would otherwise only show
// as 404s or default pages. Warnings, not errors: a deployment may create them
// after the configuration. (Skipped by `convert`, which may run where the files are not.)
import type { ConfigCheck } from '../config/checks.js';
import { pathProblem as problemWith } from '../config/system-errors.js';

export const checkServedPaths: ConfigCheck = (_config, scopes, diags, { files }) => {
  if (!files) return;
  for (const scope of scopes) {
    const root = scope.settings.wwwroot;
    const rootEntry = scope.keys.get('wwwroot');
    const rootProblem = root === undefined ? undefined : problemWith(root, 'directory');
    if (rootEntry !== undefined && rootProblem !== undefined)
      diags.warn(
        rootEntry.value.pos,
        `${scope.path}.wwwroot`,
        `${root}: ${rootProblem}; static files here will be answered 404`,
      );
    const pages = scope.settings.errorPages;
    const pagesEntry = scope.keys.get('errorPages');
    if (pages === undefined || pagesEntry === undefined) continue;
    pages.forEach((page, i) => {
      const problem = problemWith(page.path, 'file');
      if (problem === undefined) return;
      const written = pagesEntry.value.kind === 'list' ? pagesEntry.value.items[i] : undefined;
      diags.warn(
        written?.pos ?? pagesEntry.value.pos,
        `${scope.path}.errorPages[${i}].path`,
        `${page.path}: ${problem}; the default page will be sent for ${page.scode}`,
      );
    });
  }
};
