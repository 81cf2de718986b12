import type { Db } from '../db/open';
import { ApiError } from '../core/errors';
import { checkIfMatch, newEtag, type IfMatch } from '../core/etag';
import { applyMergePatch, type Json, type JsonObject } from '../core/merge-patch';
import { documentText, requireDocument } from '../core/document';
import { newId } from '../core/ids';
import { nowIso } from '../core/time';
import type { StudiosStore } from '../studios';

/**
 * All SQL of sessions. Writes are immediate transactions that check, in this
 * order: existence (404), If-Match (409), the name (409 `name_taken`), the
 * kv_bytes quota (429); then write. Soft-deleted sessions are invisible here.
 */

export interface SessionRow {
  id: string;
  studio_id: string;
  name: string;
  state: string;
  state_size: number;
  etag: string;
  opened_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Position in the list order: opened_at desc (never opened last), created_at desc, id desc. */
export type SessionPosition = [string, string, string];

export function positionOf(row: SessionRow): SessionPosition {
  return [row.opened_at ?? '', row.created_at, row.id];
}

const columns = 'id, studio_id, name, state, state_size, etag, opened_at, created_at, updated_at';
const order = `ORDER BY coalesce(opened_at, '') DESC, created_at DESC, id DESC`;

/** The hot reads, exported so a test can check their query plans. */
export const SESSIONS_SQL = {
  first: `SELECT ${columns} FROM sessions WHERE studio_id = ? AND deleted_at IS NULL ${order} LIMIT ?`,
  after: `SELECT ${columns} FROM sessions WHERE studio_id = ? AND deleted_at IS NULL
    AND (coalesce(opened_at, ''), created_at, id) < (?, ?, ?) ${order} LIMIT ?`,
  nameTaken: 'SELECT id FROM sessions WHERE studio_id = ? AND name = ? AND deleted_at IS NULL',
};

export function createSessionsStore(db: Db, studios: StudiosStore) {
  const stmts = {
    get: db.prepare<[string, string], SessionRow>(
      `SELECT ${columns} FROM sessions WHERE id = ? AND studio_id = ? AND deleted_at IS NULL`,
    ),
    nameTaken: db.prepare<[string, string], { id: string }>(SESSIONS_SQL.nameTaken),
    first: db.prepare<[string, number], SessionRow>(SESSIONS_SQL.first),
    after: db.prepare<[string, string, string, string, number], SessionRow>(SESSIONS_SQL.after),
    insert: db.prepare(
      `INSERT INTO sessions (id, studio_id, name, state, state_size, etag, opened_at, created_at, updated_at)
       VALUES (@id, @studio_id, @name, @state, @state_size, @etag, @opened_at, @created_at, @updated_at)`,
    ),
    update: db.prepare(
      `UPDATE sessions SET name = @name, state = @state, state_size = @state_size, etag = @etag, updated_at = @updated_at
       WHERE id = @id`,
    ),
    activate: db.prepare('UPDATE sessions SET opened_at = ? WHERE id = ?'),
    softDelete: db.prepare('UPDATE sessions SET deleted_at = ? WHERE id = ?'),
  };

  function live(studioId: string, id: string): SessionRow {
    const row = stmts.get.get(id, studioId);
    if (!row) throw ApiError.notFound('The session');
    return row;
  }

  function claimName(studioId: string, name: string, self: string | null): void {
    const holder = stmts.nameTaken.get(studioId, name);
    if (holder && holder.id !== self) throw ApiError.nameTaken(name);
  }

  function insert(studioId: string, name: string, state: JsonObject): SessionRow {
    claimName(studioId, name, null);
    const { text, size } = documentText(state);
    studios.charge(studioId, 'kv_bytes', size);
    const now = nowIso();
    const row: SessionRow = {
      id: newId(),
      studio_id: studioId,
      name,
      state: text,
      state_size: size,
      etag: newEtag(),
      opened_at: null,
      created_at: now,
      updated_at: now,
    };
    stmts.insert.run(row);
    return row;
  }

  return {
    get(studioId: string, id: string): SessionRow {
      return live(studioId, id);
    },

    /** A live session's name (the launcher's words for a handoff); null when there is none. */
    nameOf(studioId: string, id: string): string | null {
      return stmts.get.get(id, studioId)?.name ?? null;
    },

    /** Whether the id names one of the studio's live sessions (the gallery's `session_id`). */
    isLive(studioId: string, id: string): boolean {
      return stmts.get.get(id, studioId) !== undefined;
    },

    /** A page's sessions, read one at a time (core/pagination.ts cuts the page). */
    list(studioId: string, after: SessionPosition | null, limit: number): IterableIterator<SessionRow> {
      return after ? stmts.after.iterate(studioId, ...after, limit) : stmts.first.iterate(studioId, limit);
    },

    create(studioId: string, name: string, state: unknown): SessionRow {
      const doc = state === undefined ? {} : requireDocument(state, 'The session state');
      return db.transaction(() => insert(studioId, name, doc)).immediate();
    },

    patch(studioId: string, id: string, patch: { name?: string; state?: unknown }, ifMatch: IfMatch): SessionRow {
      const statePatch = patch.state === undefined ? undefined : requireDocument(patch.state, 'The session state');
      return db
        .transaction(() => {
          const current = live(studioId, id);
          checkIfMatch(ifMatch, current.etag);
          const name = patch.name ?? current.name;
          if (name !== current.name) claimName(studioId, name, id);
          let { state, state_size } = current;
          if (statePatch) {
            const merged = applyMergePatch(JSON.parse(current.state) as Json, statePatch);
            ({ text: state, size: state_size } = documentText(requireDocument(merged, 'The session state')));
            studios.charge(studioId, 'kv_bytes', state_size - current.state_size);
          }
          const row: SessionRow = { ...current, name, state, state_size, etag: newEtag(), updated_at: nowIso() };
          stmts.update.run(row);
          return row;
        })
        .immediate();
    },

    delete(studioId: string, id: string, ifMatch: IfMatch): void {
      db.transaction(() => {
        const current = live(studioId, id);
        checkIfMatch(ifMatch, current.etag);
        stmts.softDelete.run(nowIso(), id);
        studios.charge(studioId, 'kv_bytes', -current.state_size);
      }).immediate();
    },

    /** Sets `opened_at`; state, etag and updated_at stay as they are. */
    activate(studioId: string, id: string): void {
      db.transaction(() => {
        live(studioId, id);
        stmts.activate.run(nowIso(), id);
      }).immediate();
    },

    /**
     * A copy of another studio's live session for `toStudio` (an accepted
     * handoff, docs/api.md "Handoffs"), never opened, named `name` or the
     * original's name; 409 `name_taken` on a clash, 429 on its kv_bytes
     * quota. Runs in the caller's transaction.
     */
    copyTo(fromStudio: string, id: string, toStudio: string, name: string | undefined): SessionRow {
      const source = live(fromStudio, id);
      return insert(toStudio, name ?? source.name, JSON.parse(source.state) as JsonObject);
    },

    duplicate(studioId: string, id: string, name: string): SessionRow {
      return db
        .transaction(() => {
          const source = live(studioId, id);
          return insert(studioId, name, JSON.parse(source.state) as JsonObject);
        })
        .immediate();
    },
  };
}

export type SessionsStore = ReturnType<typeof createSessionsStore>;

/** Uninstall with purge: the studio's sessions go (their bytes were refunded by the kv purge's recount). In the caller's transaction. */
export function purgeStudioSessions(db: Db, studioId: string): void {
  db.prepare('DELETE FROM sessions WHERE studio_id = ?').run(studioId);
}
