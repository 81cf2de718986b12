import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createAssets, type AssetReferenceSource } from '../service/assets';
import { openDatabase, type Db } from '../service/db/open';
import { createStudiosStore } from '../service/studios';
import { TIMELINE_SQL } from '../service/timeline';
import { createTimelineStore } from '../service/timeline/store';
import { queryPlan } from './helpers/gallery-db';
import { tempDir } from './helpers/service';

/**
 * Migration 0008's hot queries use their indexes (no table scan, no sort), as
 * the store prepares them: the list (own and read_all), append's most recent
 * sequence, the revisions page, the write's service-wide `touched` counter, and
 * reclaim's "held by a live sequence" test.
 */

let dir: string;
let db: Db;
let prepared: string[];
let createSources: () => AssetReferenceSource[];

before(() => {
  dir = tempDir('backlot-tl-db-');
  db = openDatabase(dir);
  const studios = createStudiosStore(db);
  const assets = createAssets(db, {
    dataDir: dir,
    uploadLimit: 1 << 20,
    diskHeadroom: 0,
    secret: studios.cursorSecret(),
    studioDirs: () => ({ stage_dir: dir, data_dir: dir }),
  });
  prepared = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    prepared.push(sql);
    return prepare(sql);
  }) as Db['prepare'];
  const store = createTimelineStore(db, { assets: assets.store });
  createSources = () => store.referenceSources();
  db.exec('ANALYZE');
});

after(() => {
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

const noScanNoSort = (plan: string) => {
  assert.doesNotMatch(plan, /SCAN timelines|SCAN timeline_revisions|SCAN timeline_assets/, plan);
  assert.doesNotMatch(plan, /TEMP B-TREE/, plan);
};

describe('timeline query plans', () => {
  test('list own: the live (studio, id) index, newest first with no sort', () => {
    const plan = queryPlan(db, TIMELINE_SQL.listOwn, { studio: 'a', after: '~', limit: 51 });
    assert.match(plan, /USING INDEX timelines_live_by_studio \(studio_id=\? AND id<\?\)/, plan);
    noScanNoSort(plan);
  });

  test('list with gallery.read_all: the live id index', () => {
    const plan = queryPlan(db, TIMELINE_SQL.listAll, { after: '~', limit: 51 });
    assert.match(plan, /USING INDEX timelines_live \(id<\?\)/, plan);
    noScanNoSort(plan);
  });

  test("append's most recent sequence: the live (studio, touched) index", () => {
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${TIMELINE_SQL.mostRecent}`).all('a') as { detail: string }[]).map((r) => r.detail).join('\n');
    assert.match(plan, /USING INDEX timelines_touched \(studio_id=\?\)/, plan);
    noScanNoSort(plan);
  });

  test('revisions page: the (timeline_id, revision) key', () => {
    const plan = queryPlan(db, TIMELINE_SQL.revisions, { id: 'x', after: 9, limit: 51 });
    assert.match(plan, /timeline_revisions USING INDEX sqlite_autoindex_timeline_revisions_1 \(timeline_id=\? AND revision<\?\)/, plan);
    noScanNoSort(plan);
  });

  test('every write: the touched counter, the revision trim and the reference rewrite use an index', () => {
    const plans = [
      queryPlan(db, 'SELECT coalesce(max(touched), 0) + 1 FROM timelines', {}),
      queryPlan(db, 'DELETE FROM timeline_revisions WHERE timeline_id = @id AND revision <= @upTo', { id: 'x', upTo: 1 }),
      queryPlan(db, 'DELETE FROM timeline_assets WHERE timeline_id = @id', { id: 'x' }),
    ];
    assert.match(plans[0]!, /COVERING INDEX timelines_by_touched/, plans[0]);
    for (const plan of plans) noScanNoSort(plan);
    assert.ok(prepared.some((s) => s.includes('SELECT coalesce(max(touched), 0) + 1 FROM timelines')));
    assert.ok(prepared.includes('DELETE FROM timeline_revisions WHERE timeline_id = ? AND revision <= ?'));
  });

  test("reclaim's live-reference test looks timeline_assets up by asset", () => {
    const [source] = createSources();
    const plan = queryPlan(
      db,
      `SELECT a.id FROM assets a WHERE NOT EXISTS (SELECT 1 FROM (${source!.liveSql}) AS live WHERE live.asset_id = a.id)`,
      {},
    );
    assert.match(plan, /timeline_assets USING COVERING INDEX timeline_assets_by_asset \(asset_id=\?\)/, plan);
    assert.doesNotMatch(plan, /SCAN timeline_assets/, plan);
  });
});
