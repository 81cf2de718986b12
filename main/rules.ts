import { parseArgs } from 'node:util';

/**
 * The shell's rules as pure functions (test/unit/shell-rules.test.ts): what a
 * window may navigate to, what a pop-up becomes, which session a studio gets.
 * main/shell.ts only wires them to Electron's events.
 */

/** A studio id (docs/studios.md). */
const STUDIO_ID = /^[a-z][a-z0-9-]{1,31}$/;

/** What a window shows: the launcher page, the editor page, or one studio's origin. */
export type WindowKind = { kind: 'launcher' } | { kind: 'editor' } | { kind: 'studio'; id: string };

/** Where a URL leads, seen from a service listening on `port`. */
export type Place =
  | { kind: 'service'; path: string }
  | { kind: 'studio'; id: string }
  /**
   * A loopback address that is not the service's own origin (another port, another
   * loopback name or address, https): a studio's own server or another local program.
   * Never handed to the browser: there it would run outside the studio's origin and session.
   */
  | { kind: 'loopback' }
  /** An http(s) address anywhere else: it belongs in the person's browser. */
  | { kind: 'external' }
  /** file:, data:, javascript:, chrome:, a malformed URL ...: never opened. */
  | { kind: 'other' };

export function placeOf(url: string, port: number): Place {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { kind: 'other' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { kind: 'other' };
  // Credentials in a URL are a phishing device; nothing of ours uses them.
  if (u.username || u.password) return { kind: 'other' };
  const own = u.protocol === 'http:' && u.port === String(port);
  if (own && (u.hostname === '127.0.0.1' || u.hostname === 'localhost')) return { kind: 'service', path: u.pathname };
  if (own && u.hostname.endsWith('.localhost')) {
    const id = u.hostname.slice(0, -'.localhost'.length);
    return STUDIO_ID.test(id) ? { kind: 'studio', id } : { kind: 'other' };
  }
  return isLoopbackHost(u.hostname) ? { kind: 'loopback' } : { kind: 'external' };
}

/**
 * Whether a URL's host (as the URL parser normalised it: lower case, IPv4 in
 * dotted decimal, IPv6 in brackets, compressed) names this machine: localhost
 * and *.localhost, 127.0.0.0/8, 0.0.0.0/8 (Linux and macOS connect it to the
 * machine itself), ::1, :: and IPv4-mapped forms of those.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const v4 = /^(\d{1,3})\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.exec(host);
  if (v4) return v4[1] === '127' || v4[1] === '0';
  if (!host.startsWith('[')) return false;
  const v6 = host.slice(1, -1);
  if (v6 === '::1' || v6 === '::') return true;
  // ::ffff:a.b.c.d, which the parser writes as ::ffff:XXXX:XXXX (127.x is 7fXX, 0.x is 00XX or shorter).
  const mapped = /^::ffff:([0-9a-f]{1,4}):[0-9a-f]{1,4}$/.exec(v6);
  if (mapped) {
    const high = parseInt(mapped[1]!, 16) >> 8;
    return high === 127 || high === 0;
  }
  return false;
}

/** The session partition of a studio's windows: its own cookies, storage and cache. */
export function studioPartition(id: string): string {
  return `persist:studio-${id}`;
}

/** Whether a window of `kind` may load `url` in place (a link, a redirect, a form). */
export function mayNavigate(kind: WindowKind, url: string, port: number): boolean {
  const place = placeOf(url, port);
  switch (kind.kind) {
    case 'launcher':
      return place.kind === 'service';
    case 'editor':
      // The editor window stays the editor: it is the page that keeps :open reachable.
      return place.kind === 'service' && (place.path === '/editor' || place.path.startsWith('/editor/'));
    case 'studio':
      return place.kind === 'studio' && place.id === kind.id;
  }
}

/**
 * What becomes of a pop-up (`window.open`, a `target=_blank` link) or of a
 * navigation `mayNavigate` refused (a plain link to a studio from the launcher
 * opens the studio's window; an external link, the browser).
 */
export type Redirect =
  /** Open (or focus) the studio's own window. */
  | { to: 'studio'; id: string; url: string }
  /** Show the editor window. */
  | { to: 'editor' }
  /** Show the launcher window at this address of its page (the editor's link to a gallery item, `/#gallery/<id>`). */
  | { to: 'launcher'; url: string }
  /** Hand the address to the default browser. */
  | { to: 'browser'; url: string }
  | { to: 'nowhere' };

/**
 * A pop-up never gets an opener relationship: the shell denies it and opens the
 * window itself, so no page holds a handle on another origin's window.
 * - the launcher may open any studio, the editor page, and external pages (browser);
 * - a studio may open its own origin again, and external pages (browser);
 * - the editor page opens the launcher's page (`/`, e.g. `/#gallery/<id>`) in the
 *   launcher window, and external pages (browser).
 */
export function popupTarget(from: WindowKind, url: string, port: number): Redirect {
  const place = placeOf(url, port);
  if (place.kind === 'external') return { to: 'browser', url };
  if (place.kind === 'studio') {
    if (from.kind === 'launcher' || (from.kind === 'studio' && from.id === place.id)) return { to: 'studio', id: place.id, url };
    return { to: 'nowhere' };
  }
  if (place.kind === 'service' && from.kind === 'launcher' && place.path.startsWith('/editor/')) return { to: 'editor' };
  if (place.kind === 'service' && from.kind === 'editor' && place.path === '/') return { to: 'launcher', url };
  return { to: 'nowhere' };
}

/**
 * How long a person's input counts as the gesture behind opening an address in
 * the browser: the span Chromium gives a click to open a pop-up (transient user
 * activation). The real API tells neither the window-open handler nor
 * `will-navigate` whether a gesture caused them, so the shell notes each
 * window's last input (`input-event`) and asks this.
 */
export const GESTURE_MS = 5000;

/** Input that counts as a gesture: a press or click, a key, a tap (not a move, a wheel, a held key repeating). */
export function isGesture(input: { type: string; modifiers?: string[] }): boolean {
  if (input.modifiers?.includes('isautorepeat')) return false;
  return ['mouseDown', 'mouseUp', 'keyDown', 'rawKeyDown', 'gestureTap', 'touchEnd', 'pointerDown', 'pointerUp'].includes(input.type);
}

/** At most one browser opening per second and five per minute, per window. */
export const OPEN_LIMITS: ReadonlyArray<{ ms: number; max: number }> = [
  { ms: 1000, max: 1 },
  { ms: 60_000, max: 5 },
];

export type OpenVerdict = { ok: true; opened: number[] } | { ok: false; reason: string };

/**
 * Whether a window may hand an address to the browser now: only within
 * GESTURE_MS of the person's last input in it, and within OPEN_LIMITS of its
 * earlier openings (`opened`, times in ms). On success, the openings to keep.
 */
export function mayOpenExternal(lastGesture: number | null, opened: readonly number[], now: number): OpenVerdict {
  if (lastGesture === null || now - lastGesture > GESTURE_MS || now < lastGesture) {
    return { ok: false, reason: 'no click or key press in the window just before' };
  }
  const longest = Math.max(...OPEN_LIMITS.map((l) => l.ms));
  const recent = opened.filter((t) => now - t < longest);
  for (const limit of OPEN_LIMITS) {
    if (recent.filter((t) => now - t < limit.ms).length >= limit.max) {
      return { ok: false, reason: `more than ${limit.max} in ${limit.ms / 1000} s` };
    }
  }
  return { ok: true, opened: [...recent, now] };
}

/** The launcher page's frame, the only one the folder picker answers. */
export function isLauncherFrame(url: string | undefined, port: number): boolean {
  if (!url) return false;
  const place = placeOf(url, port);
  return place.kind === 'service' && !place.path.startsWith('/editor/');
}

export interface ShellArgs {
  dataDir: string | null;
  /** null: 7380, falling back to a free port when taken. */
  port: number | null;
}

/** The shell's command line after Electron's own: [--data-dir DIR] [--port N]. */
export function parseShellArgs(args: string[]): ShellArgs {
  const { values } = parseArgs({
    args,
    options: { 'data-dir': { type: 'string' }, port: { type: 'string' } },
    strict: false, // Chromium switches (e.g. --enable-logging) pass through
    allowPositionals: true,
  });
  const raw = values.port;
  let port: number | null = null;
  if (raw !== undefined) {
    port = typeof raw === 'string' && /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
    if (!(port >= 0 && port <= 65535)) throw new Error(`--port must be a whole number from 0 to 65535, not "${String(raw)}".`);
  }
  const dataDir = typeof values['data-dir'] === 'string' ? values['data-dir'] : null;
  return { dataDir, port };
}
