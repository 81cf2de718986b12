import { parseArgs } from 'node:util';

/**
 * The shell's rules as pure functions (test/unit/shell-rules.test.ts): what a
 * window may navigate to, what a pop-up becomes, which session a studio gets.
 * main/shell.ts only wires them to Electron's events.
 */

/** decisions §1: a studio id. */
const STUDIO_ID = /^[a-z][a-z0-9-]{1,31}$/;

/** What a window shows: the launcher page, the editor page, or one studio's origin. */
export type WindowKind = { kind: 'launcher' } | { kind: 'editor' } | { kind: 'studio'; id: string };

/** Where a URL leads, seen from a service listening on `port`. */
export type Place =
  | { kind: 'service'; path: string }
  | { kind: 'studio'; id: string }
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
  return { kind: 'external' };
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
