// What validation checks beyond the property table, for every command that reads a configuration
// and every reload: the certificate files, the served paths, the log files and formats, the Unix
// sockets' folders, then each module's own rules.
import type { ConfigCheck } from '../config/checks.js';
import { MODULES } from '../modules/registry.js';
import type { Module } from '../plan/module.js';
import { checkLogFiles } from './log-files-check.js';
import { checkSocketPaths } from './socket-paths-check.js';
import { checkLogFormats } from './log-format-check.js';
import { checkServedPaths } from '../static/paths-check.js';
import { checkCertificateFiles } from '../tls/certificate-check.js';

export function configChecks(modules: readonly Module[] = MODULES): ConfigCheck[] {
  return [
    checkCertificateFiles,
    checkServedPaths,
    checkLogFiles,
    checkSocketPaths,
    checkLogFormats,
    ...modules.flatMap((m) => (m.check ? [m.check] : [])),
  ];
}
