import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors';

/**
 * Studio tokens and the launcher credential: 32 random bytes each, shown
 * once, stored only as their SHA-256. A request's token is hashed, looked up
 * by hash, and the stored hash compared in constant time. A token revoked
 * from the CLI fails on the server's very next request.
 *
 * The two kinds carry different prefixes and live in different tables, and
 * each check refuses the other kind by its prefix before any lookup, so a
 * launcher credential never opens the studio data API and a studio token
 * never opens the launcher's side (docs/api.md §Authentication and capabilities).
 */

export const CAPABILITIES = [
  'kv',
  'kv.shared',
  'records',
  'timeline',
  'gallery',
  'gallery.read_all',
  'assets',
  'jobs',
] as const;
export type Capability = (typeof CAPABILITIES)[number];

export function isCapability(text: string): text is Capability {
  return (CAPABILITIES as readonly string[]).includes(text);
}

export interface Principal {
  studioId: string;
  capabilities: ReadonlySet<string>;
  /** The SHA-256 of the studio token it was resolved from (an open stream ends when that token is revoked). */
  tokenHash?: Buffer;
}

/** What the token store answers for a hash: the stored hash and its grant. */
export interface TokenGrant {
  hash: Buffer;
  studioId: string;
  capabilities: string[];
}

export type TokenResolver = (hash: Buffer) => TokenGrant | null;

const TOKEN_PREFIX = 'blt_';
const LAUNCHER_PREFIX = 'bl_launcher_';

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** A new launcher credential: the prefix tells it from a studio token at a glance. */
export function generateLauncherCredential(): string {
  return LAUNCHER_PREFIX + randomBytes(32).toString('base64url');
}

/** True when the text has the launcher credential's form (its prefix); says nothing about whether it is live. */
export function isLauncherCredential(text: string): boolean {
  return text.startsWith(LAUNCHER_PREFIX);
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer[ ]+([A-Za-z0-9._~+/=-]{1,512})[ ]*$/i.exec(header);
  return m ? m[1]! : null;
}

/** Whether a stored hash is the hash looked up, in constant time. */
function sameHash(stored: Buffer | undefined, hash: Buffer): boolean {
  return stored !== undefined && stored.length === hash.length && timingSafeEqual(stored, hash);
}

/** Resolves the studio calling the data API or throws 401 `unauthenticated`. */
export function authenticate(header: string | undefined, resolve: TokenResolver | TokenGrants): Principal {
  const token = bearerToken(header);
  if (token === null) throw ApiError.unauthenticated();
  if (typeof resolve !== 'function') {
    const known = resolve.principal(token);
    if (known !== null) return known;
  }
  if (isLauncherCredential(token)) {
    throw ApiError.unauthenticated('A launcher credential does not open the studio data API; send a studio token.');
  }
  const hash = hashToken(token);
  const grant = typeof resolve === 'function' ? resolve(hash) : resolve.resolve(hash);
  if (!grant || !sameHash(grant.hash, hash)) throw ApiError.unauthenticated('The token is unknown or has been revoked.');
  const principal: Principal = Object.freeze({ studioId: grant.studioId, capabilities: new Set(grant.capabilities), tokenHash: hash });
  if (typeof resolve !== 'function') resolve.remember(token, principal);
  return principal;
}

/**
 * Live tokens' principals kept in memory, by the token as sent, so a request
 * with a known token costs a map lookup: no hash, no query, no new Set
 * (docs/design.md "Token grants in memory"). The cache is emptied:
 * - at once by a revocation in this process (`clear`, from the studios
 *   store's revocation listeners: the launcher's stop, an uninstall);
 * - on the next request after any other connection committed to the
 *   database (`changedElsewhere`, `PRAGMA data_version`: the CLI's `token
 *   revoke` runs in another process).
 * A token is only remembered after its hash matched the stored one in
 * constant time; an unknown token is never remembered.
 */
export interface TokenGrants {
  /** The remembered principal of a token, or null (then it is resolved and remembered). */
  principal(token: string): Principal | null;
  resolve: TokenResolver;
  remember(token: string, principal: Principal): void;
  clear(): void;
}

/** Live grants kept at most; far more than a desktop ever has. */
const GRANTS_KEPT = 10_000;

export function createTokenGrants(resolve: TokenResolver, changedElsewhere: () => boolean): TokenGrants {
  const known = new Map<string, Principal>();
  return {
    principal(token) {
      if (changedElsewhere()) {
        known.clear();
        return null;
      }
      return known.get(token) ?? null;
    },
    resolve,
    remember(token, principal) {
      if (known.size >= GRANTS_KEPT) known.clear();
      known.set(token, principal);
    },
    clear: () => known.clear(),
  };
}

/** The launcher's side: the user, not a studio. */
export interface LauncherPrincipal {
  kind: 'launcher';
}

/** What the credential store answers for a hash: the stored hash of a live credential, or null. */
export type LauncherResolver = (hash: Buffer) => Buffer | null;

/**
 * The one check of the launcher credential, for every launcher-side surface
 * (`/launcher/...`, the editor channel): the `Authorization: Bearer` header's
 * credential or 401 `unauthenticated` (missing, a studio token, unknown,
 * expired or revoked). The header is the only source: a browser's page keeps
 * the credential in its origin's storage and sends it here, and no cookie is
 * ever read (docs/security.md "The launcher credential").
 */
export function authenticateLauncher(header: string | undefined, resolve: LauncherResolver): LauncherPrincipal {
  const credential = bearerToken(header);
  if (credential === null) {
    throw ApiError.unauthenticated('A launcher credential is required (Authorization: Bearer <credential from `backlot launcher-token`>).');
  }
  if (!isLauncherCredential(credential)) {
    throw ApiError.unauthenticated('A studio token does not open the launcher side; send a launcher credential.');
  }
  const hash = hashToken(credential);
  const stored = resolve(hash);
  if (stored === null || !sameHash(stored, hash)) {
    throw ApiError.unauthenticated('The launcher credential is unknown or has been revoked.');
  }
  return { kind: 'launcher' };
}

export function requireCapability(principal: Principal, capability: Capability): void {
  if (!principal.capabilities.has(capability)) throw ApiError.capabilityRequired(capability);
}
