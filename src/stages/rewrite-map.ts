// rewriteMap: each rule's regex replaces the first match in path+query, in order; `last` stops
// after a rule that changed the URL; `isNotFile` / `isNotDirectory` skip a rule when the current
// path names a file / directory under wwwroot. Regexes and templates are compiled here, once.
// One pass over the rules bounds the work; the result is sanitized again (Ferron does not), so a
// rule can never produce a path with `..` segments or NUL.
import { resolve } from 'node:path';
import type { ResolvedSettings } from '../config/defaults.js';
import { compileRegex, compileReplacement } from '../config/regex.js';
import { HttpError } from '../http/http-error.js';
import type { Logger } from '../http/logger.js';
import type { Stage } from '../http/stage.js';
import type { StaticFiles } from '../static/static-files.js';
import { decodePath, sanitizePath } from '../http/paths.js';

// A rewritten URL longer than this is a rule gone wrong (it only grows by replacement).
const MAX_URL_LENGTH = 16 * 1024;

interface Rule {
  readonly regex: RegExp;
  readonly replace: (m: RegExpExecArray) => string;
  readonly isNotFile: boolean;
  readonly isNotDirectory: boolean;
  readonly allowDoubleSlashes: boolean;
  readonly last: boolean;
}

export function rewriteMap(
  settings: ResolvedSettings,
  files: StaticFiles,
  errorLog: Logger,
): Stage | undefined {
  const rules: Rule[] = (settings.rewriteMap ?? []).map((r) => ({
    regex: compileRegex(r.regex),
    replace: compileReplacement(r.replacement),
    isNotFile: r.isNotFile ?? false,
    isNotDirectory: r.isNotDirectory ?? false,
    allowDoubleSlashes: r.allowDoubleSlashes ?? false,
    last: r.last ?? false,
  }));
  if (rules.length === 0) return undefined;
  const wwwroot = settings.wwwroot === undefined ? undefined : resolve(settings.wwwroot);
  const log = settings.enableRewriteLogging ? errorLog : undefined;

  return async (ctx, next) => {
    const original = ctx.path + ctx.query;
    let url = original;
    let doubleSlashes = settings.allowDoubleSlashes;
    for (const rule of rules) {
      if (wwwroot !== undefined && (rule.isNotFile || rule.isNotDirectory)) {
        const q = url.indexOf('?');
        const kind = await files.kind(wwwroot, decodePath(q < 0 ? url : url.slice(0, q)));
        if ((rule.isNotFile && kind === 'file') || (rule.isNotDirectory && kind === 'directory'))
          continue;
      }
      const subject = rule.allowDoubleSlashes ? url : url.replace(/\/{2,}/g, '/');
      const m = rule.regex.exec(subject);
      if (!m) continue;
      const rewritten =
        subject.slice(0, m.index) + rule.replace(m) + subject.slice(m.index + m[0].length);
      if (!rewritten.startsWith('/'))
        throw new HttpError(400, 'rewrite-invalid', {
          detail: `Rewrite of ${JSON.stringify(url)} does not start with "/": ${JSON.stringify(rewritten.slice(0, 200))}`,
        });
      if (rewritten.length > MAX_URL_LENGTH)
        throw new HttpError(500, 'rewrite-invalid', {
          detail: `Rewrite of ${JSON.stringify(url.slice(0, 200))} grew past ${MAX_URL_LENGTH} characters`,
        });
      const changed = rewritten !== url;
      url = rewritten;
      doubleSlashes ||= rule.allowDoubleSlashes;
      if (rule.last && changed) break;
    }
    if (url !== original) {
      log?.log(`URL rewritten from "${original}" to "${url}"`);
      const q = url.indexOf('?');
      ctx.path = sanitizePath(q < 0 ? url : url.slice(0, q), doubleSlashes);
      ctx.query = q < 0 ? '' : url.slice(q);
    }
    return next(ctx);
  };
}
