// undici compiles its HTTP parser (WebAssembly) when loaded, tens of MB that a server without a
// proxy never needs: it is loaded with the first pool, or the first backend head read.
import { createRequire } from 'node:module';

let undici: typeof import('undici') | undefined;

export const loadUndici = (): typeof import('undici') =>
  (undici ??= createRequire(import.meta.url)('undici') as typeof import('undici'));
