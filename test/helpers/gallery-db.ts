import { rmSync } from 'node:fs';
import { openDatabase, type Db } from '../../service/db/open';
import { createStudiosStore } from '../../service/studios';
import { createSessionsStore } from '../../service/sessions';
import { createAssets, type AssetKind } from '../../service/assets';
import { createGalleryStore } from '../../service/gallery';
import { newId } from '../../service/core/ids';
import { nowIso } from '../../service/core/time';
import { tempDir } from './service';

/**
 * The gallery's stores on a temp data dir, built as service/app.ts builds them
 * (real migrations, the assets store with the gallery's reference sources),
 * without HTTP. `prepared` lists every SQL text prepared on the database
 * after the stores were made (to EXPLAIN a statement no module exports).
 */
export function openGallery(studioIds: readonly string[]) {
  const dir = tempDir('backlot-gallery-');
  const db: Db = openDatabase(dir);
  const studios = createStudiosStore(db);
  for (const id of studioIds) studios.add({ id, name: id });
  const assets = createAssets(db, {
    dataDir: dir,
    uploadLimit: 1 << 20,
    diskHeadroom: 0,
    secret: studios.cursorSecret(),
    studioDirs: () => ({ stage_dir: dir, data_dir: dir }),
  });
  const sessions = createSessionsStore(db, studios);
  const gallery = createGalleryStore(db, { assets: assets.store, sessions });
  const prepared: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    prepared.push(sql);
    return prepare(sql);
  }) as Db['prepare'];
  for (const source of gallery.referenceSources()) assets.store.addReferenceSource(source);

  let n = 0;
  return {
    dir,
    db,
    studios,
    assets: assets.store,
    sessions,
    gallery,
    prepared,
    /** A stored asset row (no bytes: the gallery reads rows only) readable by the given studios. */
    newAsset(readers: readonly string[] = studioIds, kind: AssetKind = 'image'): string {
      const id = newId();
      const at = nowIso();
      n++;
      assets.store.create(
        { id, sha256: `sha-${n}-${id}`, kind, mime: 'image/png', size: 1, ext: '.png', pinned: 0, width: null, height: null, duration_s: null, fps: null, created_at: at },
        readers[0]!,
        `${id}.png`,
      );
      for (const reader of readers.slice(1)) assets.store.grant(id, reader, `${id}.png`, at);
      return id;
    },
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type GalleryFixture = ReturnType<typeof openGallery>;

/** EXPLAIN QUERY PLAN as text, one step a line. */
export function queryPlan(db: Db, sql: string, params: unknown): string {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params as Record<string, unknown>) as { detail: string }[])
    .map((r) => r.detail)
    .join('\n');
}
