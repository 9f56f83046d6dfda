// Where automatic TLS keeps what it must not lose: the ACME account key and, per name, the
// certificate chain and its key. One folder per CA directory URL, so staging and production never
// mix. Keys are written 0600 and every file atomically (written beside, then renamed), so a crash
// never leaves half a key. Unset, the folder is in the per-user data directory (XDG), where Ferron
// kept nothing and ordered again at every start.
import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { inWords } from '../config/system-errors.js';

/** `$XDG_DATA_HOME/portico/acme`, else `~/.local/share/portico/acme`. */
export function defaultAcmeDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME || join(homedir(), '.local', 'share');
  return join(base, 'portico', 'acme');
}

/** A file name for a server name: validated host names only hold these characters anyway. */
function fileNameOf(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9.-]/g, '_');
}

export interface StoredPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** What was found for one name: a pair, nothing, or files that could not be used. */
export type StoredLookup =
  | { readonly kind: 'found'; readonly pair: StoredPair }
  | { readonly kind: 'absent' }
  | { readonly kind: 'unusable'; readonly reason: string };

export class AcmeStore {
  /** The CA's own folder. */
  readonly directory: string;

  constructor(root: string, directoryUrl: string) {
    const url = new URL(directoryUrl);
    const tag = createHash('sha256').update(directoryUrl).digest('hex').slice(0, 12);
    this.directory = join(root, `${fileNameOf(url.host)}-${tag}`);
  }

  /** The account key, or undefined when there is none yet or it cannot be read (`problem`). */
  async accountKey(problem: (reason: string) => void): Promise<Buffer | undefined> {
    try {
      const key = await fsp.readFile(join(this.directory, 'account.key'));
      if (key.includes('PRIVATE KEY-----')) return key;
      problem('the stored ACME account key is not a PEM private key');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        problem(`the stored ACME account key cannot be read: ${inWords(e)}`);
    }
    return undefined;
  }

  saveAccountKey(key: Buffer): Promise<void> {
    return this.write('account.key', key);
  }

  async certificate(name: string): Promise<StoredLookup> {
    const base = join('certificates', fileNameOf(name));
    let cert: Buffer;
    let key: Buffer;
    try {
      [cert, key] = await Promise.all([
        fsp.readFile(join(this.directory, `${base}.crt`)),
        fsp.readFile(join(this.directory, `${base}.key`)),
      ]);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
      return { kind: 'unusable', reason: inWords(e) };
    }
    return { kind: 'found', pair: { cert, key } };
  }

  async saveCertificate(name: string, pair: StoredPair): Promise<void> {
    const base = join('certificates', fileNameOf(name));
    // The key first: a certificate never stands beside a key that is not its own for long.
    await this.write(`${base}.key`, pair.key);
    await this.write(`${base}.crt`, pair.cert);
  }

  /** Written beside, then renamed over: readers see the old file or the new one, whole. */
  private async write(relative: string, data: Buffer): Promise<void> {
    const path = join(this.directory, relative);
    await fsp.mkdir(join(path, '..'), { recursive: true, mode: 0o700 });
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await fsp.writeFile(temporary, data, { mode: 0o600, flag: 'wx' });
      await fsp.rename(temporary, path);
    } catch (e) {
      await fsp.rm(temporary, { force: true });
      throw e;
    }
  }
}
