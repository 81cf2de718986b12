import type { Db } from '../db/open';
import type { Asset, AssetKind } from './schema';

/**
 * All SQL of assets. Writes run inside db.transaction; the callers (ingest.ts,
 * reclaim.ts) keep each file step and its row write in one synchronous turn.
 */

export interface AssetRow {
  id: string;
  sha256: string;
  kind: AssetKind;
  mime: string;
  size: number;
  ext: string;
  pinned: number;
  width: number | null;
  height: number | null;
  duration_s: number | null;
  fps: number | null;
  created_at: string;
  referenced_at: string | null;
  reclaimed_at: string | null;
}

/** An asset as one studio sees it: the row plus that studio's name and library file. */
export interface AssetView extends AssetRow {
  filename: string;
  library_path: string | null;
}

/** Where a walk over the reclaimed rows stopped (store.reclaimedPage). */
export interface ReclaimedCursor {
  at: string;
  rowid: number;
}

/** What the stored assets take, for the launcher's Disk panel. */
export interface AssetUsage {
  count: number;
  bytes: number;
  pinned: { count: number; bytes: number };
  unread: { count: number; bytes: number };
  studios: { studio_id: string; count: number; bytes: number }[];
}

export type NewAsset = Omit<AssetRow, 'referenced_at' | 'reclaimed_at'>;

/** One asset of a reclaim preview, for people: null name and studio once no studio can read it (after a purge). */
export interface ReclaimFile {
  id: string;
  name: string | null;
  kind: string;
  bytes: number;
  studio_id: string | null;
}

export interface Candidate {
  id: string;
  sha256: string;
  ext: string;
  size: number;
}

/**
 * A kind of reference to assets, owned by another domain's store (gallery
 * items and their inputs, sequence clips). The assets store asks every source
 * at reclaim time; nothing else needs to know where references live.
 */
export interface AssetReferenceSource {
  name: string;
  /**
   * SQL text of a SELECT with one column `asset_id`: every asset a live thing
   * of this kind references now (NULLs are ignored). It runs on the service's
   * database inside the reclaim transaction.
   */
  liveSql: string;
  /** Ids of dead (soft-deleted) rows that hold any of these assets and go with them. */
  dependents?(assetIds: readonly string[]): string[];
  /** Hard-deletes those rows; called inside the reclaim transaction. */
  purge?(assetIds: readonly string[]): void;
}

const VIEW_COLUMNS = `a.id, a.sha256, a.kind, a.mime, a.size, a.ext, a.pinned, a.width, a.height, a.duration_s, a.fps,
  a.created_at, a.referenced_at, a.reclaimed_at, x.filename, x.library_path`;

/** The hot reads, exported so a test can check their query plans. */
export const ASSETS_SQL = {
  view: `SELECT ${VIEW_COLUMNS} FROM assets a JOIN asset_access x ON x.asset_id = a.id WHERE a.id = ? AND x.studio_id = ?`,
  bySha: 'SELECT * FROM assets WHERE sha256 = ?',
  // Start-up recovery's walk over the reclaimed rows, on the partial index assets_reclaimed
  // (reclaimed_at, rowid): one reclaimed_at at a time (a row-value range over both columns
  // would rescan every equal reclaimed_at from its start).
  firstReclaimedAfter: 'SELECT min(reclaimed_at) FROM assets WHERE reclaimed_at > ?',
  reclaimedAt: 'SELECT rowid AS rid, id FROM assets WHERE reclaimed_at = ? AND rowid > ? ORDER BY rowid LIMIT ?',
};

export function createAssetsStore(db: Db) {
  const stmts = {
    view: db.prepare<[string, string], AssetView>(ASSETS_SQL.view),
    bySha: db.prepare<[string], AssetRow>(ASSETS_SQL.bySha),
    describe: db.prepare<{ studio: string | null; ids: string }, ReclaimFile>(
      `SELECT a.id, a.kind, a.size AS bytes, g.filename AS name, g.studio_id
       FROM assets a
       LEFT JOIN asset_access g ON g.asset_id = a.id AND g.studio_id = (
         SELECT x.studio_id FROM asset_access x WHERE x.asset_id = a.id AND (@studio IS NULL OR x.studio_id = @studio)
         ORDER BY x.granted_at, x.studio_id LIMIT 1)
       WHERE a.id IN (SELECT value FROM json_each(@ids))
       ORDER BY a.id`,
    ),
    firstReader: db.prepare<[string], { studio_id: string }>(
      'SELECT studio_id FROM asset_access WHERE asset_id = ? ORDER BY granted_at, studio_id LIMIT 1',
    ),
    insert: db.prepare(
      `INSERT INTO assets (id, sha256, kind, mime, size, ext, pinned, width, height, duration_s, fps, created_at)
       VALUES (@id, @sha256, @kind, @mime, @size, @ext, @pinned, @width, @height, @duration_s, @fps, @created_at)`,
    ),
    revive: db.prepare(
      `UPDATE assets SET reclaimed_at = NULL, referenced_at = NULL, pinned = max(pinned, @pinned) WHERE id = @id`,
    ),
    pin: db.prepare('UPDATE assets SET pinned = 1 WHERE id = ?'),
    fillDuration: db.prepare('UPDATE assets SET duration_s = ? WHERE sha256 = ? AND duration_s IS NULL'),
    grant: db.prepare(
      'INSERT OR IGNORE INTO asset_access (asset_id, studio_id, filename, library_path, granted_at) VALUES (?, ?, ?, NULL, ?)',
    ),
    setLibraryPath: db.prepare('UPDATE asset_access SET library_path = ? WHERE asset_id = ? AND studio_id = ?'),
    noteReferenced: db.prepare(
      'UPDATE assets SET referenced_at = ? WHERE referenced_at IS NULL AND id IN (SELECT value FROM json_each(?))',
    ),
    markReclaimed: db.prepare('UPDATE assets SET reclaimed_at = ? WHERE id IN (SELECT value FROM json_each(?))'),
    libraryFiles: db.prepare<[string], { library_path: string }>(
      `SELECT library_path FROM asset_access
       WHERE library_path IS NOT NULL AND asset_id IN (SELECT value FROM json_each(?))`,
    ),
    clearLibraryPaths: db.prepare(
      'UPDATE asset_access SET library_path = NULL WHERE asset_id IN (SELECT value FROM json_each(?))',
    ),
    firstReclaimedAfter: db.prepare<[string], string | null>(ASSETS_SQL.firstReclaimedAfter).pluck(),
    reclaimedAt: db.prepare<[string, number, number], { rid: number; id: string }>(ASSETS_SQL.reclaimedAt),
    usageTotal: db.prepare<[], { count: number; bytes: number; pinned_count: number; pinned_bytes: number }>(
      `SELECT COUNT(*) AS count, COALESCE(SUM(size), 0) AS bytes,
              COALESCE(SUM(pinned), 0) AS pinned_count, COALESCE(SUM(CASE WHEN pinned = 1 THEN size ELSE 0 END), 0) AS pinned_bytes
       FROM assets WHERE reclaimed_at IS NULL`,
    ),
    usageUnread: db.prepare<[], { count: number; bytes: number }>(
      `SELECT COUNT(*) AS count, COALESCE(SUM(size), 0) AS bytes FROM assets a
       WHERE a.reclaimed_at IS NULL AND NOT EXISTS (SELECT 1 FROM asset_access x WHERE x.asset_id = a.id)`,
    ),
    usageByStudio: db.prepare<[], { studio_id: string; count: number; bytes: number }>(
      `SELECT x.studio_id, COUNT(*) AS count, COALESCE(SUM(a.size), 0) AS bytes
       FROM asset_access x JOIN assets a ON a.id = x.asset_id
       WHERE a.reclaimed_at IS NULL GROUP BY x.studio_id ORDER BY x.studio_id`,
    ),
  };

  const sources: AssetReferenceSource[] = [];
  let candidatesStmt: ReturnType<typeof prepareCandidates> | null = null;
  function prepareCandidates() {
    // Reclaimable (docs/api.md "Reclaim `POST /assets:reclaim`"): readable by the caller, not pinned, not yet
    // reclaimed, referenced once in its life, and referenced by nothing live now.
    const notLive = sources
      .map((s) => `AND NOT EXISTS (SELECT 1 FROM (${s.liveSql}) AS live WHERE live.asset_id = a.id)`)
      .join('\n        ');
    const sql = (scope: string) => `SELECT a.id, a.sha256, a.ext, a.size FROM assets a
       ${scope}
       WHERE a.reclaimed_at IS NULL AND a.pinned = 0 AND a.referenced_at IS NOT NULL
        ${notLive}
       ORDER BY a.id`;
    return {
      studio: db.prepare<[string], Candidate>(sql('JOIN asset_access x ON x.asset_id = a.id AND x.studio_id = ?')),
      // The launcher's side reads every asset, also those no studio can read any more (after an uninstall with purge).
      all: db.prepare<[], Candidate>(sql('')),
    };
  }

  return {
    view(studioId: string, id: string): AssetView | null {
      return stmts.view.get(id, studioId) ?? null;
    },

    /**
     * The studio the launcher reads an asset as (docs/api.md "Launcher-side reads and
     * edits", "As the owning studio"): the first granted (its uploader, or the first studio that
     * adopted it), ties by id; null when no studio can read it.
     */
    firstReader(id: string): string | null {
      return stmts.firstReader.get(id)?.studio_id ?? null;
    },

    bySha(sha256: string): AssetRow | null {
      return stmts.bySha.get(sha256) ?? null;
    },

    /** A video or sound file's probed length where the studio gave no `duration_s` hint (thumbs.ts); a given hint stays. */
    fillDuration(sha256: string, seconds: number): void {
      if (Number.isFinite(seconds) && seconds >= 0) stmts.fillDuration.run(seconds, sha256);
    },

    /** A new asset and the uploader's access, in one transaction. */
    create(row: NewAsset, studioId: string, filename: string): void {
      db.transaction(() => {
        stmts.insert.run(row);
        stmts.grant.run(row.id, studioId, filename, row.created_at);
      })();
    },

    /** A reclaimed asset whose bytes came back: live again, out of reclaim until referenced anew. */
    revive(id: string, pinned: boolean, studioId: string, filename: string, at: string): void {
      db.transaction(() => {
        stmts.revive.run({ id, pinned: pinned ? 1 : 0 });
        stmts.grant.run(id, studioId, filename, at);
      })();
    },

    /** Grants read access (idempotent); true when the studio had none. */
    grant(id: string, studioId: string, filename: string, at: string): boolean {
      return stmts.grant.run(id, studioId, filename, at).changes === 1;
    },

    setLibraryPath(id: string, studioId: string, path: string | null): void {
      stmts.setLibraryPath.run(path, id, studioId);
    },

    pin(id: string): void {
      stmts.pin.run(id);
    },

    /**
     * For other domains' writers, inside their own transaction: these assets
     * are referenced now, so from now on they count as "referenced at least
     * once in their life" (permanent; later deletes do not undo it).
     */
    noteReferenced(assetIds: readonly string[], at: string): void {
      if (assetIds.length > 0) stmts.noteReferenced.run(at, JSON.stringify(assetIds));
    },

    /** Registers one kind of reference; see AssetReferenceSource. */
    addReferenceSource(source: AssetReferenceSource): void {
      sources.push(source);
      candidatesStmt = null;
    },

    /** The caller's reclaimable assets, id ascending; `null`: every studio's (the launcher). */
    candidates(studioId: string | null): Candidate[] {
      candidatesStmt ??= prepareCandidates();
      return studioId === null ? candidatesStmt.all.all() : candidatesStmt.studio.all(studioId);
    },

    /** What the launcher's reclaim preview shows of each asset: its name and studio (the caller's grant, or the first one), kind and size. */
    describe(assetIds: readonly string[], studioId: string | null): ReclaimFile[] {
      if (assetIds.length === 0) return [];
      return stmts.describe.all({ studio: studioId, ids: JSON.stringify(assetIds) });
    },

    /** Dead rows of every source that go with these assets (the preview's `items`). */
    dependents(assetIds: readonly string[]): string[] {
      if (assetIds.length === 0) return [];
      return [...new Set(sources.flatMap((s) => s.dependents?.(assetIds) ?? []))].sort();
    },

    /** Marks the assets reclaimed and hard-deletes their dependents; returns their library files. Inside a transaction. */
    markReclaimed(assetIds: readonly string[], at: string): string[] {
      const ids = JSON.stringify(assetIds);
      stmts.markReclaimed.run(at, ids);
      for (const s of sources) s.purge?.(assetIds);
      return stmts.libraryFiles.all(ids).map((r) => r.library_path);
    },

    clearLibraryPaths(assetIds: readonly string[]): void {
      stmts.clearLibraryPaths.run(JSON.stringify(assetIds));
    },

    libraryFiles(assetIds: readonly string[]): string[] {
      return stmts.libraryFiles.all(JSON.stringify(assetIds)).map((r) => r.library_path);
    },

    /**
     * Up to `limit` reclaimed assets after `after` (null: from the first), in
     * (reclaimed_at, rowid) order, and where the next page starts; no ids at
     * the end. Each query is a range of the partial index, whatever the size
     * of the table.
     */
    reclaimedPage(after: ReclaimedCursor | null, limit: number): { ids: string[]; after: ReclaimedCursor | null } {
      let at = after?.at ?? stmts.firstReclaimedAfter.get('') ?? null;
      let rowid = after?.rowid ?? 0;
      while (at !== null) {
        const rows = stmts.reclaimedAt.all(at, rowid, limit);
        if (rows.length > 0) return { ids: rows.map((r) => r.id), after: { at, rowid: rows[rows.length - 1]!.rid } };
        at = stmts.firstReclaimedAfter.get(at) ?? null;
        rowid = 0;
      }
      return { ids: [], after: null };
    },

    /**
     * What the stored assets take (GET /launcher/disk): every blob not reclaimed
     * once, those pinned, those no studio can read any more, and per studio the
     * assets it can read (an asset shared by two studios counts in both).
     */
    usage(): AssetUsage {
      const total = stmts.usageTotal.get()!;
      return {
        count: total.count,
        bytes: total.bytes,
        pinned: { count: total.pinned_count, bytes: total.pinned_bytes },
        unread: stmts.usageUnread.get()!,
        studios: stmts.usageByStudio.all(),
      };
    },

    transaction<T>(fn: () => T): T {
      return db.transaction(fn).immediate();
    },
  };
}

export type AssetsStore = ReturnType<typeof createAssetsStore>;

export function assetJson(v: AssetView): Asset {
  return {
    id: v.id,
    sha256: v.sha256,
    kind: v.kind,
    mime: v.mime,
    size: v.size,
    filename: v.filename,
    library_path: v.library_path,
    pinned: v.pinned === 1,
    width: v.width,
    height: v.height,
    duration_s: v.duration_s,
    fps: v.fps,
    created_at: v.created_at,
  };
}

/**
 * Uninstall with purge: the studio loses its grants to every asset. Blobs
 * other studios still read stay theirs; the rest are read by nobody and are
 * reclaimable from the launcher's side. Returns the studio's library files
 * (hard links) for the caller to remove. In the caller's transaction.
 */
export function purgeStudioGrants(db: Db, studioId: string): string[] {
  const files = db
    .prepare<[string], string>('SELECT library_path FROM asset_access WHERE studio_id = ? AND library_path IS NOT NULL')
    .pluck()
    .all(studioId);
  db.prepare('DELETE FROM asset_access WHERE studio_id = ?').run(studioId);
  return files;
}
