import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { upload } from './helpers/assets';
import { client } from './helpers/http';
import { assertError } from './helpers/scenario';
import { startService, type TestService } from './helpers/service';
import { assertTimeline, createTimeline, newAsset, problems, where, type Client } from './helpers/timeline';

/**
 * Sequences and asset reclaim (docs/api.md "Reclaim" under "Timeline"):
 * the clips of a live sequence's current
 * revision hold their assets; revisions and deleted sequences do not; a
 * sequence clip counts as "referenced once in its life"; a reclaimed asset
 * cannot come back through create, append or revert.
 */

let svc: TestService;
let alpha: Client;
let beta: Client;
const tokens: Record<string, string> = {};

before(async () => {
  svc = await startService();
  tokens.alpha = svc.studio('alpha', ['timeline', 'assets']);
  tokens.beta = svc.studio('beta', ['timeline', 'assets']);
  alpha = client(svc.port, tokens.alpha);
  beta = client(svc.port, tokens.beta);
});

after(async () => {
  await svc?.stop();
});

const video = (token = tokens.alpha!) => newAsset(svc.port, token, 'video', { duration_s: 5 }).then((a) => a.id as string);
const preview = async (c: Client = alpha) => {
  const res = await c.post('/assets:reclaim', {});
  assert.equal(res.status, 200, res.text);
  return res.json.assets as string[];
};
const reclaimable = async (id: string, c: Client = alpha) => {
  const listed = (await preview(c)).includes(id);
  const res = await c.post('/assets:reclaim', { asset_ids: [id] });
  if (listed) assert.equal(res.status, 200, res.text);
  else assertError(res, 409, 'not_reclaimable', { assets: [id] });
  return listed;
};
const reclaim = async (id: string, c: Client = alpha) => {
  const p = await c.post('/assets:reclaim', { asset_ids: [id] });
  assert.equal(p.status, 200, p.text);
  const done = await c.post('/assets:reclaim', { asset_ids: [id], confirm: p.json.preview });
  assert.equal(done.status, 200, done.text);
  assert.deepEqual(done.json.reclaimed, [id]);
  assertError(await c.get(`/assets/${id}`), 410, 'asset_missing');
};

describe('a live sequence holds its clips\' assets', () => {
  test('not reclaimable while a live sequence names it; reclaimable once the sequence is deleted; then refused by create and append', async () => {
    const a = await video();
    assert.equal(await reclaimable(a), false, 'never referenced yet');
    const t = await createTimeline(alpha, { name: 'holds', clips: [{ asset_id: a }] });
    assert.equal(await reclaimable(a), false, 'held by the live sequence');
    // Further writes that keep the clip keep holding it; the clip already present is not rechecked.
    assertTimeline(await alpha.patch(`/timeline/${t.id}`, { name: 'holds 2' }, { 'If-Match': '1' }), 200);
    assertTimeline(await alpha.patch(`/timeline/${t.id}`, { target: { fps: 25 } }, { 'If-Match': '2' }), 200);
    assert.equal(await reclaimable(a), false, 'still held after writes that keep it');

    assert.equal((await alpha.delete(`/timeline/${t.id}`)).status, 204);
    assert.equal(await reclaimable(a), true, 'the deleted sequence no longer holds it');
    await reclaim(a);

    const created = await alpha.post('/timeline', { name: 'again', tracks: { V1: [{ asset_id: a, start: 0, duration: 1 }] } });
    assert.deepEqual(where(created), ['V1:0']);
    assert.ok(problems(created)[0]!.reason.includes(a));
    assert.deepEqual(where(await alpha.post('/timeline', { name: 'again', clips: [{ asset_id: a }] })), ['null:0']);
    const other = await createTimeline(alpha, { name: 'other' });
    assert.deepEqual(where(await alpha.post('/timeline:append', { asset_id: a, timeline_id: other.id, duration: 1 })), ['V1:0']);
    assert.equal((await alpha.get(`/timeline/${other.id}`)).json.revision, 1);
  });

  test('a PATCH that removes the clip frees it (revisions do not hold); a revert to a revision naming it is 422 naming its clips', async () => {
    const a = await video();
    const b = await video();
    const t = await createTimeline(alpha, {
      name: 'rev 1',
      tracks: {
        V1: [{ asset_id: a, start: 0 }, { asset_id: b, start: 5 }, { asset_id: a, start: 10, in: 1 }],
        V2: [{ asset_id: b, start: 0 }],
        V3: [{ asset_id: a, start: 3, duration: 1 }],
      },
    });
    const u = assertTimeline(await alpha.patch(`/timeline/${t.id}`, { name: 'rev 2', tracks: { V1: [{ asset_id: b, start: 0 }] } }, { 'If-Match': '1' }), 200);
    assert.equal(await reclaimable(b), false);
    assert.equal(await reclaimable(a), true, 'only revision 1 names it');
    // Before the reclaim a revert to revision 1 works (and would hold it again): go forward and back.
    assertTimeline(await alpha.post(`/timeline/${t.id}:revert`, { revision: 1 }, { 'If-Match': '2' }), 200);
    assert.equal(await reclaimable(a), false, 'held again by the reverted document');
    const back = assertTimeline(await alpha.post(`/timeline/${t.id}:revert`, { revision: 2 }, { 'If-Match': '3' }), 200);
    assert.deepEqual(back.tracks, u.tracks);
    assert.equal(await reclaimable(a), true);
    await reclaim(a);

    const res = await alpha.post(`/timeline/${t.id}:revert`, { revision: 1 }, { 'If-Match': '4' });
    assert.deepEqual(where(res), ['V1:0', 'V1:2', 'V3:0']);
    for (const p of problems(res)) assert.ok(p.reason.includes(a), p.reason);
    // Revision 3 (the reverted copy of 1) names it too.
    assert.deepEqual(where(await alpha.post(`/timeline/${t.id}:revert`, { revision: 3 }, { 'If-Match': '4' })), ['V1:0', 'V1:2', 'V3:0']);
    // Nothing written; the revision without it still reverts.
    const now = assertTimeline(await alpha.get(`/timeline/${t.id}`), 200);
    assert.equal(now.revision, 4);
    assert.deepEqual(now.tracks, u.tracks);
    assert.deepEqual((await alpha.get(`/timeline/${t.id}/revisions`)).json.items.map((r: any) => r.revision), [3, 2, 1]);
    assert.equal(assertTimeline(await alpha.post(`/timeline/${t.id}:revert`, { revision: 2 }, { 'If-Match': '4' }), 200).revision, 5);
  });

  test('an appended clip holds its asset too', async () => {
    const e = await video();
    const t = await createTimeline(alpha, { name: 'append holds' });
    assertTimeline(await alpha.post('/timeline:append', { asset_id: e, timeline_id: t.id }), 200);
    assert.equal(await reclaimable(e), false);
    assertTimeline(await alpha.patch(`/timeline/${t.id}`, { tracks: null }, { 'If-Match': '2' }), 200);
    assert.equal(await reclaimable(e), true);
  });

  test('a refused write does not count as a reference', async () => {
    const f = await video();
    assert.equal((await alpha.post('/timeline', { name: 'refused', clips: [{ asset_id: f }, { asset_id: f, in: 9 }] })).status, 422);
    const t = await createTimeline(alpha, { name: 'refused patch' });
    assert.equal((await alpha.patch(`/timeline/${t.id}`, { tracks: { V1: [{ asset_id: f, start: 0 }, { asset_id: f, start: 1 }] } }, { 'If-Match': '1' })).status, 422);
    assert.equal(await reclaimable(f), false, 'never referenced by anything stored');
  });

  test("another studio's live sequence holds an asset both can read", async () => {
    const bytes = randomBytes(200);
    const mine = await upload(svc.port, tokens.alpha!, bytes, 'kind=video&duration_s=3');
    const theirs = await upload(svc.port, tokens.beta!, bytes, 'kind=video&duration_s=3');
    assert.equal(mine.status, 201);
    assert.equal(theirs.status, 200);
    const d = mine.json.id as string;
    assert.equal(theirs.json.id, d);
    const bt = await createTimeline(beta, { name: 'beta holds', clips: [{ asset_id: d }] });
    assert.equal(await reclaimable(d), false, "held by beta's sequence");
    assert.equal(await reclaimable(d, beta), false);
    assert.equal((await beta.delete(`/timeline/${bt.id}`)).status, 204);
    assert.equal(await reclaimable(d), true);
    await reclaim(d);
    assertError(await beta.get(`/assets/${d}`), 410, 'asset_missing');
    assert.deepEqual(where(await beta.post('/timeline', { name: 'x', clips: [{ asset_id: d }] })), ['null:0']);
  });
});
