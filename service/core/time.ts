/** RFC 3339 UTC with milliseconds, e.g. 2026-11-22T10:01:24.123Z. */
export function nowIso(): string {
  const now = Date.now();
  // Formatted once per millisecond: a busy server asks many times within one.
  if (now !== last.ms) {
    last.ms = now;
    last.iso = new Date(now).toISOString();
  }
  return last.iso;
}

const last = { ms: -1, iso: '' };

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses an RFC 3339 instant (any offset, any fraction) into the canonical
 * millisecond UTC form, or null when the text is not one. Fractions finer than a
 * millisecond are truncated, matching how instants are stored.
 */
export function parseInstant(text: string): string | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [, , mo, d, h, mi, s] = m;
  if (+mo! < 1 || +mo! > 12 || +d! < 1 || +d! > 31 || +h! > 23 || +mi! > 59 || +s! > 59) return null;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return null;
  const date = new Date(ms);
  // Date.parse rolls 2026-02-31 over into March; a real instant does not.
  const offsetMin = /^[Zz]$/.test(m[8]!) ? 0 : (m[8]![0] === '-' ? -1 : 1) * (+m[8]!.slice(1, 3) * 60 + +m[8]!.slice(4, 6));
  const local = new Date(ms + offsetMin * 60_000);
  if (local.getUTCDate() !== +d!) return null;
  return date.toISOString();
}
