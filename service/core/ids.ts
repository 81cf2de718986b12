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

const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * A new id greater than `last`: newId() when it is (the usual case), else the
 * ULID right after `last` (same instant, random part plus one). For tables
 * whose row order must follow id order even if the clock stepped back between
 * two runs of the service.
 */
export function newIdAfter(last: string | null): string {
  const id = newId();
  if (last === null || id > last) return id;
  const digits = last.split('');
  for (let i = digits.length - 1; i >= 10; i--) {
    const d = BASE32.indexOf(digits[i]!);
    if (d < 31) {
      digits[i] = BASE32[d + 1]!;
      return digits.join('');
    }
    digits[i] = '0';
  }
  throw new Error('ULID random part exhausted within one millisecond');
}
