import { ApiFailure, call } from '../../lib/api';
import { studioById, type Studio } from '../studios';
import { studioName } from './facts';
import type { Handoff } from '../../lib/api-types';

/**
 * Opening the recipient at its `accepts` path with `?handoff=<id>` (where a studio that
 * accepts work reads it), starting it first when it is not running
 * (renderer/README.md "Launcher: requests and permissions").
 *
 * - In a browser the new tab is opened inside the click (`reserveTab`): a `window.open`
 *   after an await has lost the click's activation and the popup blocker refuses it. The
 *   tab shows "Opening …" until the studio runs, then goes to its address; a failed
 *   start closes it and the card says why.
 * - In the desktop app (the launcher window has `window.backlot`) the shell opens a
 *   studio's address in that studio's own window, opening or reusing it, and refuses an
 *   about:blank pop-up (main/rules.ts `popupTarget`); so nothing is reserved there and
 *   the studio's address is opened once it runs.
 */

/** How long a start may take before the card gives up waiting (the service's own readiness limit is 60 s). */
const START_WAIT_MS = 90_000;

const inDesktopApp = (): boolean => 'backlot' in window;

/** A blank tab for the recipient, opened while the click's activation lasts; null in the desktop app or when the browser refused it. */
export function reserveTab(to: string): Window | null {
  if (inDesktopApp()) return null;
  const tab = window.open('', '_blank');
  if (!tab) return null;
  // The studio's page must not reach back into the launcher's page.
  tab.opener = null;
  try {
    tab.document.title = `Opening ${studioName(to)}…`;
    tab.document.body.textContent = `Opening ${studioName(to)}…`;
  } catch {
    // a browser that gave no same-origin blank page: it only shows no message
  }
  return tab;
}

/** The address the recipient opens a handoff at: its origin, its `accepts.path`, `?handoff=<id>`. */
export function receiveUrl(s: Studio, handoffId: string): string {
  const url = new URL(s.accepts?.path ?? '/', `${s.origin}/`);
  url.searchParams.set('handoff', handoffId);
  return url.href;
}

type Waiter = { id: string; settle(s: Studio | null): void };
const waiters: Waiter[] = [];

/** Every `studio` event of `/launcher/events` (main.ts): a start being waited for may have ended. */
export function studioChangedForOpen(s: Studio & { removed?: boolean }): void {
  for (const w of [...waiters]) if (w.id === s.id) w.settle(s.removed ? null : s);
}

/**
 * Until the studio runs. Watches the `studio` events (not the rendered list: the studio
 * list renders on animation frames, which stop while the new tab hides this page).
 */
function untilRunning(id: string): Promise<Studio> {
  return new Promise((resolve, reject) => {
    const name = studioName(id);
    const finish = (outcome: () => void) => {
      const at = waiters.indexOf(waiter);
      if (at < 0) return;
      waiters.splice(at, 1);
      clearTimeout(timer);
      outcome();
    };
    const waiter: Waiter = {
      id,
      settle(s) {
        if (s && s.state !== 'running' && s.state !== 'failed') return; // still on its way
        finish(() => {
          if (s?.state === 'running') resolve(s);
          else if (!s) reject(new Error(`${name} was uninstalled.`));
          else reject(new Error(s.last_error ? `${name} did not start: ${s.last_error}` : `${name} did not start.`));
        });
      },
    };
    waiters.push(waiter);
    const timer = window.setTimeout(() => finish(() => reject(new Error(`${name} did not start within ${START_WAIT_MS / 1000} s.`))), START_WAIT_MS);
    // The event may have come before this wait began (or while the stream reconnected).
    const now = studioById(id);
    if (now?.state === 'running') waiter.settle(now);
    else
      void call<Studio>(`/launcher/studios/${encodeURIComponent(id)}`).then(
        (s) => {
          if (s.state === 'running' || s.state === 'failed') waiter.settle(s);
        },
        () => undefined,
      );
  });
}

/**
 * Starts the recipient when it is not running (409 `already_running` is fine: it is on
 * its way), waits until it runs, and opens it: in `tab`, else (the desktop app) through
 * the shell. Returns the address when it could not be opened (a browser that refused the
 * tab: the card offers it as a link).
 */
export async function openRecipient(ho: Handoff, tab: Window | null, progress: (text: string) => void): Promise<string | null> {
  let s = studioById(ho.to);
  if (!s) throw new Error(`${studioName(ho.to)} is no longer installed.`);
  if (s.state !== 'running') {
    progress(`Starting ${s.name}…`);
    try {
      await call(`/launcher/studios/${encodeURIComponent(ho.to)}:start`, { method: 'POST' });
    } catch (err) {
      if (!(err instanceof ApiFailure && err.code === 'already_running')) throw err;
    }
    s = await untilRunning(ho.to);
  }
  progress(`Opening ${s.name}…`);
  const url = receiveUrl(s, ho.id);
  if (tab && !tab.closed) {
    tab.location.href = url;
    return null;
  }
  if (inDesktopApp()) {
    window.open(url, '_blank');
    return null;
  }
  return url;
}
