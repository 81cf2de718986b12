import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { after, before, describe, test } from 'node:test';
import { client } from './helpers/http';
import { assertError } from './helpers/scenario';
import { startService, type TestService } from './helpers/service';
import { upload } from './helpers/assets';
import { createItem, ids, newAsset, newestFirst, walk, type Client } from './helpers/gallery';

/**
 * Lineage (docs/api.md "Lineage") and the gallery's references in asset
 * reclaim (docs/api.md "Reclaim `POST /assets:reclaim`"),
 * black box.
 */

let svc: TestService;
let tokens: Record<string, string>;
let alpha: Client;
let alphaAll: Client;
let alphaGallery: Client;
let beta: Client;

before(async () => {
  svc = await startService();
  tokens = {
    alpha: svc.studio('alpha', ['gallery', 'assets']),
    beta: svc.studio('beta', ['gallery', 'assets']),
  };
  tokens.alphaAll = svc.token('alpha', ['gallery', 'gallery.read_all', 'assets']);
  tokens.alphaGallery = svc.token('alpha', ['gallery']);
  alpha = client(svc.port, tokens.alpha);
  alphaAll = client(svc.port, tokens.alphaAll);
  alphaGallery = client(svc.port, tokens.alphaGallery);
  beta = client(svc.port, tokens.beta);
});

after(async () => {
  await svc?.stop();
});

/** An asset both studios can read (both uploaded its bytes). */
async function sharedAsset(): Promise<string> {
  const bytes = randomBytes(200);
  const a = await upload(svc.port, tokens.alpha!, bytes, 'kind=other');
  const b = await upload(svc.port, tokens.beta!, bytes, 'kind=other');
  assert.equal(a.json.id, b.json.id);
  return a.json.id;
}

const asset = () => newAsset(svc.port, tokens.alpha!, 'other').then((a) => a.id as string);
const make = (c: Client, assetId: string, inputs: string[] = [], title?: string) =>
  createItem(c, { asset_id: assetId, title: title ?? null, inputs: inputs.map((id, n) => ({ asset_id: id, role: `in${n}` })) });
const up = (c: Client, id: string, limit = 500) => walk(c, `/gallery/items/${id}/lineage`, limit).then(ids);
const down = (c: Client, assetId: string, limit = 500) => walk(c, `/assets/${assetId}/lineage`, limit).then(ids);
const order = (...items: any[]) => ids(newestFirst(items));

/** What the database still holds of items (a read-only peek: hard deletion is not visible through the API). */
function storedRows(itemIds: string[]): { items: number; inputs: number; tags: number } {
  const db = new Database(join(svc.dataDir, 'backlot.db'), { readonly: true });
  try {
    const list = JSON.stringify(itemIds);
    const seqs = `(SELECT seq FROM gallery_items WHERE id IN (SELECT value FROM json_each(?)))`;
    const count = (sql: string) => (db.prepare(sql).pluck().get(list) as number);
    return {
      items: count('SELECT count(*) FROM gallery_items WHERE id IN (SELECT value FROM json_each(?))'),
      inputs: count(`SELECT count(*) FROM gallery_inputs WHERE item IN ${seqs}`),
      tags: count(`SELECT count(*) FROM gallery_tags WHERE item IN ${seqs}`),
    };
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------------------
describe('lineage through generations', () => {
  /** a0 → i1 (alpha) → a1 → i2 (beta) → a2 → i3 (alpha, deleted) → a3 → i4 (alpha) → a4 → i5 (alpha) → a5 */
  const chain: Record<string, any> = {};
  before(async () => {
    const a0 = await asset();
    const a1 = await sharedAsset();
    const a2 = await sharedAsset();
    const [a3, a4, a5] = [await asset(), await asset(), await asset()];
    Object.assign(chain, { a0, a1, a2, a3, a4, a5 });
    chain.i1 = await make(alpha, a1, [a0], 'i1');
    chain.i2 = await make(beta, a2, [a1], 'i2');
    chain.i3 = await make(alpha, a3, [a2], 'i3');
    chain.i4 = await make(alpha, a4, [a3], 'i4');
    chain.i5 = await make(alpha, a5, [a4], 'i5');
    assert.equal((await alpha.delete(`/gallery/items/${chain.i3.id}`)).status, 204);
  });

  test('upstream passes through another studio\'s item and a deleted one; the foreign one shown only with read_all', async () => {
    const { i1, i2, i4, i5 } = chain;
    assert.deepEqual(await up(alpha, i5.id), order(i4, i1));
    assert.deepEqual(await up(alphaAll, i5.id), order(i4, i2, i1));
    assert.deepEqual(await up(alphaGallery, i5.id), order(i4, i1));
    assert.deepEqual(await up(alpha, i4.id), order(i1), 'three generations up, past a deleted and a foreign item');
    assert.deepEqual(await up(alphaAll, i4.id), order(i2, i1));
    assert.deepEqual(await up(alpha, i1.id), [], 'an input no item produced ends the walk');
    assert.deepEqual(await up(beta, i2.id), [], 'alpha\'s i1 is hidden from beta');
    assert.deepEqual(await up(alphaAll, i2.id), order(i1));
    assertError(await alpha.get(`/gallery/items/${i2.id}/lineage`), 404, 'not_found');
  });

  test('downstream likewise, from any asset of the chain', async () => {
    const { a0, a1, a2, a3, a4, a5, i1, i2, i4, i5 } = chain;
    assert.deepEqual(await down(alpha, a0), order(i5, i4, i1));
    assert.deepEqual(await down(alphaAll, a0), order(i5, i4, i2, i1));
    assert.deepEqual(await down(alphaGallery, a0), order(i5, i4, i1), 'gallery alone suffices');
    assert.deepEqual(await down(alpha, a1), order(i5, i4), 'i1 made a1: never listed from a1');
    assert.deepEqual(await down(alphaAll, a1), order(i5, i4, i2));
    assert.deepEqual(await down(beta, a1), order(i2), 'beta sees its own only');
    assert.deepEqual(await down(alpha, a2), order(i5, i4));
    assert.deepEqual(await down(alpha, a3), order(i5, i4));
    assert.deepEqual(await down(alpha, a4), order(i5));
    assert.deepEqual(await down(alpha, a5), []);
    assertError(await beta.get(`/assets/${a0}/lineage`), 404, 'not_found');
  });

  test('pages walk the lineage one item at a time, and cursors are bound to their lineage', async () => {
    const { a0, i5, i4 } = chain;
    for (const limit of [1, 2]) {
      assert.deepEqual(await up(alphaAll, i5.id, limit), await up(alphaAll, i5.id));
      assert.deepEqual(await down(alphaAll, a0, limit), await down(alphaAll, a0));
    }
    const upCursor = encodeURIComponent((await alphaAll.get(`/gallery/items/${i5.id}/lineage?limit=1`)).json.next_cursor);
    const downCursor = encodeURIComponent((await alphaAll.get(`/assets/${a0}/lineage?limit=1`)).json.next_cursor);
    assert.equal((await alphaAll.get(`/gallery/items/${i5.id}/lineage?cursor=${upCursor}`)).status, 200);
    assert.equal((await alphaAll.get(`/assets/${a0}/lineage?cursor=${downCursor}`)).status, 200);
    assertError(await alphaAll.get(`/gallery/items/${i4.id}/lineage?cursor=${upCursor}`), 400, 'bad_cursor');
    assertError(await alphaAll.get(`/assets/${chain.a1}/lineage?cursor=${downCursor}`), 400, 'bad_cursor');
    assertError(await alphaAll.get(`/assets/${a0}/lineage?cursor=${upCursor}`), 400, 'bad_cursor');
    assertError(await alphaAll.get(`/gallery/items/${i5.id}/lineage?cursor=${downCursor}`), 400, 'bad_cursor');
    assertError(await alphaAll.get(`/gallery/items?cursor=${upCursor}`), 400, 'bad_cursor');
    assertError(await alpha.get(`/gallery/items/${i5.id}/lineage?cursor=${upCursor}`), 400, 'bad_cursor');
    assertError(await alphaAll.get(`/gallery/items/${i5.id}/lineage?cursor=zzz`), 400, 'bad_cursor');
    assertError(await alphaAll.get(`/assets/${a0}/lineage?cursor=zzz`), 400, 'bad_cursor');
    for (const q of ['limit=0', 'limit=501', 'limit=x']) {
      assertError(await alpha.get(`/gallery/items/${i5.id}/lineage?${q}`), 400, 'bad_request');
      assertError(await alpha.get(`/assets/${a0}/lineage?${q}`), 400, 'bad_request');
    }
  });
});

// ---------------------------------------------------------------------------
describe('lineage shapes', () => {
  test('an item taking its own asset as input: the walk ends; the start is never listed', async () => {
    const x = await asset();
    const self = await make(alpha, x, [x]);
    assert.deepEqual(await up(alpha, self.id), []);
    assert.deepEqual(await down(alpha, x), []);
    const y = await asset();
    const next = await make(alpha, y, [x]);
    assert.deepEqual(await up(alpha, next.id), [self.id]);
    assert.deepEqual(await down(alpha, x), [next.id]);
  });

  test('a two-item cycle ends, each side seeing the other', async () => {
    const [m, n] = [await asset(), await asset()];
    const p = await make(alpha, m, [n]);
    const q = await make(alpha, n, [m]);
    assert.deepEqual(await up(alpha, p.id), [q.id]);
    assert.deepEqual(await up(alpha, q.id), [p.id]);
    assert.deepEqual(await down(alpha, m), [q.id]);
    assert.deepEqual(await down(alpha, n), [p.id]);
  });

  test('a longer cycle through a deleted and a foreign item ends', async () => {
    const [c0, c1, c2] = [await sharedAsset(), await sharedAsset(), await sharedAsset()];
    const k0 = await make(alpha, c0, [c2]);
    const k1 = await make(beta, c1, [c0]);
    const k2 = await make(alpha, c2, [c1]);
    const tail = await make(alpha, await asset(), [c2]);
    assert.equal((await alpha.delete(`/gallery/items/${k0.id}`)).status, 204);
    assert.deepEqual(await up(alpha, tail.id), [k2.id]);
    assert.deepEqual(await up(alphaAll, tail.id), order(k2, k1));
    assert.deepEqual(await up(alphaAll, k2.id), order(k1), 'the start is never listed, even when the walk comes back to it');
    assert.deepEqual(await down(alphaAll, c0), order(tail, k2, k1));
    assert.deepEqual(await down(alphaAll, c2), order(tail, k1), 'k2 made c2: never listed from c2');
  });

  test('a diamond lists each item once; duplicate paths and roles do not repeat it', async () => {
    const r = await asset();
    const root = await make(alpha, r);
    const b1 = await make(alpha, await asset(), [r]);
    const b2 = await make(alpha, await asset(), [r, r]);
    const d = await createItem(alpha, {
      asset_id: await asset(),
      inputs: [
        { asset_id: b1.asset_id, role: 'a' },
        { asset_id: b2.asset_id, role: 'b' },
        { asset_id: b2.asset_id, role: 'c' },
        { asset_id: r, role: 'd' },
      ],
    });
    // A second item making the same asset as b1: both are upstream of d.
    const b1twin = await make(alpha, b1.asset_id, [r]);
    assert.deepEqual(await up(alpha, d.id), order(b1twin, b2, b1, root));
    assert.deepEqual(await up(alpha, d.id, 1), order(b1twin, b2, b1, root));
    assert.deepEqual(await down(alpha, r), order(b1twin, d, b2, b1));
  });

  test('newest first even when generations were recorded out of order', async () => {
    // The child is recorded before its parent (inputs only need to be readable assets).
    const [p, c] = [await asset(), await asset()];
    const child = await make(alpha, c, [p]);
    const parent = await make(alpha, p, []);
    const grand = await make(alpha, await asset(), [c]);
    assert.deepEqual(await up(alpha, grand.id), order(parent, child));
    assert.equal((await up(alpha, grand.id))[0], parent.id);
  });

  test('a wide downstream lineage pages through every item once', async () => {
    const root = await asset();
    const made: any[] = [];
    for (let i = 0; i < 12; i++) made.push(await make(alpha, await asset(), [i % 2 === 0 ? root : made[i - 1].asset_id]));
    const expected = order(...made);
    for (const limit of [1, 5, 500]) assert.deepEqual(await down(alpha, root, limit), expected, `limit ${limit}`);
    const deepest = made[made.length - 1];
    const upExpected = await up(alpha, deepest.id);
    for (const limit of [1, 3]) assert.deepEqual(await up(alpha, deepest.id, limit), upExpected);
  });
});

// ---------------------------------------------------------------------------
describe('reclaim: live items and their inputs are references', () => {
  const reclaim = (body: unknown, c: Client = alpha) => c.post('/assets:reclaim', body);

  test('an asset of a live item or a live item\'s input is not reclaimable; after the delete it is', async () => {
    const [out, input] = [await asset(), await asset()];
    const it = await make(alpha, out, [input]);
    assertError(await reclaim({ asset_ids: [out] }), 409, 'not_reclaimable', { assets: [out] });
    assertError(await reclaim({ asset_ids: [input] }), 409, 'not_reclaimable', { assets: [input] });
    assert.ok(!(await reclaim({})).json.assets.includes(out));
    assert.equal((await alpha.delete(`/gallery/items/${it.id}`)).status, 204);
    const preview = await reclaim({ asset_ids: [out, input] });
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual(preview.json.assets, [out, input].sort());
    assert.deepEqual(preview.json.items, [it.id]);
    const done = await reclaim({ asset_ids: [out, input], confirm: preview.json.preview });
    assert.equal(done.status, 200, done.text);
    assert.deepEqual(done.json.reclaimed, [out, input].sort());
    assertError(await alpha.get(`/gallery/items/${it.id}`), 404, 'not_found');
    // A reclaimed asset cannot be recorded again, as output or input.
    assertError(await alpha.post('/gallery/items', { asset_id: out }), 404, 'not_found');
    assertError(await alpha.post('/gallery/items', { asset_id: await asset(), inputs: [{ asset_id: input, role: 'x' }] }), 404, 'not_found');
  });

  test('confirming hard-deletes the dead items: the lineage walk no longer passes through them', async () => {
    // q (live) → p (dead) → l (dead) → l2 (live); p's asset is referenced by dead items only.
    const [qa, pa, la, l2a] = [await asset(), await asset(), await asset(), await asset()];
    const q = await make(alpha, qa);
    const p = await createItem(alpha, { asset_id: pa, inputs: [{ asset_id: qa, role: 'in0' }], tags: ['p-tag'] });
    const l = await createItem(alpha, { asset_id: la, inputs: [{ asset_id: pa, role: 'in0' }], tags: ['l-tag'] });
    const l2 = await make(alpha, l2a, [la]);
    for (const dead of [p, l]) assert.equal((await alpha.delete(`/gallery/items/${dead.id}`)).status, 204);
    assert.deepEqual(await up(alpha, l2.id), [q.id], 'the walk passes through the soft-deleted items');
    assert.deepEqual(await down(alpha, qa), [l2.id]);
    assertError(await reclaim({ asset_ids: [qa] }), 409, 'not_reclaimable', { assets: [qa] });
    assertError(await reclaim({ asset_ids: [la] }), 409, 'not_reclaimable', { assets: [la] });

    const preview = await reclaim({ asset_ids: [pa] });
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual(preview.json.assets, [pa]);
    assert.deepEqual([...preview.json.items].sort(), [p.id, l.id].sort());
    assert.deepEqual(await up(alpha, l2.id), [q.id], 'a preview changes nothing');
    assert.deepEqual(storedRows([p.id, l.id]), { items: 2, inputs: 2, tags: 2 }, 'soft-deleted items keep their rows, inputs and tags');
    const done = await reclaim({ asset_ids: [pa], confirm: preview.json.preview });
    assert.equal(done.status, 200, done.text);
    assert.deepEqual(done.json.reclaimed, [pa]);

    assert.deepEqual(storedRows([p.id, l.id]), { items: 0, inputs: 0, tags: 0 }, 'hard-deleted: rows, inputs and tags');
    assert.deepEqual(storedRows([q.id, l2.id]).items, 2);
    assert.deepEqual(await up(alpha, l2.id), [], 'the hard-deleted items no longer link l2 to q');
    assert.deepEqual(await down(alpha, qa), []);
    for (const gone of [p, l]) {
      assertError(await alpha.get(`/gallery/items/${gone.id}`), 404, 'not_found');
      assertError(await alpha.delete(`/gallery/items/${gone.id}`), 404, 'not_found');
    }
    // The live ones are untouched.
    assert.equal((await alpha.get(`/gallery/items/${q.id}`)).status, 200);
    assert.deepEqual((await alpha.get(`/gallery/items/${l2.id}`)).json.inputs, [{ asset_id: la, role: 'in0' }]);
    // la is now referenced by l2 only (live): still not reclaimable.
    assertError(await reclaim({ asset_ids: [la] }), 409, 'not_reclaimable');
  });

  test('another studio\'s live item still referencing an asset keeps it', async () => {
    const shared = await sharedAsset();
    const mine = await make(alpha, shared);
    const theirs = await make(beta, await newAsset(svc.port, tokens.beta!).then((a) => a.id), [shared]);
    assert.equal((await alpha.delete(`/gallery/items/${mine.id}`)).status, 204);
    assertError(await reclaim({ asset_ids: [shared] }), 409, 'not_reclaimable', { assets: [shared] });
    assert.ok(!(await reclaim({})).json.assets.includes(shared));
    // Once beta's item dies too, the asset is reclaimable, and both dead items go with it.
    assert.equal((await beta.delete(`/gallery/items/${theirs.id}`)).status, 204);
    const preview = await reclaim({ asset_ids: [shared] });
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual([...preview.json.items].sort(), [mine.id, theirs.id].sort());
  });

  test('an item as output only, or as input only, counts; a soft-deleted item alone does not', async () => {
    const solo = await asset();
    const it = await make(alpha, await asset(), [solo]);
    assertError(await reclaim({ asset_ids: [solo] }), 409, 'not_reclaimable');
    assert.equal((await alpha.delete(`/gallery/items/${it.id}`)).status, 204);
    const preview = await reclaim({ asset_ids: [solo] });
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual(preview.json.items, [it.id]);
  });
});
