import { monotonicFactory } from 'ulid';

/**
 * ULIDs from one monotonic factory per process: strictly increasing even within
 * one millisecond, so id order is creation order.
 */
const next = monotonicFactory();

export function newId(): string {
  return next();
}

/** A canonical ULID: 26 upper-case Crockford base32 characters, time within 48 bits. */
export function isUlid(text: string): boolean {
  return /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/.test(text);
}
