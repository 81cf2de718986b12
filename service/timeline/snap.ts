/**
 * Exact time arithmetic for sequences (docs/api.md "Snapping").
 *
 * A time on a track is an integer count of units: frames on V tracks (at the
 * target's fps), samples on A tracks (at its sample rate). A rate is a reduced
 * fraction of units per second, so 29.97 fps is 30000/1001 and nothing is
 * ever rounded twice. Seconds given by a client are read as the decimal they
 * were written as (0.1 is one tenth, not the binary double nearest to it),
 * turned into units with one round-half-up in integer arithmetic, and shown
 * again as the double nearest to units / rate. Snapping what was shown gives
 * the same units, so a document read back and written again does not move.
 */

export interface Rate {
  /** Units per second = num / den, reduced, both positive. */
  num: bigint;
  den: bigint;
}

/**
 * Frame rates written as 23.976 (or the common shorthand 23.98), 29.97, 59.94 ...
 * mean n×1000/1001 (NTSC): any non-whole fps within 0.005 of one.
 */
const NTSC_TOLERANCE = 0.005;
/** At most this many decimals in an fps that is neither whole nor NTSC (12.5, 7.5). */
const MAX_FPS_DECIMALS = 3;

/** A non-negative finite number as the exact fraction its shortest decimal spells. */
export function decimalOf(value: number): { num: bigint; den: bigint } {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`not a non-negative finite number: ${value}`);
  // String() gives the shortest decimal that reads back as the same double: "0.1", "1e-7", "1.5e+21".
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (!m) throw new RangeError(`unexpected number form: ${String(value)}`);
  const fraction = m[2] ?? '';
  const exponent = Number(m[3] ?? 0) - fraction.length;
  let num = BigInt(m[1]! + fraction);
  let den = 1n;
  if (exponent >= 0) num *= 10n ** BigInt(exponent);
  else den = 10n ** BigInt(-exponent);
  return reduce(num, den);
}

/** The rate of a V track: whole numbers exactly, NTSC values as n×1000/1001, else the decimal (12.5 = 25/2). */
export function frameRate(fps: number): Rate {
  if (!Number.isFinite(fps) || fps <= 0) throw new RangeError(`fps must be positive: ${fps}`);
  if (Number.isInteger(fps)) return { num: BigInt(fps), den: 1n };
  const ntsc = ntscMultiple(fps);
  if (ntsc !== null) return reduce(BigInt(ntsc) * 1000n, 1001n);
  return decimalOf(fps);
}

/** n when fps is n×1000/1001 within the tolerance, for a whole n ≥ 1 (never 0: a tiny fps is not "0 NTSC"). */
function ntscMultiple(fps: number): number | null {
  const ntsc = Math.round((fps * 1001) / 1000);
  return ntsc >= 1 && Math.abs((ntsc * 1000) / 1001 - fps) < NTSC_TOLERANCE ? ntsc : null;
}

/** Whether an fps value has a rate this module will use (see frameRate). */
export function isSupportedFps(fps: number): boolean {
  if (!Number.isFinite(fps) || fps <= 0) return false;
  if (Number.isInteger(fps)) return true;
  if (ntscMultiple(fps) !== null) return true;
  // At most 3 decimals: the reduced denominator divides 1000 (12.3456 = 7716/625 has 4, though 625 < 1000).
  return 10n ** BigInt(MAX_FPS_DECIMALS) % decimalOf(fps).den === 0n;
}

export function sampleRate(hz: number): Rate {
  if (!Number.isInteger(hz) || hz <= 0) throw new RangeError(`sample rate must be a positive integer: ${hz}`);
  return { num: BigInt(hz), den: 1n };
}

/**
 * Seconds → the nearest whole unit at `rate` (halves round up). With `minus`,
 * of `seconds − minus` taken as decimals (a default duration: the source's
 * length minus `in`), since in doubles 2.05 − 1 is 1.0499999999999998.
 */
export function toUnits(seconds: number, rate: Rate, minus = 0): number {
  let s = decimalOf(seconds);
  if (minus !== 0) {
    const m = decimalOf(minus);
    s = { num: s.num * m.den - m.num * s.den, den: s.den * m.den };
    if (s.num < 0n) throw new RangeError(`${seconds} - ${minus} is negative`);
  }
  // units = s.num/s.den × rate.num/rate.den, rounded half up: floor((2ab + c) / 2c) with c = s.den × rate.den.
  const a = s.num * rate.num;
  const c = s.den * rate.den;
  return Number((2n * a + c) / (2n * c));
}

/** Whole units → seconds (the double nearest to units / rate). */
export function toSeconds(units: number, rate: Rate): number {
  return Number(BigInt(units) * rate.den) / Number(rate.num);
}

/** Whether `units` at `rate` come before `seconds` (taken as the decimal it was written as), exactly. */
export function isBefore(units: number, rate: Rate, seconds: number): boolean {
  const s = decimalOf(seconds);
  return BigInt(units) * rate.den * s.den < s.num * rate.num;
}

/** Snapping a time: its units, shown again as seconds. Idempotent. */
export function snap(seconds: number, rate: Rate): number {
  return toSeconds(toUnits(seconds, rate), rate);
}

/** A rate as ffmpeg writes one: `30000/1001`, `30/1`. */
export function rateText(rate: Rate): string {
  return `${rate.num}/${rate.den}`;
}

/** Parses ffprobe's `num/den` (or a plain number); null for `0/0` and junk. */
export function parseRate(text: string | null | undefined): Rate | null {
  if (!text) return null;
  const m = /^(\d+)(?:\/(\d+))?$/.exec(text.trim());
  if (!m) return null;
  const num = BigInt(m[1]!);
  const den = BigInt(m[2] ?? '1');
  if (num === 0n || den === 0n) return null;
  return reduce(num, den);
}

export function sameRate(a: Rate, b: Rate): boolean {
  return a.num * b.den === b.num * a.den;
}

/** A rate for people: `30`, `29.97`, `23.976`, `12.5`. */
export function rateLabel(rate: Rate): string {
  const value = Number(rate.num) / Number(rate.den);
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 1000) / 1000);
}

function reduce(num: bigint, den: bigint): { num: bigint; den: bigint } {
  const g = gcd(num, den);
  return g === 0n ? { num, den } : { num: num / g, den: den / g };
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}
