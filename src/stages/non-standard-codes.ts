// `nonStandardCodes` (REFERENCE §6): redirects, HTTP basic authentication and other fixed
// statuses. Entries (global, then host, then location, concatenated) are tried in order and the
// first that matches decides, except that a successful 401 goes on to the next entry. An entry
// matches when its `regex` is found anywhere in the current path and query, or else when its `url`
// equals the current path exactly.
//
// An entry's `users` (IP addresses, CIDR ranges, `localhost`) limits which clients the entry
// applies to; it is not an allow list. A 403 entry with `users: [192.0.2.7]` refuses that client
// only, and a 401 entry with `users` asks only those clients to log in while everyone else passes.
// The specification's wording ("IP addresses allowed to access the resource") suggests the
// opposite; Portico does what Ferron does, so existing configurations keep their meaning.
//
// The stage also runs when an errorConfig re-runs the chain for an error page. It then decides as
// before, so a page for a 401 never shows a protected file, but a failed login is neither counted
// nor logged a second time.
import type { AuthServices } from '../auth/auth-services.js';
import { parseBasicAuthorization } from '../auth/basic-credentials.js';
import { isSupportedPasswordHash, verifyPassword } from '../auth/password.js';
import type { ResolvedSettings } from '../config/defaults.js';
import { compileRegex, compileReplacement } from '../config/regex.js';
import type { Ctx } from '../http/ctx.js';
import { HttpError, type HeaderPairs } from '../http/http-error.js';
import { IpList } from '../http/ip-list.js';
import { send } from '../http/respond.js';
import type { Next, Outcome, Stage } from '../http/stage.js';

const DEFAULT_REALM = 'Portico HTTP Basic Authorization';
const REDIRECTS = new Set([301, 302, 307, 308]);

type Code = NonNullable<ResolvedSettings['nonStandardCodes']>[number];

interface Redirect {
  readonly kind: 'redirect';
  /** `location` as a header can carry it, for a `url` match. */
  readonly location: string | undefined;
  /** `location` as a replacement template, for a `regex` match. */
  readonly expand: ((m: RegExpExecArray) => string) | undefined;
}

interface BasicAuth {
  readonly kind: 'auth';
  readonly challenge: HeaderPairs;
  readonly userList: ReadonlySet<string> | undefined;
  /** Brute-force protection is on. */
  readonly protect: boolean;
}

type Action = Redirect | BasicAuth | { readonly kind: 'status' };

interface Entry {
  readonly scode: number;
  readonly regex: RegExp | undefined;
  readonly url: string | undefined;
  /** The clients the entry applies to; undefined: all. */
  readonly clients: IpList | undefined;
  readonly action: Action;
}

export function nonStandardCodes(
  settings: ResolvedSettings,
  services: AuthServices,
): Stage | undefined {
  const codes = settings.nonStandardCodes ?? [];
  if (codes.length === 0) return undefined;
  const entries = codes.map(compileEntry);
  const authenticator = new Authenticator(settings.users ?? [], services);

  const walk = (ctx: Ctx, next: Next, from: number): Outcome => {
    const subject = ctx.path + ctx.query;
    for (let i = from; i < entries.length; i++) {
      const entry = entries[i]!;
      if (entry.clients && !entry.clients.has(ctx.clientAddress)) continue;
      const match = entry.regex?.exec(subject) ?? (entry.url === ctx.path || null);
      if (match === null) continue;
      const action = entry.action;
      if (action.kind === 'redirect')
        return void send(ctx, entry.scode, [
          'Location',
          locationOf(ctx, action, match),
          'Content-Length',
          '0',
        ]);
      if (action.kind === 'status') throw new HttpError(entry.scode, 'configured-status');
      const pending = authenticator.authenticate(ctx, action);
      if (pending) return pending.then(() => walk(ctx, next, i + 1));
    }
    return next(ctx);
  };
  return (ctx, next) => walk(ctx, next, 0);
}

function compileEntry(code: Code): Entry {
  const regex = code.regex === undefined ? undefined : compileRegex(code.regex);
  const clients = code.users === undefined ? undefined : new IpList(code.users);
  return { scode: code.scode, regex, url: code.url, clients, action: actionOf(code) };
}

function actionOf(code: Code): Action {
  if (REDIRECTS.has(code.scode)) {
    const location = code.location === undefined ? undefined : encodeNonAscii(code.location);
    return {
      kind: 'redirect',
      location,
      expand: location === undefined ? undefined : compileReplacement(location),
    };
  }
  if (code.scode !== 401) return { kind: 'status' };
  const realm = (code.realm ?? DEFAULT_REALM).replace(/["\\]/g, '\\$&');
  // Node writes header strings as latin1; going through UTF-8 bytes puts the realm on the wire in
  // the charset the challenge announces.
  const challenge = Buffer.from(`Basic realm="${realm}", charset="UTF-8"`, 'utf8').toString(
    'latin1',
  );
  return {
    kind: 'auth',
    challenge: [['WWW-Authenticate', challenge]],
    userList: code.userList && new Set(code.userList),
    protect: !code.disableBruteProtection,
  };
}

/**
 * A regex match with `location` gives the matched text run through the replacement (text around
 * the match is dropped); a `url` match with `location` gives `location` plus the query; no
 * `location` redirects to the current path and query.
 */
function locationOf(ctx: Ctx, action: Redirect, match: RegExpExecArray | true): string {
  if (action.location === undefined) return ctx.path + ctx.query;
  return match === true ? action.location + ctx.query : action.expand!(match);
}

// A configured location may hold non-ASCII text; a header can only carry it percent-encoded.
// (Group names in a template are ASCII, so encoding the whole template touches only literal text.)
function encodeNonAscii(text: string): string {
  return text.replace(/[^\x00-\x7f]+/g, (run) => encodeURIComponent(run));
}

/** Basic authentication against the Resolved's `users`, with brute-force protection. */
class Authenticator {
  /** Users by name; a name may be listed more than once, and any of its hashes may verify. */
  private readonly users = new Map<string, string[]>();
  /**
   * Verified for a name that is not a user (or not in `userList`), so that answering it takes as
   * long as a wrong password for a real user: the first usable hash with its salt and output
   * zeroed, which keeps its algorithm and cost and matches no password.
   */
  private readonly dummy: string | undefined;

  constructor(
    users: readonly { readonly name: string; readonly pass: string }[],
    private readonly services: AuthServices,
  ) {
    for (const { name, pass } of users) {
      const hashes = this.users.get(name);
      if (hashes) hashes.push(pass);
      else this.users.set(name, [pass]);
    }
    const model = users.find((u) => isSupportedPasswordHash(u.pass))?.pass;
    this.dummy = model?.replace(
      /\$([^$]+)\$([^$]+)$/,
      (_, salt: string, hash: string) => `$${'A'.repeat(salt.length)}$${'A'.repeat(hash.length)}`,
    );
  }

  /** Sets `ctx.user` or throws the refusal; settles synchronously for recently verified credentials. */
  authenticate(ctx: Ctx, action: BasicAuth): Promise<void> | void {
    const address = ctx.clientAddress;
    const { bruteForce, credentials } = this.services;
    if (action.protect && bruteForce.isLockedOut(address)) this.lockedOut(ctx);
    const auth = parseBasicAuthorization(ctx.req.headers.authorization);
    if (auth.kind === 'invalid') throw new HttpError(400, 'bad-credentials');
    if (auth.kind === 'missing')
      throw new HttpError(401, 'unauthorized', { headers: action.challenge });
    const { name, password } = auth;
    const hashes = action.userList && !action.userList.has(name) ? undefined : this.users.get(name);
    if (hashes?.some((phc) => credentials.has(name, password, phc))) {
      ctx.user = name;
      return;
    }
    const attempt = () => this.verify(ctx, action, name, password, hashes);
    return action.protect ? bruteForce.serialize(address, attempt) : attempt();
  }

  private async verify(
    ctx: Ctx,
    action: BasicAuth,
    name: string,
    password: string,
    hashes: readonly string[] | undefined,
  ): Promise<void> {
    const { bruteForce, credentials, errorLog } = this.services;
    // Again: failures may have been counted while this attempt waited for its turn.
    if (action.protect && bruteForce.isLockedOut(ctx.clientAddress)) this.lockedOut(ctx);
    if (hashes) {
      for (const phc of hashes) {
        if (await credentials.verify(name, password, phc)) {
          ctx.user = name;
          return;
        }
      }
    } else if (this.dummy !== undefined) {
      await verifyPassword(this.dummy, password);
    }
    if (ctx.errorStatus === undefined) {
      if (action.protect) bruteForce.recordFailure(ctx.clientAddress);
      errorLog.log(
        `Authorization failed for user "${name.replace(/["\\]/g, '\\$&')}" and client "${ctx.clientAddress}"`,
      );
    }
    throw new HttpError(401, 'unauthorized', { headers: action.challenge });
  }

  private lockedOut(ctx: Ctx): never {
    if (ctx.errorStatus === undefined)
      this.services.errorLog.log(
        `Too many failed authorization attempts for client ${ctx.clientAddress}`,
      );
    // When the lock-out ends, so a client (or its operator) knows how long to wait.
    const wait = this.services.bruteForce.secondsLeft(ctx.clientAddress);
    throw new HttpError(429, 'too-many-attempts', { headers: [['Retry-After', String(wait)]] });
  }
}
