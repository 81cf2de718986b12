import { ApiFailure, call, query, type Page } from '../../lib/api';
import { failureText } from '../read';
import { requestRender, state } from '../state';
import type { Timeline } from '../types';
import { say } from './notice';

/**
 * The sequence browser and the page's address: any studio's sequence is
 * opened from here (POST /launcher/timelines/{id}:open, which every connected
 * editor page answers by showing it), and the address names the open one
 * (`/editor/#<id>`), so a reload or Back opens it again.
 */

const PAGE = 50;
let listSeq = 0;

export async function loadSequences(more = false): Promise<void> {
  const b = state.browser;
  const seq = ++listSeq;
  b.loading = true;
  requestRender('browser');
  try {
    const page = await call<Page<Timeline>>(
      `/launcher/timelines${query({ q: b.q.trim() || undefined, studio: b.studio || undefined, limit: PAGE, cursor: more ? (b.next ?? undefined) : undefined })}`,
    );
    if (seq !== listSeq) return;
    b.items = more ? [...b.items, ...page.items] : page.items;
    b.next = page.next_cursor;
    b.error = null;
    // The studios to search by: the installed ones and every one whose sequences were listed.
    b.studios = [...new Set([...b.studios, ...page.items.map((t) => t.studio_id)])].sort();
  } catch (err) {
    if (seq !== listSeq) return;
    b.error = `Could not list the sequences: ${failureText(err)}`;
  } finally {
    if (seq === listSeq) b.loading = false;
    requestRender('browser');
  }
}

/** The studios to search by (every installed one). */
export async function loadStudios(): Promise<void> {
  try {
    const page = await call<Page<{ id: string }>>(`/launcher/studios${query({ limit: 100 })}`);
    state.browser.studios = [...new Set([...state.browser.studios, ...page.items.map((s) => s.id)])].sort();
  } catch {
    // the studios of the listed sequences remain
  }
  requestRender('browser');
}

export function searchSequences(q: string, studio: string): void {
  state.browser.q = q;
  state.browser.studio = studio;
  void loadSequences();
}

export function showBrowser(shown = !state.browser.shown): void {
  state.browser.shown = shown;
  requestRender('browser');
  if (shown) void loadSequences();
}

/** Asks the service to show a sequence here (and on every other editor page); it arrives as an `open` event. */
export async function openSequence(id: string): Promise<void> {
  say('Opening the sequence…');
  try {
    await call(`/launcher/timelines/${encodeURIComponent(id)}:open`, { method: 'POST' });
  } catch (err) {
    const gone = err instanceof ApiFailure && err.status === 404;
    say(gone ? 'That sequence no longer exists (or was deleted). Choose another below.' : `Could not open the sequence: ${failureText(err)}`, true);
    if (gone && state.tl === null) showBrowser(true);
  }
}

/** The id the address names (`#<id>`), if any. */
export function addressedId(): string | null {
  const id = decodeURIComponent(location.hash.slice(1));
  return /^[0-9A-Za-z_-]{1,64}$/.test(id) ? id : null;
}

/**
 * The address follows the open sequence: a new entry per sequence opened (so
 * Back returns to the one before), none when it already names it.
 */
export function noteOpened(id: string): void {
  if (addressedId() === id) return;
  const url = `${location.pathname}${location.search}#${encodeURIComponent(id)}`;
  if (location.hash === '') history.replaceState(null, '', url);
  else history.pushState(null, '', url);
}

/** Back, Forward or an edited address: open what it names, when that is not what is shown. */
export function followAddress(): void {
  const id = addressedId();
  if (id && id !== state.tl?.id) void openSequence(id);
}
