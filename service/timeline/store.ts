import type { Db } from '../db/open';
import type { AssetReferenceSource, AssetsStore } from '../assets';
import { ApiError } from '../core/errors';
import { newId } from '../core/ids';
import { nowIso } from '../core/time';
import { PROBE_VERSION, type MediaProbe } from '../media/types';
import { assetIdsOf, type TimelineDoc } from './document';
import type { Target, Tracks } from './schema';

/**
 * All SQL of timelines (migration 0008). Every write is one immediate
 * transaction that reads the row, lets the caller build and check the new
 * document against it (throwing 409 or 422 leaves nothing written), moves the
 * replaced document to the revisions, trims them to the newest 100 and
 * rewrites the sequence's asset references.
 */

export const REVISIONS_KEPT = 100;

export interface TimelineRow {
  id: string;
  studio_id: string;
  name: string;
  target: string;
  tracks: string;
  revision: number;
  duration: number;
  /** What the write that made this revision changed, in its writer's words (migration 0013). */
  description: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** A row with its write order (the launcher's list pages by it). */
export interface TouchedRow extends TimelineRow {
  touched: number;
}

export interface RevisionRow {
  revision: number;
  name: string;
  target: string;
  tracks: string;
  description: string | null;
  created_at: string;
}

export interface Viewer {
  studioId: string;
  readAll: boolean;
}

const COLUMNS = 'id, studio_id, name, target, tracks, revision, duration, description, created_at, updated_at, deleted_at';

/** Hot reads, exported so a test can check their query plans. */
export const TIMELINE_SQL = {
  listOwn: `SELECT ${COLUMNS} FROM timelines WHERE studio_id = @studio AND deleted_at IS NULL AND id < @after ORDER BY id DESC LIMIT @limit`,
  listAll: `SELECT ${COLUMNS} FROM timelines WHERE deleted_at IS NULL AND id < @after ORDER BY id DESC LIMIT @limit`,
  mostRecent: `SELECT ${COLUMNS} FROM timelines WHERE studio_id = ? AND deleted_at IS NULL ORDER BY touched DESC LIMIT 1`,
  /** The launcher's list: every studio's live sequences, most recently written first (`touched` grows with every write, as `updated_at` does). */
  launcherAll: `SELECT ${COLUMNS}, touched FROM timelines WHERE deleted_at IS NULL AND touched < @after
    AND (@q IS NULL OR instr(lower(name), lower(@q)) > 0) ORDER BY touched DESC LIMIT @limit`,
  launcherByStudio: `SELECT ${COLUMNS}, touched FROM timelines WHERE studio_id = @studio AND deleted_at IS NULL AND touched < @after
    AND (@q IS NULL OR instr(lower(name), lower(@q)) > 0) ORDER BY touched DESC LIMIT @limit`,
  revisions: `SELECT revision, name, target, tracks, description, created_at FROM timeline_revisions
    WHERE timeline_id = @id AND revision < @after ORDER BY revision DESC LIMIT @limit`,
};

/** Above every ULID, so a first page needs no second statement. */
const TOP_ID = '~';

export function createTimelineStore(db: Db, deps: { assets: AssetsStore }) {
  const stmts = {
    get: db.prepare<[string], TimelineRow>(`SELECT ${COLUMNS} FROM timelines WHERE id = ?`),
    listOwn: db.prepare<{ studio: string; after: string; limit: number }, TimelineRow>(TIMELINE_SQL.listOwn),
    listAll: db.prepare<{ after: string; limit: number }, TimelineRow>(TIMELINE_SQL.listAll),
    mostRecent: db.prepare<[string], TimelineRow>(TIMELINE_SQL.mostRecent),
    launcherAll: db.prepare<{ after: number; q: string | null; limit: number }, TouchedRow>(TIMELINE_SQL.launcherAll),
    launcherByStudio: db.prepare<{ studio: string; after: number; q: string | null; limit: number }, TouchedRow>(TIMELINE_SQL.launcherByStudio),
    insert: db.prepare(
      `INSERT INTO timelines (id, studio_id, name, target, tracks, revision, duration, touched, created_at, updated_at)
       VALUES (@id, @studio_id, @name, @target, @tracks, 1, @duration,
               (SELECT coalesce(max(touched), 0) + 1 FROM timelines), @at, @at)`,
    ),
    update: db.prepare(
      `UPDATE timelines SET name = @name, target = @target, tracks = @tracks, duration = @duration,
         revision = revision + 1, touched = (SELECT coalesce(max(touched), 0) + 1 FROM timelines), updated_at = @at,
         description = @description
       WHERE id = @id`,
    ),
    softDelete: db.prepare('UPDATE timelines SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL'),
    keepRevision: db.prepare(
      `INSERT INTO timeline_revisions (timeline_id, revision, name, target, tracks, description, created_at)
       VALUES (@id, @revision, @name, @target, @tracks, @description, @created_at)`,
    ),
    trimRevisions: db.prepare('DELETE FROM timeline_revisions WHERE timeline_id = ? AND revision <= ?'),
    revisions: db.prepare<{ id: string; after: number; limit: number }, RevisionRow>(TIMELINE_SQL.revisions),
    revision: db.prepare<[string, number], RevisionRow>(
      'SELECT revision, name, target, tracks, description, created_at FROM timeline_revisions WHERE timeline_id = ? AND revision = ?',
    ),
    clearAssets: db.prepare('DELETE FROM timeline_assets WHERE timeline_id = ?'),
    addAsset: db.prepare('INSERT INTO timeline_assets (timeline_id, asset_id) VALUES (?, ?)'),
    holdForExport: db.prepare('INSERT OR IGNORE INTO export_assets (job_id, asset_id) VALUES (?, ?)'),
    releaseExport: db.prepare('DELETE FROM export_assets WHERE job_id = ?'),
    probe: db.prepare<[string, number], { probe: string }>('SELECT probe FROM media_probes WHERE sha256 = ? AND version = ?'),
    putProbe: db.prepare(
      `INSERT INTO media_probes (sha256, version, probe, probed_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (sha256) DO UPDATE SET version = excluded.version, probe = excluded.probe, probed_at = excluded.probed_at`,
    ),
  };

  /** The current document's assets become the sequence's references (and count as referenced once in their life). */
  const setAssets = (id: string, tracks: Tracks, at: string) => {
    stmts.clearAssets.run(id);
    const ids = assetIdsOf(tracks);
    for (const assetId of ids) stmts.addAsset.run(id, assetId);
    deps.assets.noteReferenced(ids, at);
  };

  // No export outlives the process that ran it: what a crash left held is released.
  db.exec('DELETE FROM export_assets');

  const store = {
    get(id: string): TimelineRow | null {
      return stmts.get.get(id) ?? null;
    },

    /** A live sequence the viewer may read (own, or any with gallery.read_all), else 404. */
    readable(viewer: Viewer, id: string): TimelineRow {
      const row = stmts.get.get(id);
      if (!row || row.deleted_at !== null || (row.studio_id !== viewer.studioId && !viewer.readAll)) throw notFound();
      return row;
    },

    /** A live sequence of the caller's own, else 404 (writes, even with gallery.read_all). */
    own(studioId: string, id: string): TimelineRow {
      return store.readable({ studioId, readAll: false }, id);
    },

    /** Newest first (ids grow with creation); `limit` rows after the cursor's id. */
    list(viewer: Viewer, after: string | null, limit: number): TimelineRow[] {
      return [...store.listRows(viewer, after, limit)];
    },

    /** As `list`, read one at a time (a page: core/pagination.ts cuts it by bytes). */
    listRows(viewer: Viewer, after: string | null, limit: number): IterableIterator<TimelineRow> {
      const position = after ?? TOP_ID;
      return viewer.readAll
        ? stmts.listAll.iterate({ after: position, limit })
        : stmts.listOwn.iterate({ studio: viewer.studioId, after: position, limit });
    },

    /** Every studio's live sequences (or one studio's; names containing `q`, any case), most recently written first, after the cursor's `touched`. */
    launcherRows(filter: { studio?: string; q?: string }, after: number | null, limit: number): IterableIterator<TouchedRow> {
      const common = { after: after ?? Number.MAX_SAFE_INTEGER, q: filter.q ?? null, limit };
      return filter.studio === undefined ? stmts.launcherAll.iterate(common) : stmts.launcherByStudio.iterate({ ...common, studio: filter.studio });
    },

    /** The caller's most recently written live sequence (append without timeline_id). */
    mostRecent(studioId: string): TimelineRow | null {
      return stmts.mostRecent.get(studioId) ?? null;
    },

    create(studioId: string, build: () => { doc: TimelineDoc; duration: number }): TimelineRow {
      const id = newId();
      db.transaction(() => {
        const { doc, duration } = build();
        const at = nowIso();
        stmts.insert.run({ id, studio_id: studioId, ...docColumns(doc), duration, at });
        setAssets(id, doc.tracks, at);
      }).immediate();
      return stmts.get.get(id)!;
    },

    /**
     * One write of a live sequence of the caller's: `build` sees the row as it
     * is inside the transaction and returns the new document (or throws).
     * `which` is the id, or picks it inside the transaction (append's most
     * recent sequence).
     */
    write(
      studioId: string,
      which: string | (() => string),
      build: (row: TimelineRow) => { doc: TimelineDoc; duration: number },
      description: string | null = null,
    ): TimelineRow {
      let id = '';
      db.transaction(() => {
        id = typeof which === 'string' ? which : which();
        const row = store.own(studioId, id);
        const { doc, duration } = build(row);
        const at = nowIso();
        stmts.keepRevision.run({ id, revision: row.revision, name: row.name, target: row.target, tracks: row.tracks, description: row.description, created_at: row.updated_at });
        stmts.trimRevisions.run(id, row.revision - REVISIONS_KEPT);
        stmts.update.run({ id, ...docColumns(doc), duration, at, description });
        setAssets(id, doc.tracks, at);
      }).immediate();
      return stmts.get.get(id)!;
    },

    /** Soft delete; `check` runs inside the transaction (If-Match). Its clips stop counting for reclaim. */
    delete(studioId: string, id: string, check: (row: TimelineRow) => void): void {
      db.transaction(() => {
        const row = store.own(studioId, id);
        check(row);
        stmts.softDelete.run(nowIso(), id);
        stmts.clearAssets.run(id);
      }).immediate();
    },

    revisions(id: string, after: number | null, limit: number): RevisionRow[] {
      return [...store.revisionRows(id, after, limit)];
    },

    /** As `revisions`, read one at a time (a page: core/pagination.ts cuts it by bytes). */
    revisionRows(id: string, after: number | null, limit: number): IterableIterator<RevisionRow> {
      return stmts.revisions.iterate({ id, after: after ?? Number.MAX_SAFE_INTEGER, limit });
    },

    revision(id: string, revision: number): RevisionRow | null {
      return stmts.revision.get(id, revision) ?? null;
    },

    cachedProbe(sha256: string): MediaProbe | null {
      const row = stmts.probe.get(sha256, PROBE_VERSION);
      return row ? (JSON.parse(row.probe) as MediaProbe) : null;
    },

    cacheProbe(sha256: string, probe: MediaProbe): void {
      stmts.putProbe.run(sha256, PROBE_VERSION, JSON.stringify(probe), nowIso());
    },

    referenceSources: timelineReferenceSources,

    /** A running export's assets stay out of reclaim until release. */
    holdForExport(jobId: string, assetIds: readonly string[]): void {
      db.transaction(() => {
        for (const id of assetIds) stmts.holdForExport.run(jobId, id);
      }).immediate();
    },

    releaseExport(jobId: string): void {
      stmts.releaseExport.run(jobId);
    },
  };
  return store;
}

/** Clips of live sequences' current documents, and running exports, hold their assets against reclaim. */
export function timelineReferenceSources(): AssetReferenceSource[] {
  return [
    { name: 'sequence clips', liveSql: 'SELECT asset_id FROM timeline_assets' },
    { name: 'running exports', liveSql: 'SELECT asset_id FROM export_assets' },
  ];
}

export function docColumns(doc: TimelineDoc): { name: string; target: string; tracks: string } {
  return { name: doc.name, target: JSON.stringify(doc.target), tracks: JSON.stringify(doc.tracks) };
}

export function docOf(row: { name: string; target: string; tracks: string }): TimelineDoc {
  return { name: row.name, target: JSON.parse(row.target) as Target, tracks: JSON.parse(row.tracks) as Tracks };
}

function notFound(): ApiError {
  return ApiError.notFound('The sequence');
}

export type TimelineStore = ReturnType<typeof createTimelineStore>;

/** Uninstall with purge: the studio's live sequences are deleted (soft, as DELETE does: their clips stop counting for reclaim). In the caller's transaction. */
export function purgeStudioTimelines(db: Db, studioId: string, at: string): void {
  db.prepare('UPDATE timelines SET deleted_at = ? WHERE studio_id = ? AND deleted_at IS NULL').run(at, studioId);
}
