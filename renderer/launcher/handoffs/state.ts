import type { Handoff } from '../../lib/api-types';
import type { AssetKind } from './words';

/**
 * The Requests region's state: every handoff this page knows (from the pending list
 * and `handoff` events), what each card is doing, and what is known of the offered
 * work. Changed by events and actions; rendered once per animation frame (requests.ts).
 */

export interface CardStatus {
  /** The button whose request is in flight (every button of the card is disabled meanwhile). */
  busy: 'open' | 'once' | 'always' | 'decline' | null;
  /** What "Allow and open" is doing now: "Allowing…", "Starting Clipmaker…". */
  progress: string | null;
  /** A refusal or a failed start, in words, with the service's code. */
  error: { text: string; code: string } | null;
  /** The recipient's address, to follow by hand when the browser refused a new tab. */
  link: string | null;
  /** Allowed by this page, the recipient not opened yet (a failed start): "Try again" opens it. */
  retryOpen: boolean;
}

export interface Facts {
  /** Each offered asset's kind, null until its record is read (or when it is gone). */
  kinds: (AssetKind | null)[];
  /** The offered item's title (or prompt), when the handoff names an item. */
  title: string | null;
}

export interface RequestsState {
  handoffs: Map<string, Handoff>;
  status: Map<string, CardStatus>;
  facts: Map<string, Facts>;
  /** When an event last named each handoff (this page's clock): a list read older than that does not undo it. */
  seenAt: Map<string, number>;
  /** Cards to build again at the next frame. */
  dirty: Set<string>;
  /** Which cards show, or their order, may have changed. */
  listChanged: boolean;
  /** The pending list could not be read. */
  failure: unknown;
}

export function createRequestsState(): RequestsState {
  return { handoffs: new Map(), status: new Map(), facts: new Map(), seenAt: new Map(), dirty: new Set(), listChanged: true, failure: null };
}

export function idleStatus(): CardStatus {
  return { busy: null, progress: null, error: null, link: null, retryOpen: false };
}

/** A card shows while its handoff waits for the person, and after that while it has something to say. */
export function isShown(state: RequestsState, id: string): boolean {
  const h = state.handoffs.get(id);
  if (!h) return false;
  const s = state.status.get(id);
  return h.state === 'pending' || !!(s && (s.busy || s.error || s.link || s.retryOpen));
}

/** The cards, oldest request first (the order they were asked in; a new one joins at the end). */
export function shownIds(state: RequestsState): string[] {
  return [...state.handoffs.values()]
    .filter((h) => isShown(state, h.id))
    .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1))
    .map((h) => h.id);
}
