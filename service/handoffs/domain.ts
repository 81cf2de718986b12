import type { Db } from '../db/open';
import { ApiError } from '../core/errors';
import { newId } from '../core/ids';
import { nowIso } from '../core/time';
import type { AssetKind, AssetsDomain } from '../assets';
import type { GalleryStore } from '../gallery';
import type { SessionsStore } from '../sessions';
import { assetSet, createHandoffsStore, type HandoffRow, type HandoffState, type HandoffsStore } from './store';
import { handoffView, type LauncherHandoff } from './view';

/**
 * Handoffs ("Send to", docs/api.md "Handoffs"): a studio offers read access
 * to some of its assets (and a copy of a session) to another studio; the user
 * approves it in the launcher; the recipient accepts it. Every change is one
 * immediate transaction; events go out after it commits.
 */

/** At most this many of a studio's handoffs wait for the user at once. */
export const MAX_PENDING = 20;
/** A pending handoff the user has not answered in this time expires. */
export const HANDOFF_TTL_MS = 24 * 60 * 60 * 1000;

export interface Recipient {
  /** Installed and not being uninstalled: it can be opened. */
  installed: boolean;
  accepts: { kinds: readonly AssetKind[]; path: string } | null;
}

export interface HandoffsDeps {
  db: Db;
  assets: Pick<AssetsDomain, 'store' | 'handover'>;
  gallery: Pick<GalleryStore, 'get'>;
  sessions: Pick<SessionsStore, 'isLive' | 'copyTo' | 'nameOf'>;
  /** The launcher's view of a studio it may hand to; null when it is not installed at all. */
  recipient(id: string): Recipient | null;
  /** The sender's and recipient's `/events` (studio channel only). */
  toStudio(studioId: string, data: { id: string; from: string; to: string; state: HandoffState }): void;
  /** `/launcher/events`: the whole handoff, as the launcher sees it. */
  toLauncher(handoff: LauncherHandoff): void;
  ttlMs?: number;
  /** How often pending handoffs are checked for expiry (events go out then); reads check at once anyway. */
  sweepMs?: number;
}

export interface NewHandoff {
  to: string;
  asset_ids: string[];
  item_id?: string;
  session_id?: string;
  note?: string;
}

export function createHandoffs(deps: HandoffsDeps) {
  const { db } = deps;
  const store: HandoffsStore = createHandoffsStore(db);
  const ttlMs = deps.ttlMs ?? HANDOFF_TTL_MS;

  /** A handoff as the launcher shows it: with the offered session's name. */
  function launcherView(row: HandoffRow): LauncherHandoff {
    const sessionName = row.session_id === null ? null : deps.sessions.nameOf(row.from_studio, row.session_id);
    return { ...handoffView(row), session_name: sessionName };
  }

  /** After commit: the sender hears every change, the recipient only those it may see, the launcher all. */
  function announce(rows: readonly HandoffRow[]): void {
    for (const row of rows) {
      const data = { id: row.id, from: row.from_studio, to: row.to_studio, state: row.state };
      deps.toStudio(row.from_studio, data);
      if (row.state === 'approved') deps.toStudio(row.to_studio, data);
      deps.toLauncher(launcherView(row));
    }
  }

  /** Pending handoffs past their time become `expired` (before any read or change, and on the sweep). */
  function expire(): void {
    const cutoff = new Date(Date.now() - ttlMs).toISOString();
    const oldest = store.oldestPending();
    if (oldest === null || oldest > cutoff) return;
    const expired = db
      .transaction(() => {
        const at = nowIso();
        return store.due(cutoff).map((row) => {
          store.setState(row.id, 'expired', at);
          return store.get(row.id)!;
        });
      })
      .immediate();
    announce(expired);
  }
  const sweep = setInterval(expire, deps.sweepMs ?? Math.min(60_000, ttlMs));
  sweep.unref();

  /** One change, in a transaction, then its events. */
  function change(fn: () => HandoffRow): HandoffRow {
    expire();
    const row = db.transaction(fn).immediate();
    announce([row]);
    return row;
  }

  function open(id: string): HandoffRow {
    const row = store.get(id);
    if (!row) throw ApiError.notFound('The handoff');
    return row;
  }

  /** Visible to a studio: its own sent ones in every state; received ones once approved. */
  function seenBy(studioId: string, id: string): HandoffRow {
    const row = store.get(id);
    if (!row || !(row.from_studio === studioId || (row.to_studio === studioId && row.approved_at !== null))) throw ApiError.notFound('The handoff');
    return row;
  }

  function move(row: HandoffRow, from: readonly HandoffState[], to: HandoffState, what: string, extra?: Parameters<HandoffsStore['setState']>[3]): HandoffRow {
    if (!from.includes(row.state)) throw ApiError.conflict(`This handoff is ${row.state}; only a ${from.join(' or ')} one can be ${what}.`, { state: row.state });
    store.setState(row.id, to, nowIso(), extra);
    return store.get(row.id)!;
  }

  return {
    store,
    launcherView,

    /** POST /handoffs, its checks in the order docs/api.md "Handoffs" gives. */
    create(fromStudio: string, readAll: boolean, body: NewHandoff): HandoffRow {
      return change(() => {
        const kinds = new Set<AssetKind>();
        for (const id of body.asset_ids) {
          const view = deps.assets.store.view(fromStudio, id);
          if (!view) throw ApiError.notFound(`The asset "${id}"`);
          kinds.add(view.kind);
        }
        if (body.item_id !== undefined) deps.gallery.get({ studioId: fromStudio, readAll }, body.item_id);
        if (body.to === fromStudio) throw new ApiError(422, 'self_handoff', 'A studio cannot hand work to itself.');
        if (body.session_id !== undefined && !deps.sessions.isLive(fromStudio, body.session_id)) throw ApiError.unknownSession(body.session_id);
        const recipient = deps.recipient(body.to);
        if (!recipient?.installed) throw new ApiError(409, 'not_installed', `No studio "${body.to}" is installed.`, { studio: body.to });
        const accepted = recipient.accepts?.kinds ?? [];
        if (!accepted.some((k) => kinds.has(k))) {
          const what = recipient.accepts ? `only ${accepted.join(', ')}` : 'nothing from other studios';
          throw new ApiError(422, 'not_launchable', `"${body.to}" accepts ${what}; these are ${[...kinds].join(', ')}.`, { accepts: [...accepted] });
        }
        const set = assetSet(body.asset_ids);
        const same = store.same(fromStudio, body.to, set, body.item_id ?? null, body.session_id ?? null);
        if (same) throw new ApiError(409, 'already_exists', 'The same handoff is already waiting.', { handoff: same });
        const always = store.rule(fromStudio, body.to) !== null;
        if (!always) {
          const used = store.pendingCount(fromStudio);
          if (used >= MAX_PENDING) throw ApiError.quotaExceeded('pending_handoffs', MAX_PENDING, used);
        }
        const at = nowIso();
        const row: HandoffRow = {
          id: newId(),
          from_studio: fromStudio,
          to_studio: body.to,
          asset_ids: JSON.stringify(body.asset_ids),
          asset_set: set,
          item_id: body.item_id ?? null,
          session_id: body.session_id ?? null,
          note: body.note ?? null,
          state: always ? 'approved' : 'pending',
          approved_at: always ? at : null,
          accepted_session_id: null,
          created_at: at,
          updated_at: at,
        };
        store.insert(row);
        return row;
      });
    },

    /** GET /handoffs/{id} as a studio. */
    get(studioId: string, id: string): HandoffRow {
      expire();
      return seenBy(studioId, id);
    },

    /** GET /launcher/handoffs/{id}. */
    getAny(id: string): HandoffRow {
      expire();
      return open(id);
    },

    /** 404 unless the studio is this handoff's recipient and may see it (the route's `visible` for `:accept`). */
    requireRecipient(studioId: string, id: string): void {
      const row = seenBy(studioId, id);
      if (row.to_studio !== studioId) throw ApiError.notFound('The handoff');
    },

    /** 404 unless the studio sent it (the route's `visible` for DELETE). */
    requireSender(studioId: string, id: string): void {
      const row = store.get(id);
      if (!row || row.from_studio !== studioId) throw ApiError.notFound('The handoff');
    },

    /**
     * POST /handoffs/{id}:accept: all or nothing. Every offered asset readable
     * by the recipient, and with a session its copy; `missing` grants nothing.
     */
    accept(studioId: string, id: string, sessionName: string | undefined): HandoffRow {
      let links: ReturnType<AssetsDomain['handover']['grant']> = [];
      const row = change(() => {
        const current = seenBy(studioId, id);
        if (current.to_studio !== studioId) throw ApiError.notFound('The handoff');
        if (current.state !== 'approved') throw ApiError.conflict(`This handoff is ${current.state}; only an approved one can be accepted.`, { state: current.state });
        const assetIds = JSON.parse(current.asset_ids) as string[];
        const missing = deps.assets.handover.missing(current.from_studio, assetIds);
        if (current.item_id !== null && !itemLive(current.from_studio, current.item_id)) missing.push(current.item_id);
        if (current.session_id !== null && !deps.sessions.isLive(current.from_studio, current.session_id)) missing.push(current.session_id);
        if (missing.length > 0) throw new ApiError(409, 'missing', `${missing.length} of the things offered are gone: ${missing.join(', ')}.`, { missing });
        const at = nowIso();
        links = deps.assets.handover.grant(current.from_studio, studioId, assetIds, at);
        const copy = current.session_id === null ? null : deps.sessions.copyTo(current.from_studio, current.session_id, studioId, sessionName);
        store.setState(id, 'accepted', at, copy ? { acceptedSessionId: copy.id } : {});
        return store.get(id)!;
      });
      deps.assets.handover.link(studioId, links);
      return row;
    },

    /** DELETE /handoffs/{id} by its sender. */
    withdraw(studioId: string, id: string): HandoffRow {
      return change(() => {
        const row = open(id);
        if (row.from_studio !== studioId) throw ApiError.notFound('The handoff');
        return move(row, ['pending', 'approved'], 'withdrawn', 'withdrawn');
      });
    },

    /** POST /launcher/handoffs/{id}:approve; `always` also allows the pair from now on. */
    approve(id: string, always: boolean): HandoffRow {
      return change(() => {
        const row = open(id);
        if (row.state === 'pending' && !deps.recipient(row.to_studio)?.installed) {
          throw new ApiError(409, 'not_installed', `"${row.to_studio}" is no longer installed.`, { studio: row.to_studio });
        }
        const at = nowIso();
        const next = move(row, ['pending'], 'approved', 'approved', { approvedAt: at });
        if (always) store.addRule(row.from_studio, row.to_studio, at);
        return next;
      });
    },

    /** POST /launcher/handoffs/{id}:decline. */
    decline(id: string): HandoffRow {
      return change(() => move(open(id), ['pending'], 'declined', 'declined'));
    },

    /** Reads of lists see expired handoffs as expired. */
    beforeRead: expire,

    /**
     * Uninstall with purge (in the purge's transaction): the studio's rules go,
     * and its open handoffs, sent or received, are withdrawn. Returns them, to
     * announce once the purge has committed.
     */
    purge(studioId: string): HandoffRow[] {
      store.removeRulesOf(studioId);
      const at = nowIso();
      return store.openOf(studioId).map((row) => {
        store.setState(row.id, 'withdrawn', at);
        return store.get(row.id)!;
      });
    },
    announce,

    close(): void {
      clearInterval(sweep);
    },
  };

  function itemLive(studioId: string, itemId: string): boolean {
    try {
      deps.gallery.get({ studioId, readAll: true }, itemId);
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return false;
      throw err;
    }
  }
}

export type HandoffsDomain = ReturnType<typeof createHandoffs>;
