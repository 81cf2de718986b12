import { decodeTime } from 'ulid';
import type { Db } from '../db/open';
import { statementCache } from '../db/statements';
import { ApiError } from '../core/errors';
import { newIdAfter } from '../core/ids';
import { nowIso } from '../core/time';
import { boundedDocument } from '../core/document';
import { LIMITS } from './schema';
import type { AssetKind, AssetReferenceSource, AssetsStore } from '../assets';
import type { SessionsStore } from '../sessions';
import { compileItemQuery, ITEM_COLUMNS, type ItemFilter } from './query';
import { compileSearch, completableWords, MAX_COMPLETIONS, searchWords, studioWord, type Completions } from './search';

/**
 * All SQL of the gallery (migration 0007). Writes are immediate transactions:
 * an item, its inputs, its tags and its search entry are written together,
 * after the asset and input checks, which therefore see the same state as the
 * write (a reclaim cannot slip between check and write).
 */

export interface ItemRow {
  seq: number;
  id: string;
  studio_id: string;
  asset_id: string;
  kind: AssetKind;
  title: string | null;
  /** JSON text of the array. */
  tags: string;
  starred: number;
  session_id: string | null;
  /** JSON text of the object. */
  params: string;
  /** JSON text of [{asset_id, role}]. */
  inputs: string;
  timeline_id: string | null;
  created_at: string;
  updated_at: string;
}

/** Who reads: their studio, and whether they hold `gallery.read_all`. */
export interface Viewer {
  studioId: string;
  readAll: boolean;
}

export interface NewItem {
  asset_id: string;
  title?: string | null;
  tags?: readonly string[];
  starred?: boolean;
  session_id?: string | null;
  params?: Record<string, unknown>;
  inputs?: readonly { asset_id: string; role: string }[];
  /** Set by the export job only (the sequence the file was rendered from). */
  timeline_id?: string | null;
}

/** What `/launcher/events` says of an item (docs/api.md §Launcher events): created, changed or gone. */
export interface ItemEvent {
  id: string;
  studio_id: string;
  change: 'created' | 'updated' | 'deleted';
}

export interface ItemPatch {
  title?: string | null;
  tags?: readonly string[] | null;
  starred?: boolean;
}

const live = 'i.deleted_at IS NULL';
const shownTo = '(:all = 1 OR i.studio_id = :studio)';

/**
 * Lineage (docs/api.md "Lineage") as recursive queries
 * over item inputs. The walk crosses every item (other studios', deleted
 * ones); UNION keeps each item once, so loops end. Only the page is filtered:
 * live, shown to the caller, not the start. The page reads items by
 * `seq IN (walk)`: SQLite keeps the walk's seqs in a sorted list and reads it
 * backwards, so "ORDER BY seq DESC" needs no sort step of its own (joining
 * the walk instead sorts every reached item for each page). Exported for
 * EXPLAIN and benches.
 */
export const LINEAGE_SQL = {
  /** Items whose asset is an input of the start item, then their inputs' items, and so on. */
  up: `WITH RECURSIVE walk(seq) AS (
      SELECT p.seq FROM gallery_inputs n JOIN gallery_items p ON p.asset_id = n.asset_id WHERE n.item = :start
      UNION
      SELECT p.seq FROM walk w JOIN gallery_inputs n ON n.item = w.seq JOIN gallery_items p ON p.asset_id = n.asset_id
    )
    SELECT ${ITEM_COLUMNS} FROM gallery_items i
    WHERE i.seq IN (SELECT seq FROM walk) AND ${live} AND ${shownTo} AND i.seq <> :start AND i.seq < :after
    ORDER BY i.seq DESC LIMIT :limit`,
  /** Items that took the asset as an input, then items that took theirs, and so on. */
  down: `WITH RECURSIVE walk(seq) AS (
      SELECT n.item FROM gallery_inputs n WHERE n.asset_id = :asset
      UNION
      SELECT n.item FROM walk w JOIN gallery_items p ON p.seq = w.seq JOIN gallery_inputs n ON n.asset_id = p.asset_id
    )
    SELECT ${ITEM_COLUMNS} FROM gallery_items i
    WHERE i.seq IN (SELECT seq FROM walk) AND ${live} AND ${shownTo} AND i.asset_id <> :asset AND i.seq < :after
    ORDER BY i.seq DESC LIMIT :limit`,
};

const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/**
 * The reads whose cost grows with the data: pages of the list and search, and
 * lineage walks. The read workers run them on connections of their own
 * (reads.ts); the store has them too, on the main connection.
 */
export function createGalleryReader(db: Db) {
  const stmts = {
    tagCounts: db
      .prepare<[string], string>('SELECT tag FROM gallery_tag_counts WHERE tag IN (SELECT value FROM json_each(?)) ORDER BY items')
      .pluck(),
    // Words are [a-z0-9] (search.ts): '~' sorts after every one of them.
    completions: db
      .prepare<[string, string, number], string>(
        `SELECT word FROM gallery_search_words WHERE word >= ? AND word < ? || '~' ORDER BY word LIMIT ?`,
      )
      .pluck(),
    up: db.prepare<Record<string, unknown>, ItemRow>(LINEAGE_SQL.up),
    down: db.prepare<Record<string, unknown>, ItemRow>(LINEAGE_SQL.down),
  };
  // Compiled list queries differ only in which filters are present.
  const listStatement = statementCache<Record<string, unknown>, ItemRow>(db, 64);

  /** Tags by how many rows hold them, fewest first; a tag no item ever had comes first of all. */
  function rarestFirst(tags: readonly string[]): string[] {
    const counted = stmts.tagCounts.all(JSON.stringify(tags));
    return [...tags.filter((t) => !counted.includes(t)), ...counted];
  }

  /** The indexed words that complete a prefix (see compileSearch); null when there are too many. */
  const completions: Completions = (prefix) => {
    const words = stmts.completions.all(prefix, prefix, MAX_COMPLETIONS + 1);
    return words.length > MAX_COMPLETIONS ? null : words;
  };

  /*
   * Each read as rows read one at a time (`...Rows`: a page, which
   * core/pagination.ts cuts by bytes, so rows past the cut are never read)
   * and as an array.
   */

  /** A page; with several tags, the rarest is walked first (the others are checked per row). */
  function listRows(filter: ItemFilter, after: number | null, limit: number): IterableIterator<ItemRow> {
    if (filter.tags.length > 1) filter = { ...filter, tags: rarestFirst(filter.tags) };
    const { sql, params } = compileItemQuery(filter, after, limit);
    return listStatement(sql).iterate(params);
  }

  /** A page of the list with `q` (blank: no search): the search compiled against this index's words. */
  function searchRows(filter: ItemFilter, q: string, after: number | null, limit: number): IterableIterator<ItemRow> {
    const search = compileSearch(q, completions);
    if (search.kind === 'none') return [][Symbol.iterator]();
    return listRows(search.kind === 'match' ? { ...filter, match: search.expression } : filter, after, limit);
  }

  /** Upstream lineage from an item (by seq) already checked as visible to the viewer. */
  function lineageUpRows(viewer: Viewer, startSeq: number, after: number | null, limit: number): IterableIterator<ItemRow> {
    return stmts.up.iterate({ start: startSeq, ...shown(viewer), after: after ?? MAX_SEQ, limit });
  }

  /** Downstream lineage of an asset (the caller's read access is checked by the route). */
  function lineageDownRows(viewer: Viewer, assetId: string, after: number | null, limit: number): IterableIterator<ItemRow> {
    return stmts.down.iterate({ asset: assetId, ...shown(viewer), after: after ?? MAX_SEQ, limit });
  }

  return {
    completions,
    rarestFirst,
    listRows,
    searchRows,
    lineageUpRows,
    lineageDownRows,
    list: (filter: ItemFilter, after: number | null, limit: number): ItemRow[] => [...listRows(filter, after, limit)],
    search: (filter: ItemFilter, q: string, after: number | null, limit: number): ItemRow[] => [...searchRows(filter, q, after, limit)],
    lineageUpFrom: (viewer: Viewer, startSeq: number, after: number | null, limit: number): ItemRow[] => [
      ...lineageUpRows(viewer, startSeq, after, limit),
    ],
    lineageDown: (viewer: Viewer, assetId: string, after: number | null, limit: number): ItemRow[] => [
      ...lineageDownRows(viewer, assetId, after, limit),
    ],
  };
}

export type GalleryReader = ReturnType<typeof createGalleryReader>;

export function createGalleryStore(
  db: Db,
  deps: { assets: AssetsStore; sessions: SessionsStore; announce?: (event: ItemEvent) => void },
) {
  const { assets, sessions } = deps;
  /**
   * Told after the write is committed: a write inside a caller's transaction (an
   * export records its item in its own) is announced once that has committed, in
   * a microtask, and only if the item is then as announced (a rolled back write says nothing).
   */
  const announce = (event: ItemEvent): void => {
    if (!deps.announce) return;
    const tell = deps.announce;
    if (!db.inTransaction) return tell(event);
    queueMicrotask(() => {
      const row = stmts.get.get(event.id);
      const holds = event.change === 'deleted' ? row === undefined || row.deleted_at !== null : row !== undefined && row.deleted_at === null;
      if (holds) tell(event);
    });
  };
  const reader = createGalleryReader(db);
  const stmts = {
    get: db.prepare<[string], ItemRow & { deleted_at: string | null }>(
      `SELECT ${ITEM_COLUMNS}, i.deleted_at FROM gallery_items i WHERE i.id = ?`,
    ),
    last: db.prepare<[], { id: string }>('SELECT id FROM gallery_items ORDER BY seq DESC LIMIT 1'),
    insert: db.prepare(
      `INSERT INTO gallery_items (id, studio_id, asset_id, kind, title, tags, starred, session_id, params, inputs, timeline_id, created_at, updated_at)
       VALUES (@id, @studio_id, @asset_id, @kind, @title, @tags, @starred, @session_id, @params, @inputs, @timeline_id, @created_at, @updated_at)`,
    ),
    insertInput: db.prepare('INSERT INTO gallery_inputs (item, asset_id, role) VALUES (?, ?, ?)'),
    insertTag: db.prepare('INSERT INTO gallery_tags (tag, item) VALUES (?, ?)'),
    deleteTags: db.prepare('DELETE FROM gallery_tags WHERE item = ?'),
    index: db.prepare('INSERT INTO gallery_search (rowid, title, prompt, studio) VALUES (?, ?, ?, ?)'),
    unindex: db.prepare('DELETE FROM gallery_search WHERE rowid = ?'),
    noteWord: db.prepare('INSERT OR IGNORE INTO gallery_search_words (word) VALUES (?)'),
    update: db.prepare('UPDATE gallery_items SET title = @title, tags = @tags, starred = @starred, updated_at = @updated_at WHERE seq = @seq'),
    softDelete: db.prepare('UPDATE gallery_items SET deleted_at = ? WHERE seq = ?'),
  };

  /** The asset as the caller may use it in an item: readable and not reclaimed; else 404. */
  function usableAsset(studioId: string, assetId: string, what: string): AssetKind {
    const view = assets.view(studioId, assetId);
    if (!view) throw ApiError.notFound(`${what} "${assetId}"`);
    if (view.reclaimed_at !== null) {
      throw ApiError.notFound(`${what} "${assetId}" (it was reclaimed; its bytes are gone)`);
    }
    return view.kind;
  }

  function visibleRow(viewer: Viewer, id: string): ItemRow & { deleted_at: string | null } {
    const row = stmts.get.get(id);
    if (!row || row.deleted_at !== null || (row.studio_id !== viewer.studioId && !viewer.readAll)) {
      throw ApiError.notFound('The item');
    }
    return row;
  }

  function ownRow(studioId: string, id: string): ItemRow {
    return visibleRow({ studioId, readAll: false }, id);
  }

  function indexEntry(row: { seq: number; studio_id: string; title: string | null }, params: Record<string, unknown>): void {
    const title = row.title === null ? [] : searchWords(row.title);
    const prompt = typeof params.prompt === 'string' ? searchWords(params.prompt) : [];
    stmts.index.run(row.seq, title.join(' '), prompt.join(' '), studioWord(row.studio_id));
    for (const word of completableWords([...title, ...prompt])) stmts.noteWord.run(word);
  }

  return {
    ...reader,

    /** Upstream lineage of a live item the viewer may see (see LINEAGE_SQL). */
    lineageUp(viewer: Viewer, id: string, after: number | null, limit: number): ItemRow[] {
      return reader.lineageUpFrom(viewer, visibleRow(viewer, id).seq, after, limit);
    },

    /**
     * Records one generation. Duplicate tags and
     * duplicate (asset_id, role) inputs collapse, first one kept.
     */
    create(studioId: string, item: NewItem): ItemRow {
      const tags = [...new Set(item.tags ?? [])];
      const seen = new Set<string>();
      const inputs = (item.inputs ?? []).filter((n) => {
        const key = JSON.stringify([n.asset_id, n.role]);
        return !seen.has(key) && seen.add(key) !== undefined;
      });
      const { doc: params, text: paramsText } = boundedDocument(item.params ?? {}, 'params', LIMITS.paramsBytes);
      const created = db
        .transaction(() => {
          const kind = usableAsset(studioId, item.asset_id, 'The asset');
          for (const n of inputs) usableAsset(studioId, n.asset_id, 'The input asset');
          const sessionId = item.session_id ?? null;
          if (sessionId !== null && !sessions.isLive(studioId, sessionId)) {
            throw ApiError.unknownSession(sessionId);
          }
          const id = newIdAfter(stmts.last.get()?.id ?? null);
          const at = new Date(decodeTime(id)).toISOString();
          const row = {
            id,
            studio_id: studioId,
            asset_id: item.asset_id,
            kind,
            title: item.title ?? null,
            tags: JSON.stringify(tags),
            starred: item.starred ? 1 : 0,
            session_id: sessionId,
            params: paramsText,
            inputs: JSON.stringify(inputs.map((n) => ({ asset_id: n.asset_id, role: n.role }))),
            timeline_id: item.timeline_id ?? null,
            created_at: at,
            updated_at: at,
          };
          const seq = Number(stmts.insert.run(row).lastInsertRowid);
          for (const n of inputs) stmts.insertInput.run(seq, n.asset_id, n.role);
          for (const tag of tags) stmts.insertTag.run(tag, seq);
          indexEntry({ seq, studio_id: studioId, title: row.title }, params);
          assets.noteReferenced([item.asset_id, ...inputs.map((n) => n.asset_id)], at);
          return { seq, ...row };
        })
        .immediate();
      announce({ id: created.id, studio_id: studioId, change: 'created' });
      return created;
    },

    /** A live item the viewer may see (own, or any with read_all); else 404. */
    get(viewer: Viewer, id: string): ItemRow {
      return visibleRow(viewer, id);
    },

    /** 404 unless the item is the studio's own and live (update and delete, even with read_all). */
    requireOwn(studioId: string, id: string): void {
      ownRow(studioId, id);
    },

    /** The studio a live item belongs to (the launcher's changes act as it); 404 for an unknown or deleted item. */
    ownerOf(id: string): string {
      const row = stmts.get.get(id);
      if (!row || row.deleted_at !== null) throw ApiError.notFound('The item');
      return row.studio_id;
    },

    /** Items a purge deleted (purgeStudioItems), announced once the purge has committed. */
    announceDeleted(studioId: string, ids: readonly string[]): void {
      for (const id of ids) announce({ id, studio_id: studioId, change: 'deleted' });
    },

    /** Closed merge patch (docs/api.md "Update and delete"): title, tags (replace the set; null clears), starred. */
    update(studioId: string, id: string, patch: ItemPatch): ItemRow {
      const updated = db
        .transaction(() => {
          const current = ownRow(studioId, id);
          const next: ItemRow = { ...current, updated_at: nowIso() };
          if (patch.title !== undefined) next.title = patch.title;
          if (patch.starred !== undefined) next.starred = patch.starred ? 1 : 0;
          if (patch.tags !== undefined) {
            const tags = [...new Set(patch.tags ?? [])];
            next.tags = JSON.stringify(tags);
            stmts.deleteTags.run(current.seq);
            for (const tag of tags) stmts.insertTag.run(tag, current.seq);
          }
          stmts.update.run(next);
          if (next.title !== current.title) {
            stmts.unindex.run(current.seq);
            indexEntry(next, JSON.parse(current.params) as Record<string, unknown>);
          }
          return next;
        })
        .immediate();
      announce({ id, studio_id: studioId, change: 'updated' });
      return updated;
    },

    /** Soft delete: the item leaves every list, search and lineage page; rows stay for reclaim. */
    delete(studioId: string, id: string): void {
      db.transaction(() => {
        const current = ownRow(studioId, id);
        stmts.softDelete.run(nowIso(), current.seq);
        stmts.unindex.run(current.seq);
      }).immediate();
      announce({ id, studio_id: studioId, change: 'deleted' });
    },

    /** What counts against asset reclaim (see galleryReferenceSources). */
    referenceSources: () => galleryReferenceSources(db),
  };
}

/**
 * What counts against asset reclaim (docs/api.md "Reclaim `POST /assets:reclaim`"): live items' assets and
 * their inputs. Dead items holding a reclaimed asset go with it. Built on any
 * connection: the read workers' (reclaim previews) prepare the purge too, but
 * only the main one ever runs it.
 */
export function galleryReferenceSources(db: Db): AssetReferenceSource[] {
  const stmts = {
    dependents: db.prepare<[string, string], { seq: number; id: string }>(
      `SELECT seq, id FROM gallery_items WHERE deleted_at IS NOT NULL AND asset_id IN (SELECT value FROM json_each(?))
       UNION
       SELECT i.seq, i.id FROM gallery_inputs n JOIN gallery_items i ON i.seq = n.item
       WHERE i.deleted_at IS NOT NULL AND n.asset_id IN (SELECT value FROM json_each(?))`,
    ),
    purgeInputs: db.prepare('DELETE FROM gallery_inputs WHERE item IN (SELECT value FROM json_each(?))'),
    purgeTags: db.prepare('DELETE FROM gallery_tags WHERE item IN (SELECT value FROM json_each(?))'),
    purgeItems: db.prepare('DELETE FROM gallery_items WHERE seq IN (SELECT value FROM json_each(?))'),
  };
  const dependents = (assetIds: readonly string[]) => {
    const ids = JSON.stringify(assetIds);
    return stmts.dependents.all(ids, ids);
  };
  return [
    {
      name: 'gallery items',
      liveSql: 'SELECT asset_id FROM gallery_items WHERE deleted_at IS NULL',
      dependents: (assetIds) => dependents(assetIds).map((r) => r.id),
      purge(assetIds) {
        const seqs = JSON.stringify(dependents(assetIds).map((r) => r.seq));
        stmts.purgeInputs.run(seqs);
        stmts.purgeTags.run(seqs);
        stmts.purgeItems.run(seqs);
      },
    },
    {
      name: 'gallery item inputs',
      liveSql: `SELECT n.asset_id FROM gallery_inputs n JOIN gallery_items i ON i.seq = n.item WHERE i.deleted_at IS NULL`,
    },
  ];
}

function shown(viewer: Viewer): { all: number; studio: string } {
  return { all: viewer.readAll ? 1 : 0, studio: viewer.studioId };
}

export type GalleryStore = ReturnType<typeof createGalleryStore>;

/**
 * Uninstall with purge: the studio's live items are deleted (soft, as DELETE does) and leave the search index.
 * In the caller's transaction; returns their ids, for the store's `announceDeleted` once it has committed.
 */
export function purgeStudioItems(db: Db, studioId: string, at: string): string[] {
  const rows = db.prepare<[string], { seq: number; id: string }>('SELECT seq, id FROM gallery_items WHERE studio_id = ? AND deleted_at IS NULL').all(studioId);
  const softDelete = db.prepare('UPDATE gallery_items SET deleted_at = ? WHERE seq = ?');
  const unindex = db.prepare('DELETE FROM gallery_search WHERE rowid = ?');
  for (const { seq } of rows) {
    softDelete.run(at, seq);
    unindex.run(seq);
  }
  return rows.map((r) => r.id);
}
