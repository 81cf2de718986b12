import { randomFillSync } from 'node:crypto';
import { ApiError } from './errors';

/**
 * Etags are opaque: 12 random bytes, base64url (16 characters). The body member `etag` is the
 * bare value; the `ETag` header carries it quoted (docs/api.md "Etags and If-Match").
 */
export function newEtag(): string {
  if (pooled + 12 > pool.length) {
    randomFillSync(pool);
    pooled = 0;
  }
  pooled += 12;
  return pool.toString('base64url', pooled - 12, pooled);
}

// Random bytes drawn 4 KiB at a time (one call to the system's source per 341 etags); each etag takes its own 12.
const pool = Buffer.alloc(4096);
let pooled = pool.length;

export function quoteEtag(etag: string): string {
  return `"${etag}"`;
}

/** The parsed `If-Match` header: absent, `*`, or a list of strong etags. */
export type IfMatch = { kind: 'absent' } | { kind: 'any' } | { kind: 'list'; etags: string[] };

/**
 * Accepts `*`, a quoted etag, a bare etag, or a comma-separated list of them.
 * Weak etags (`W/"..."`) never match: If-Match uses strong comparison (RFC 9110).
 */
export function parseIfMatch(header: string | undefined): IfMatch {
  if (header === undefined) return { kind: 'absent' };
  const text = header.trim();
  if (text === '*') return { kind: 'any' };
  const etags: string[] = [];
  for (const raw of text.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    if (part === '*') throw ApiError.badRequest('If-Match: * cannot be part of a list.');
    if (/^W\//i.test(part)) continue;
    const quoted = /^"([^"]*)"$/.exec(part);
    if (quoted) etags.push(quoted[1]!);
    else if (!part.includes('"')) etags.push(part);
    else throw ApiError.badRequest('The If-Match header is malformed.');
  }
  if (etags.length === 0 && !/W\//i.test(text)) throw ApiError.badRequest('The If-Match header is empty.');
  return { kind: 'list', etags };
}

/** Does a stored etag (or none, when the resource does not exist) satisfy If-Match? */
export function ifMatchHolds(ifMatch: IfMatch, current: string | null): boolean {
  switch (ifMatch.kind) {
    case 'absent':
      return true;
    case 'any':
      return current !== null;
    case 'list':
      return current !== null && ifMatch.etags.includes(current);
  }
}

/** Throws 409 `etag_mismatch` unless the precondition holds. */
export function checkIfMatch(ifMatch: IfMatch, current: string | null): void {
  if (!ifMatchHolds(ifMatch, current)) {
    throw ApiError.etagMismatch(
      current === null
        ? 'If-Match was sent but the resource does not exist.'
        : 'The resource has changed since it was read (If-Match does not match its etag).',
    );
  }
}
