import { ApiFailure, call, query, type Page } from '../../lib/api';
import { announce, h, replace } from '../../lib/dom';
import { frameScheduler, syncChildren } from '../frame';
import { requestCard, type CardActions } from './card';
import { readFacts, studioName } from './facts';
import { openRecipient, reserveTab } from './open';
import { createRequestsState, idleStatus, isShown, shownIds, type CardStatus } from './state';
import { dropStrip } from './thumbs';
import type { Handoff } from '../../lib/api-types';
import { refusalWords } from './words';

/**
 * The Requests region: each pending handoff is a card the person answers
 * (renderer/README.md "Launcher: requests and permissions"). The pending list is read at start and on every reconnect
 * of the event stream; `handoff` events only change state, and the cards are drawn once
 * per animation frame (frame.ts), so a burst of requests is one render.
 */

export interface RequestsHooks {
  /** A rule was added ("Always allow"): the permissions view reads its list again. */
  rulesChanged(): void;
}

/** Pending handoffs per page of the list read (a studio may keep 20 pending). */
const LIST_LIMIT = 200;

export function createRequests(hooks: RequestsHooks) {
  const state = createRequestsState();
  const schedule = frameScheduler(render);
  const list = h('ul', { class: 'requests' });
  const empty = h('li', { class: 'empty requests-empty' }, 'No requests. When a studio offers its work to another (“Send to”), you decide here.');
  const failure = h('p', { class: 'error', hidden: true });
  const heading = h('h2', { id: 'requests-title', tabindex: -1 }, 'Requests');
  const count = h('span', { class: 'badge requests-count', hidden: true });
  const element = h(
    'section',
    { class: 'panel requests-panel', id: 'requests', 'aria-labelledby': 'requests-title' },
    h('div', { class: 'panel-head' }, heading, count),
    failure,
    list,
  );
  const cards = new Map<string, HTMLLIElement>();
  /** Handoffs whose kinds and title are being read. */
  const reading = new Set<string>();

  // ---- state changes -----------------------------------------------------------------

  /**
   * Answered handoffs are not kept (a studio may send and withdraw without end): only the
   * time of their last change, so an older list read cannot bring one back as pending.
   */
  const closed = new Map<string, string>();
  const CLOSED_KEPT = 2000;

  function close(ho: Handoff): void {
    state.handoffs.delete(ho.id);
    state.facts.delete(ho.id);
    state.seenAt.delete(ho.id);
    dropStrip(ho.id);
    closed.delete(ho.id);
    closed.set(ho.id, ho.updated_at);
    if (closed.size > CLOSED_KEPT) closed.delete(closed.keys().next().value!);
  }

  function remember(ho: Handoff): void {
    const before = state.handoffs.get(ho.id);
    if (before && before.updated_at > ho.updated_at) return;
    const gone = closed.get(ho.id);
    if (gone !== undefined) {
      if (gone >= ho.updated_at) return;
      closed.delete(ho.id);
    }
    state.handoffs.set(ho.id, ho);
    if (!before || before.state !== ho.state) state.listChanged = true;
    state.dirty.add(ho.id);
    if (ho.state === 'pending' && !state.facts.has(ho.id) && !reading.has(ho.id)) {
      reading.add(ho.id);
      void readFacts(ho).then((facts) => {
        reading.delete(ho.id);
        if (!state.handoffs.has(ho.id)) return;
        state.facts.set(ho.id, facts);
        state.dirty.add(ho.id);
        schedule();
      });
    }
  }

  /** A `handoff` event: the whole handoff, on creation and on every change of state. */
  function handoffEvent(ho: Handoff): void {
    state.seenAt.set(ho.id, performance.now());
    remember(ho);
    schedule();
  }

  /**
   * The pending list read again (at start, on each reconnect): merged by time into what
   * events said; a pending one the list lacks was answered meanwhile, unless an event
   * named it after the read began.
   */
  async function load(): Promise<void> {
    const since = performance.now();
    try {
      const items: Handoff[] = [];
      let cursor: string | null = null;
      do {
        const page: Page<Handoff> = await call<Page<Handoff>>(`/launcher/handoffs${query({ state: 'pending', limit: LIST_LIMIT, cursor })}`);
        items.push(...page.items);
        cursor = page.next_cursor;
      } while (cursor);
      state.failure = null;
      const listed = new Set(items.map((ho) => ho.id));
      for (const ho of state.handoffs.values()) {
        if (ho.state === 'pending' && !listed.has(ho.id) && (state.seenAt.get(ho.id) ?? 0) < since) {
          // Answered or withdrawn while the stream was down: read its state now.
          void call<Handoff>(`/launcher/handoffs/${encodeURIComponent(ho.id)}`).then(
            (now) => handoffEvent(now),
            () => forget(ho.id),
          );
        }
      }
      for (const ho of items) remember(ho);
    } catch (err) {
      state.failure = err;
    }
    state.listChanged = true;
    schedule();
  }

  function forget(id: string): void {
    state.handoffs.delete(id);
    state.status.delete(id);
    state.listChanged = true;
    schedule();
  }

  function setStatus(id: string, change: Partial<CardStatus>): void {
    state.status.set(id, { ...(state.status.get(id) ?? idleStatus()), ...change });
    state.dirty.add(id);
    state.listChanged = true;
    schedule();
  }

  function clearStatus(id: string): void {
    state.status.delete(id);
    state.dirty.add(id);
    state.listChanged = true;
    schedule();
  }

  function refused(id: string, err: unknown): void {
    const ho = state.handoffs.get(id);
    const to = ho ? studioName(ho.to) : 'The studio';
    const error =
      err instanceof ApiFailure
        ? { text: refusalWords(err, to), code: `${err.status} ${err.code}` }
        : { text: err instanceof Error ? err.message : String(err), code: 'error' };
    setStatus(id, { busy: null, progress: null, error });
    // A refusal means its state moved on: learn the state it is in now.
    if (err instanceof ApiFailure && err.status === 409) {
      void call<Handoff>(`/launcher/handoffs/${encodeURIComponent(id)}`).then(handoffEvent, () => undefined);
    }
  }

  // ---- actions -----------------------------------------------------------------------

  async function approve(ho: Handoff, always: boolean, busy: CardStatus['busy']): Promise<Handoff | null> {
    setStatus(ho.id, { busy, error: null, link: null, progress: busy === 'open' ? 'Allowing…' : null });
    try {
      const now = await call<Handoff>(`/launcher/handoffs/${encodeURIComponent(ho.id)}:approve`, { method: 'POST', body: always ? { always: true } : {} });
      state.seenAt.set(now.id, performance.now());
      remember(now);
      return now;
    } catch (err) {
      refused(ho.id, err);
      return null;
    }
  }

  async function openIt(ho: Handoff, tab: Window | null): Promise<void> {
    const to = studioName(ho.to);
    setStatus(ho.id, { busy: 'open', error: null, retryOpen: false, progress: `Opening ${to}…` });
    try {
      const link = await openRecipient(ho, tab, (text) => setStatus(ho.id, { progress: text }));
      if (link) {
        setStatus(ho.id, { busy: null, progress: null, link });
        announce(`Allowed. Your browser did not open a new tab: use the link “Open ${to}”.`);
      } else {
        clearStatus(ho.id);
        announce(`Allowed. ${to} opened with what ${studioName(ho.from)} sent.`);
      }
    } catch (err) {
      tab?.close();
      setStatus(ho.id, { busy: null, progress: null, retryOpen: true });
      refused(ho.id, err);
    }
  }

  const actions: CardActions = {
    allowAndOpen(ho) {
      // Opened inside the click, before any await (open.ts).
      const tab = reserveTab(ho.to);
      void approve(ho, false, 'open').then((now) => {
        if (now) void openIt(now, tab);
        else tab?.close();
      });
    },
    allowOnce(ho) {
      void approve(ho, false, 'once').then((now) => {
        if (!now) return;
        clearStatus(ho.id);
        announce(`Allowed once: ${studioName(ho.to)} may take what ${studioName(ho.from)} sent.`);
      });
    },
    alwaysAllow(ho) {
      void approve(ho, true, 'always').then((now) => {
        if (!now) return;
        clearStatus(ho.id);
        hooks.rulesChanged();
        announce(`Allowed. From now on ${studioName(ho.from)} may send to ${studioName(ho.to)} without asking.`);
      });
    },
    decline(ho) {
      setStatus(ho.id, { busy: 'decline', error: null });
      void call<Handoff>(`/launcher/handoffs/${encodeURIComponent(ho.id)}:decline`, { method: 'POST' }).then(
        (now) => {
          state.seenAt.set(now.id, performance.now());
          remember(now);
          clearStatus(ho.id);
          announce(`Declined: ${studioName(ho.to)} gets nothing from this request.`);
        },
        (err) => refused(ho.id, err),
      );
    },
    openAgain(ho) {
      void openIt(ho, reserveTab(ho.to));
    },
    dismiss(ho) {
      clearStatus(ho.id);
    },
  };

  // ---- render ------------------------------------------------------------------------

  function render(): void {
    if (state.dirty.size === 0 && !state.listChanged) return;
    const ids = shownIds(state);
    const before = [...list.querySelectorAll<HTMLElement>(':scope > li.request')].map((li) => li.dataset.handoff!);
    const active = document.activeElement;
    const focusedCard = active instanceof HTMLElement && list.contains(active) ? active.closest<HTMLElement>('li.request')?.dataset.handoff : undefined;
    for (const id of state.dirty) {
      const ho = state.handoffs.get(id);
      if (!ho || !isShown(state, id)) {
        cards.delete(id);
        if (ho) close(ho);
        continue;
      }
      const card = requestCard(ho, state.status.get(id) ?? idleStatus(), state.facts.get(id), actions);
      const old = cards.get(id);
      cards.set(id, card);
      if (old?.isConnected) swapCard(old, card);
    }
    state.dirty.clear();
    if (state.listChanged) {
      state.listChanged = false;
      syncChildren(list, ids.length === 0 ? [empty] : ids.map((id) => cards.get(id)!));
      const waiting = ids.filter((id) => state.handoffs.get(id)?.state === 'pending').length;
      count.hidden = waiting === 0;
      count.textContent = `${waiting} waiting`;
      element.classList.toggle('has-requests', ids.length > 0);
      // The card that had the focus left: the focus goes to the card now in its place, else the heading.
      if (focusedCard && !ids.includes(focusedCard)) {
        const at = before.indexOf(focusedCard);
        const next = before.slice(at + 1).find((id) => ids.includes(id)) ?? before.slice(0, at).reverse().find((id) => ids.includes(id));
        const card = next ? cards.get(next) : undefined;
        (card?.querySelector<HTMLElement>('button:not(:disabled), a') ?? card ?? heading).focus();
      }
    }
    failure.hidden = !state.failure;
    if (state.failure) replace(failure, `The requests could not be read: ${state.failure instanceof ApiFailure ? state.failure.message : String(state.failure)}`);
  }

  /** Puts a rebuilt card in place; a focused control gets its focus back in the new card (by `data-focus`, else the card). */
  function swapCard(old: HTMLElement, card: HTMLElement): void {
    const active = document.activeElement;
    const focus = active instanceof HTMLElement && old.contains(active) ? (active.dataset.focus ?? '') : null;
    old.replaceWith(card);
    if (focus === null) return;
    const target = focus ? card.querySelector<HTMLElement>(`[data-focus="${CSS.escape(focus)}"]`) : null;
    if (target && !target.hasAttribute('disabled')) target.focus({ preventScroll: true });
    else card.focus({ preventScroll: true });
  }

  return { element, load, handoffEvent, studiosChanged: () => {
    for (const id of cards.keys()) state.dirty.add(id);
    schedule();
  } };
}
