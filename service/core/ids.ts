import { isValid, monotonicFactory } from 'ulid';

/**
 * ULIDs from one monotonic factory per process: strictly increasing even within
 * one millisecond, so id order is creation order.
 */
const next = monotonicFactory();

export function newId(): string {
  return next();
}

/** A canonical (upper-case, 26 character) ULID. */
export function isUlid(text: string): boolean {
  return text.length === 26 && /^[0-9A-HJKMNP-TV-Z]{26}$/.test(text) && isValid(text);
}
