import type { Migration } from '../migrate';

/**
 * Timelines (docs/api.md "Timeline").
 *
 * A sequence's current document lives on its row (name, target and tracks as
 * JSON text, already snapped); every write moves the document it replaces to
 * timeline_revisions, which keeps the newest 100 per sequence. `touched` is a
 * service-wide write counter, so "the caller's most recently updated
 * sequence" (append without timeline_id) has no ties within a millisecond.
 *
 * timeline_assets holds the distinct assets of each live sequence's current
 * document: what reclaim asks (a deleted sequence's rows go, so its clips stop
 * holding footage). The two tables holding documents keep their rowid: a
 * document can be hundreds of kilobytes, and WITHOUT ROWID suits small rows
 * only. media_probes caches ffprobe's answer per file (sha256);
 * `version` is the probe shape's, so a new shape probes again.
 */
export const m0008Timeline: Migration = {
  version: 8,
  name: 'timeline',
  up(db) {
    db.exec(`
      CREATE TABLE timelines (
        id TEXT PRIMARY KEY,
        studio_id TEXT NOT NULL REFERENCES studios(id),
        name TEXT NOT NULL,
        target TEXT NOT NULL,
        tracks TEXT NOT NULL,
        revision INTEGER NOT NULL CHECK (revision >= 1),
        duration REAL NOT NULL,
        touched INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        deleted_at TEXT
      );
      CREATE INDEX timelines_live_by_studio ON timelines (studio_id, id) WHERE deleted_at IS NULL;
      CREATE INDEX timelines_live ON timelines (id) WHERE deleted_at IS NULL;
      CREATE INDEX timelines_touched ON timelines (studio_id, touched) WHERE deleted_at IS NULL;
      CREATE INDEX timelines_by_touched ON timelines (touched);

      CREATE TABLE timeline_revisions (
        timeline_id TEXT NOT NULL REFERENCES timelines(id),
        revision INTEGER NOT NULL,
        name TEXT NOT NULL,
        target TEXT NOT NULL,
        tracks TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (timeline_id, revision)
      );

      CREATE TABLE timeline_assets (
        timeline_id TEXT NOT NULL REFERENCES timelines(id),
        asset_id TEXT NOT NULL REFERENCES assets(id),
        PRIMARY KEY (timeline_id, asset_id)
      ) WITHOUT ROWID;
      CREATE INDEX timeline_assets_by_asset ON timeline_assets (asset_id);

      CREATE TABLE media_probes (
        sha256 TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        probe TEXT NOT NULL,
        probed_at TEXT NOT NULL
      ) WITHOUT ROWID;
    `);
  },
};
