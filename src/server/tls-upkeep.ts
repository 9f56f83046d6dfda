// What a configuration's TLS needs kept up beside the listeners, after a start and each reload:
// OCSP staples fetched ahead of the first handshake, and automatic TLS's names given (or left
// with) their certificates.
import type { Plan } from '../plan/compile.js';

/** Staples are fetched in the background. */
export function prefetchOcsp(plan: Plan): void {
  if (plan.ocsp && plan.tls)
    for (const pair of plan.tls.certificates.pairs) plan.ocsp.prefetch(pair.cert);
}

/**
 * The names of this configuration get (or keep) their certificates. `announce` is called once
 * per manager with where it keeps them; undefined when another process (a worker's primary)
 * says that.
 */
export function manageCertificates(
  plan: Plan,
  announced: WeakSet<object>,
  announce: ((line: string) => void) | undefined,
): void {
  if (!plan.acme) return;
  const { manager, names, settings } = plan.acme;
  if (announce && !announced.has(manager)) {
    announced.add(manager);
    announce(`automatic TLS: the ACME account and certificates are kept in ${manager.directory}`);
  }
  manager.manage(names, settings);
}
