import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createService, type Service } from '../service/app';
import type { AssetReferenceSource, AssetsStore } from '../service/assets';
import type { Db } from '../service/db/open';
import { runCli, tempDir } from './helpers/service';
import { client } from './helpers/http';
import { assertError } from './helpers/scenario';
import { asHttp, getAsset, makeJpeg, upload } from './helpers/assets';

/**
 * Reclaim with real references (docs/api.md "Reclaim `POST /assets:reclaim`"). Nothing in the service
 * references assets yet, so this test registers a reference source the way
 * the gallery and timeline will (a name, the SQL of live references, dead
 * dependents and their purge), on a real service over a real data dir.
 */

const dataDir = tempDir();
let service: Service;
let port = 0;
const tokens: Record<string, string> = {};
let refs: { db: Db; assets: AssetsStore };

/** A test-owned table of references: `live` 1, or 0 for a soft-deleted holder. */
function testSource(deps: { db: Db; assets: AssetsStore }): AssetReferenceSource {
  deps.db.exec('CREATE TABLE IF NOT EXISTS test_refs (id INTEGER PRIMARY KEY, asset_id TEXT NOT NULL, live INTEGER NOT NULL) STRICT');
  refs = deps;
  const dead = deps.db.prepare('SELECT id FROM test_refs WHERE live = 0 AND asset_id IN (SELECT value FROM json_each(?))').pluck();
  const purge = deps.db.prepare('DELETE FROM test_refs WHERE live = 0 AND asset_id IN (SELECT value FROM json_each(?))');
  return {
    name: 'test_refs',
    liveSql: 'SELECT asset_id FROM test_refs WHERE live = 1',
    dependents: (ids) => dead.all(JSON.stringify(ids)).map(String),
    purge: (ids) => void purge.run(JSON.stringify(ids)),
  };
}

/** A writer of the test domain: the row and "referenced once" in one transaction, as the gallery will. */
function reference(assetId: string, live = 1): number {
  return refs.db.transaction(() => {
    const id = refs.db.prepare('INSERT INTO test_refs (asset_id, live) VALUES (?, ?)').run(assetId, live).lastInsertRowid;
    refs.assets.noteReferenced([assetId], new Date().toISOString());
    return Number(id);
  })();
}
const setLive = (assetId: string, live: number) => refs.db.prepare('UPDATE test_refs SET live = ? WHERE asset_id = ?').run(live, assetId);
const refRows = (assetId: string) => refs.db.prepare('SELECT count(*) FROM test_refs WHERE asset_id = ?').pluck().get(assetId);

before(async () => {
  for (const id of ['alpha', 'beta']) {
    assert.equal(runCli(['studio', 'add', id, '--data-dir', dataDir]).code, 0);
    tokens[id] = runCli(['token', 'create', '--studio', id, '--caps', 'assets', '--data-dir', dataDir]).stdout.trim();
  }
  service = createService({ dataDir, assetReferenceSources: [testSource] });
  port = (await service.listen(0)).port;
});
after(async () => {
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const reclaim = (body: unknown, as = 'alpha') => client(port, tokens[as]).post('/assets:reclaim', body);

test('preview, a changed set, confirm: files go, rows stay and answer 410, dependents are hard-deleted', async () => {
  const imageBytes = await makeJpeg(400, 300, 5);
  const a = (await upload(port, tokens.alpha!, imageBytes, 'kind=image&filename=a.jpg', 'image/jpeg')).json;
  const b = (await upload(port, tokens.alpha!, randomBytes(2000), 'kind=other')).json;
  const pinned = (await upload(port, tokens.alpha!, randomBytes(3000), 'kind=other&pinned=true')).json;
  const never = (await upload(port, tokens.alpha!, randomBytes(4000), 'kind=other')).json;
  const shared = await upload(port, tokens.beta!, imageBytes, 'kind=image&filename=b.jpg', 'image/jpeg');
  assert.equal(shared.json.id, a.id);
  for (const asset of [a, b, pinned]) reference(asset.id);
  assert.equal((await getAsset(port, tokens.alpha!, `/assets/${a.id}/thumb`)).status, 200);
  const thumb = join(dataDir, 'thumbs', `${a.sha256}-320.webp`);
  assert.ok(existsSync(thumb));

  // Everything is referenced by something live: nothing to reclaim.
  assert.deepEqual((await reclaim({})).json.assets, []);
  assertError(await reclaim({ asset_ids: [a.id] }), 409, 'not_reclaimable', { assets: [a.id] });

  // The holders of a, b and pinned die (soft delete); `never` stays out: nothing ever referenced it.
  const deadA = reference(a.id, 0);
  setLive(a.id, 0);
  setLive(b.id, 0);
  setLive(pinned.id, 0);
  const preview = await reclaim({});
  assert.equal(preview.status, 200, preview.text);
  assert.deepEqual(preview.json.assets, [a.id, b.id].sort());
  assert.equal(preview.json.bytes, a.size + b.size);
  assert.ok(preview.json.items.includes(String(deadA)));
  assertError(await reclaim({ asset_ids: [pinned.id, never.id] }), 409, 'not_reclaimable', { assets: [pinned.id, never.id].sort() });
  // Another studio sees only what it can read.
  assert.deepEqual((await reclaim({}, 'beta')).json.assets, [a.id]);

  // The set changes between preview and confirm: 409 with the new preview; nothing reclaimed.
  setLive(b.id, 1);
  const stale = await reclaim({ confirm: preview.json.preview });
  assertError(stale, 409, 'preview_changed', { assets: [a.id] });
  assert.notEqual(stale.json.details.preview, preview.json.preview);
  assert.equal((await getAsset(port, tokens.alpha!, `/assets/${b.id}`)).status, 200);

  // A preview narrowed by asset_ids, then confirmed with the same ids.
  const narrowed = await reclaim({ asset_ids: [a.id] });
  assert.equal(narrowed.json.preview, stale.json.details.preview);
  const done = await reclaim({ asset_ids: [a.id], confirm: narrowed.json.preview });
  assert.equal(done.status, 200, done.text);
  assert.deepEqual(done.json, { reclaimed: [a.id], bytes_freed: a.size });

  assert.equal(existsSync(join(dataDir, 'blobs', `${a.sha256}.jpg`)), false, 'the blob is gone');
  assert.equal(existsSync(a.library_path), false, 'alpha\'s library file is gone');
  assert.equal(existsSync(shared.json.library_path), false, 'beta\'s library file is gone');
  assert.equal(existsSync(thumb), false, 'the thumbnail is gone');
  assert.equal(refRows(a.id), 0, 'dead holders were hard-deleted');
  for (const who of ['alpha', 'beta']) {
    assertError(asHttp(await getAsset(port, tokens[who]!, `/assets/${a.id}`)), 410, 'asset_missing');
    assertError(asHttp(await getAsset(port, tokens[who]!, `/assets/${a.id}/thumb`)), 410, 'asset_missing');
  }
  assert.deepEqual((await reclaim({})).json.assets, []);
  assertError(await reclaim({ asset_ids: [a.id] }), 409, 'not_reclaimable');

  // The same bytes uploaded again bring the asset back under its id, out of reclaim until referenced anew.
  const back = await upload(port, tokens.alpha!, imageBytes, 'kind=image', 'image/jpeg');
  assert.equal(back.status, 201);
  assert.equal(back.json.id, a.id);
  assert.equal((await getAsset(port, tokens.alpha!, `/assets/${a.id}`)).status, 200);
  assert.deepEqual((await reclaim({})).json.assets, []);
});

test('"referenced once in its life" is permanent: a holder removed for good still leaves the asset reclaimable', async () => {
  const c = (await upload(port, tokens.alpha!, randomBytes(1234), 'kind=other')).json;
  const id = reference(c.id);
  refs.db.prepare('DELETE FROM test_refs WHERE id = ?').run(id);
  const preview = await reclaim({ asset_ids: [c.id] });
  assert.equal(preview.status, 200, preview.text);
  assert.deepEqual(preview.json.assets, [c.id]);
  assert.deepEqual(preview.json.items, []);
  const done = await reclaim({ asset_ids: [c.id], confirm: preview.json.preview });
  assert.deepEqual(done.json, { reclaimed: [c.id], bytes_freed: 1234 });
});

test('a reclaimed asset\'s leftover files go at the next start (a crash between commit and unlink)', async () => {
  const d = (await upload(port, tokens.alpha!, randomBytes(999), 'kind=other')).json;
  reference(d.id, 0);
  const preview = await reclaim({ asset_ids: [d.id] });
  // Simulate the crash: mark reclaimed in the database only, files left behind.
  refs.db.prepare('UPDATE assets SET reclaimed_at = ? WHERE id = ?').run(new Date().toISOString(), d.id);
  assert.ok(existsSync(d.library_path));
  await service.close();
  service = createService({ dataDir, assetReferenceSources: [testSource] });
  port = (await service.listen(0)).port;
  assert.equal(existsSync(join(dataDir, 'blobs', `${d.sha256}.bin`)), false);
  assert.equal(existsSync(d.library_path), false);
  assertError(asHttp(await getAsset(port, tokens.alpha!, `/assets/${d.id}`)), 410, 'asset_missing');
  assert.equal(typeof preview.json.preview, 'string');
});
