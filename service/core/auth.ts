import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ApiError } from './errors';

/**
 * Studio tokens: 32 random bytes, shown once, stored only as their SHA-256.
 * A request's token is hashed, looked up by hash, and the stored hash compared
 * in constant time. Nothing is cached: a token revoked from the CLI fails on the
 * server's very next request.
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
}

/** What the token store answers for a hash: the stored hash and its grant. */
export interface TokenGrant {
  hash: Buffer;
  studioId: string;
  capabilities: string[];
}

export type TokenResolver = (hash: Buffer) => TokenGrant | null;

const TOKEN_PREFIX = 'blt_';

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
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

/** Resolves the caller or throws 401 `unauthenticated`. */
export function authenticate(header: string | undefined, resolve: TokenResolver): Principal {
  const token = bearerToken(header);
  if (token === null) throw ApiError.unauthenticated();
  const hash = hashToken(token);
  const grant = resolve(hash);
  if (!grant || grant.hash.length !== hash.length || !timingSafeEqual(grant.hash, hash)) {
    throw ApiError.unauthenticated('The token is unknown or has been revoked.');
  }
  return { studioId: grant.studioId, capabilities: new Set(grant.capabilities) };
}

export function requireCapability(principal: Principal, capability: Capability): void {
  if (!principal.capabilities.has(capability)) throw ApiError.capabilityRequired(capability);
}
