import type { Migration } from '../migrate';

/**
 * Gallery (docs/api.md "Gallery"). `seq` is the row id, handed out
 * in creation order together with the id (a ULID) and `created_at` (the ULID's
 * instant), so "created_at desc, id desc" is "seq desc": every list, search and
 * lineage page walks seq, and full-text matches come out of the FTS index
 * already in that order.
 *
 * AUTOINCREMENT: a seq is never handed out twice, even after a reclaim
 * hard-deletes the newest item, so nothing that once named a seq (a cursor, a
 * search entry) can come to name another item.
 *
 * `tags` and `inputs` are kept twice: as JSON text on the item (what a read
 * sends back, one row per item) and as rows in gallery_tags / gallery_inputs
 * (what filters, lineage and reclaim query). Both are written in one
 * transaction. gallery_search is contentless: it holds the folded words of
 * live items only (a delete takes the item out of it; no restore exists).
 */
export const m0007Gallery: Migration = {
  version: 7,
  name: 'gallery',
  up(db) {
    db.exec(`
      CREATE TABLE gallery_items (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        studio_id TEXT NOT NULL REFERENCES studios(id),
        asset_id TEXT NOT NULL REFERENCES assets(id),
        kind TEXT NOT NULL CHECK (kind IN ('image', 'video', 'audio', 'other')),
        title TEXT,
        tags TEXT NOT NULL,
        starred INTEGER NOT NULL CHECK (starred IN (0, 1)),
        session_id TEXT,
        params TEXT NOT NULL,
        inputs TEXT NOT NULL,
        timeline_id TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        deleted_at TEXT
      ) STRICT;
      -- Each ends in seq (the row id), so "= value ORDER BY seq DESC" is one index range;
      -- query.ts names the one a page walks (itemIndexFor).
      CREATE INDEX gallery_items_live_by_studio ON gallery_items(studio_id) WHERE deleted_at IS NULL;
      CREATE INDEX gallery_items_live_by_kind ON gallery_items(studio_id, kind) WHERE deleted_at IS NULL;
      CREATE INDEX gallery_items_live_starred ON gallery_items(studio_id) WHERE deleted_at IS NULL AND starred = 1;
      CREATE INDEX gallery_items_by_asset ON gallery_items(asset_id);
      CREATE INDEX gallery_items_by_session ON gallery_items(session_id) WHERE session_id IS NOT NULL;

      CREATE TABLE gallery_inputs (
        item INTEGER NOT NULL REFERENCES gallery_items(seq),
        asset_id TEXT NOT NULL,
        role TEXT NOT NULL,
        PRIMARY KEY (item, asset_id, role)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX gallery_inputs_by_asset ON gallery_inputs(asset_id, item);

      CREATE TABLE gallery_tags (
        tag TEXT NOT NULL,
        item INTEGER NOT NULL REFERENCES gallery_items(seq),
        PRIMARY KEY (tag, item)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX gallery_tags_by_item ON gallery_tags(item);
      -- Rows per tag (dead items' too), kept by triggers: a page with several tags walks the rarest.
      CREATE TABLE gallery_tag_counts (tag TEXT PRIMARY KEY, items INTEGER NOT NULL) STRICT, WITHOUT ROWID;
      CREATE TRIGGER gallery_tags_counted AFTER INSERT ON gallery_tags BEGIN
        INSERT INTO gallery_tag_counts (tag, items) VALUES (new.tag, 1)
          ON CONFLICT (tag) DO UPDATE SET items = items + 1;
      END;
      CREATE TRIGGER gallery_tags_uncounted AFTER DELETE ON gallery_tags BEGIN
        UPDATE gallery_tag_counts SET items = items - 1 WHERE tag = old.tag;
      END;

      -- studio holds one word naming the item's studio (search.ts studioWord): a search
      -- of one studio walks only that studio's postings, whatever the others hold.
      CREATE VIRTUAL TABLE gallery_search USING fts5(
        title, prompt, studio,
        content = '', contentless_delete = 1,
        tokenize = 'ascii',
        prefix = '1 2 3'
      );
      -- Every indexed word longer than 3 characters, once: a typed prefix longer than the
      -- prefix indexes is spelled out as the words it completes (search.ts compileSearch).
      CREATE TABLE gallery_search_words (word TEXT PRIMARY KEY) STRICT, WITHOUT ROWID;
    `);
  },
};
