/**
 * Byte ranges of `GET /assets/{id}` (RFC 9110 §14). Pure: a Range header and
 * the file size in, what to answer out.
 *
 * - no header, another unit, a malformed header, or a first position after the
 *   last: `whole` (RFC 9110 lets a server ignore a Range it cannot use);
 * - more than one range (`bytes=0-1,5-6`): `whole` as well. A multipart/byteranges
 *   answer is allowed but not required, and one 200 is simpler for every client;
 * - one range inside the file: `partial` with inclusive `start`..`end`;
 * - one well-formed range that starts at or past the end (or a suffix of 0, or
 *   any range of an empty file): `unsatisfiable` (416).
 */

export type RangeAnswer =
  | { kind: 'whole' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

const WHOLE: RangeAnswer = { kind: 'whole' };
const UNSATISFIABLE: RangeAnswer = { kind: 'unsatisfiable' };
const SPEC = /^(?:(\d+)-(\d*)|-(\d+))$/;

export function parseRange(header: string | undefined, size: number): RangeAnswer {
  if (header === undefined) return WHOLE;
  const m = /^\s*bytes\s*=\s*(.*)$/i.exec(header);
  if (!m) return WHOLE;
  const specs = m[1]!.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (specs.length !== 1) return WHOLE;
  const spec = SPEC.exec(specs[0]!);
  if (!spec) return WHOLE;
  const [, first, last, suffix] = spec;
  if (suffix !== undefined) {
    const n = toNumber(suffix);
    if (n === 0 || size === 0) return UNSATISFIABLE;
    return { kind: 'partial', start: Math.max(0, size - n), end: size - 1 };
  }
  const start = toNumber(first!);
  const end = last === '' ? Number.MAX_SAFE_INTEGER : toNumber(last!);
  if (end < start) return WHOLE;
  if (start >= size) return UNSATISFIABLE;
  return { kind: 'partial', start, end: Math.min(end, size - 1) };
}

/** Digits to a number; anything beyond the safe range counts as "past any file". */
function toNumber(digits: string): number {
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : Number.MAX_SAFE_INTEGER;
}

/** Whether an `If-None-Match` list names this entity tag (weak comparison, RFC 9110 §13.1.2). */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === `"${etag}"`);
}

/**
 * `If-Range`: a Range applies only while the entity tag still matches (strong
 * comparison). A date or another tag means "send the whole file".
 */
export function ifRangeHolds(header: string | undefined, etag: string): boolean {
  return header === undefined || header.trim() === `"${etag}"`;
}
