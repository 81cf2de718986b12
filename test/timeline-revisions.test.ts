import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { client, send } from './helpers/http';
import { assertError } from './helpers/scenario';
import { startService, type TestService } from './helpers/service';
import { assertTimeline, clip, createTimeline, DEFAULT_TARGET, newAsset, REVISION_KEYS, UNKNOWN_ID, walk, type Client } from './helpers/timeline';

/**
 * Revisions and revert (docs/api.md "Update, delete, revisions, revert"):
 * each write keeps the document it
 * replaced, newest 100 kept, the current one not listed; revert writes an old
 * one forward. A revision naming a reclaimed asset: timeline-reclaim.test.ts.
 */

let svc: TestService;
let alpha: Client;
let alphaToken: string;
let alphaAll: Client;
let beta: Client;
const ids: Record<string, string> = {};

before(async () => {
  svc = await startService();
  const token = svc.studio('alpha', ['timeline', 'assets']);
  alphaToken = token;
  alpha = client(svc.port, token);
  alphaAll = client(svc.port, svc.token('alpha', ['timeline', 'gallery.read_all']));
  beta = client(svc.port, svc.studio('beta', ['timeline']));
  ids.video = (await newAsset(svc.port, token, 'video', { duration_s: 5 })).id;
  ids.audio = (await newAsset(svc.port, token, 'audio', { duration_s: 4 })).id;
});

after(async () => {
  await svc?.stop();
});

const at = (id: string) => `/timeline/${id}`;
const revisions = async (c: Client, id: string) => {
  const res = await c.get(`${at(id)}/revisions?limit=500`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.next_cursor, null);
  for (const r of res.json.items) assert.deepEqual(Object.keys(r).sort(), REVISION_KEYS);
  return res.json.items as any[];
};
const docOf = (t: any) => ({ name: t.name, target: t.target, tracks: t.tracks });
const asRevision = (t: any) => ({ revision: t.revision, ...docOf(t), description: t.description, created_at: t.updated_at });

describe('each write stores the document it replaced', () => {
  test('PATCH, append and revert each keep the replaced document; newest first; the current one is not listed', async () => {
    const t1 = await createTimeline(alpha, { name: 'one', clips: [{ asset_id: ids.video }] });
    assert.deepEqual(await revisions(alpha, t1.id), []);
    assert.equal(t1.created_at, t1.updated_at);

    const t2 = assertTimeline(await alpha.patch(at(t1.id), { name: 'two' }, { 'If-Match': '1' }), 200);
    const t3 = assertTimeline(await alpha.patch(at(t1.id), { target: { fps: 25, width: 1280, height: 720 } }, { 'If-Match': '2' }), 200);
    const t4 = assertTimeline(await alpha.patch(at(t1.id), { tracks: { A1: [{ asset_id: ids.audio, start: 1 }] } }, { 'If-Match': '3' }), 200);
    const t5 = assertTimeline(await alpha.post('/timeline:append', { asset_id: ids.video, timeline_id: t1.id }), 200);
    assert.deepEqual(t5.tracks, { A1: [clip(ids.audio!, 1, 4)], V1: [clip(ids.video!, 0, 5)] });
    const list = await revisions(alpha, t1.id);
    // created_at of a revision is when that document was written (the replaced row's updated_at).
    assert.deepEqual(list, [asRevision(t4), asRevision(t3), asRevision(t2), asRevision(t1)]);
    assert.equal(list[3].created_at, t1.created_at);
    assert.deepEqual(list[3].target, DEFAULT_TARGET);
    assert.deepEqual(list[1].target, { ...DEFAULT_TARGET, fps: 25, width: 1280, height: 720 });

    const t6 = assertTimeline(await alpha.post(`${at(t1.id)}:revert`, { revision: 1 }, { 'If-Match': '"5"' }), 200);
    assert.equal(t6.revision, 6);
    assert.equal(t6.id, t1.id);
    assert.equal(t6.created_at, t1.created_at);
    assert.deepEqual(docOf(t6), docOf(t1));
    assert.equal(t6.duration, t1.duration);
    assert.deepEqual(assertTimeline(await alpha.get(at(t1.id)), 200), t6);
    // Nothing is rewound: every earlier document is still there, and the replaced one is the newest revision.
    assert.deepEqual(await revisions(alpha, t1.id), [asRevision(t5), asRevision(t4), asRevision(t3), asRevision(t2), asRevision(t1)]);

    // Revert again, to a revision that itself came from a revert's source: fine, and again forward.
    const t7 = assertTimeline(await alpha.post(`${at(t1.id)}:revert`, { revision: 3 }, { 'If-Match': '6' }), 200);
    assert.equal(t7.revision, 7);
    assert.deepEqual(docOf(t7), docOf(t3));
    const t8 = assertTimeline(await alpha.post(`${at(t1.id)}:revert`, { revision: 1 }, { 'If-Match': '*' }), 200);
    assert.equal(t8.revision, 8);
    assert.deepEqual(docOf(t8), docOf(t1));
    assert.deepEqual((await revisions(alpha, t1.id)).map((r) => r.revision), [7, 6, 5, 4, 3, 2, 1]);
  });

  test('with gallery.read_all another studio\'s revisions can be read', async () => {
    const b = await createTimeline(beta, { name: 'b1' });
    const b2 = assertTimeline(await beta.patch(at(b.id), { name: 'b2' }, { 'If-Match': '1' }), 200);
    assert.equal(b2.revision, 2);
    assert.deepEqual(await revisions(alphaAll, b.id), [asRevision(b)]);
    assertError(await alpha.get(`${at(b.id)}/revisions`), 404, 'not_found');
    assertError(await alphaAll.post(`${at(b.id)}:revert`, { revision: 1 }, { 'If-Match': '2' }), 404, 'not_found');
    assert.equal(assertTimeline(await beta.get(at(b.id)), 200).revision, 2);
  });
});

describe('revert: errors', () => {
  let t: any;
  before(async () => {
    t = await createTimeline(alpha, { name: 'r1', clips: [{ asset_id: ids.video }] });
    t = assertTimeline(await alpha.patch(at(t.id), { name: 'r2' }, { 'If-Match': '1' }), 200);
    t = assertTimeline(await alpha.patch(at(t.id), { name: 'r3' }, { 'If-Match': '2' }), 200);
  });
  const revert = (body: unknown, headers?: Record<string, string>) => alpha.post(`${at(t.id)}:revert`, body, headers);
  const unchanged = async () => {
    assert.deepEqual(assertTimeline(await alpha.get(at(t.id)), 200), t);
    assert.deepEqual((await revisions(alpha, t.id)).map((r) => r.revision), [2, 1]);
  };

  test('without If-Match: 400 bad_request', async () => {
    assertError(await revert({ revision: 1 }), 400, 'bad_request');
    await unchanged();
  });
  test('a stale If-Match: 409 etag_mismatch (quoted and bare)', async () => {
    assertError(await revert({ revision: 1 }, { 'If-Match': '"2"' }), 409, 'etag_mismatch');
    assertError(await revert({ revision: 1 }, { 'If-Match': '4' }), 409, 'etag_mismatch');
    await unchanged();
  });
  test('a revision that never existed: 404', async () => {
    assertError(await revert({ revision: 99 }, { 'If-Match': '3' }), 404, 'not_found');
    await unchanged();
  });
  test('the current revision number: 404 (only replaced documents are revisions)', async () => {
    assertError(await revert({ revision: 3 }, { 'If-Match': '3' }), 404, 'not_found');
    await unchanged();
  });
  test('a stale If-Match is 409 even for an unknown revision (the precondition first)', async () => {
    assertError(await revert({ revision: 99 }, { 'If-Match': '1' }), 409, 'etag_mismatch');
  });
  for (const [name, body] of [
    ['revision 0', { revision: 0 }],
    ['a negative revision', { revision: -1 }],
    ['revision 1.5', { revision: 1.5 }],
    ['revision as a string', { revision: '1' }],
    ['no revision', {}],
    ['an unknown member', { revision: 1, name: 'x' }],
    ['an array', [1]],
  ] as [string, unknown][]) {
    test(`${name}: 400 bad_request`, async () => {
      assertError(await revert(body, { 'If-Match': '3' }), 400, 'bad_request');
      await unchanged();
    });
  }
  test('malformed JSON: 400', async () => {
    const res = await send(svc.port, { method: 'POST', path: `/api/v1${at(t.id)}:revert`, token: alphaToken, raw: '{"revision":', headers: { 'If-Match': '3' } });
    assertError(res, 400, 'bad_request');
    await unchanged();
  });
  test('an unknown sequence: 404', async () => {
    assertError(await alpha.post(`${at(UNKNOWN_ID)}:revert`, { revision: 1 }, { 'If-Match': '*' }), 404, 'not_found');
  });
});

describe('revision pages', () => {
  let id: string;
  before(async () => {
    id = (await createTimeline(alpha, { name: 'p0' })).id;
    for (let i = 1; i <= 6; i++) assertTimeline(await alpha.patch(at(id), { name: `p${i}` }, { 'If-Match': String(i) }), 200);
  });

  test('limit and cursor walk every revision once, newest first', async () => {
    for (const limit of [1, 2, 4, 6, 50]) {
      const all = await walk(alpha, `${at(id)}/revisions`, limit);
      assert.deepEqual(all.map((r) => r.revision), [6, 5, 4, 3, 2, 1], `limit ${limit}`);
      assert.deepEqual(all.map((r) => r.name), ['p5', 'p4', 'p3', 'p2', 'p1', 'p0']);
    }
  });

  test('a cursor stays valid while writes add revisions', async () => {
    const other = (await createTimeline(alpha, { name: 'q0' })).id;
    for (let i = 1; i <= 3; i++) assertTimeline(await alpha.patch(at(other), { name: `q${i}` }, { 'If-Match': String(i) }), 200);
    const first = await alpha.get(`${at(other)}/revisions?limit=1`);
    assert.deepEqual(first.json.items.map((r: any) => r.revision), [3]);
    assertTimeline(await alpha.patch(at(other), { name: 'q4' }, { 'If-Match': '4' }), 200);
    const next = await alpha.get(`${at(other)}/revisions?limit=10&cursor=${encodeURIComponent(first.json.next_cursor)}`);
    assert.deepEqual(next.json.items.map((r: any) => r.revision), [2, 1]);
  });

  test('bad cursors and limits: 400', async () => {
    const cursor = (await alpha.get(`${at(id)}/revisions?limit=1`)).json.next_cursor as string;
    const other = (await createTimeline(alpha, { name: 'other' })).id;
    await alpha.patch(at(other), { name: 'other 2' }, { 'If-Match': '1' });
    await alpha.patch(at(other), { name: 'other 3' }, { 'If-Match': '2' });
    const otherCursor = (await alpha.get(`${at(other)}/revisions?limit=1`)).json.next_cursor as string;
    const listCursor = (await alpha.get('/timeline?limit=1')).json.next_cursor as string;
    assert.equal(typeof otherCursor, 'string');
    assert.equal(typeof listCursor, 'string');
    const q = (c: string, seq = id) => `${at(seq)}/revisions?cursor=${encodeURIComponent(c)}`;
    assertError(await alpha.get(q('garbage')), 400, 'bad_cursor');
    assertError(await alpha.get(q(otherCursor)), 400, 'bad_cursor');
    assertError(await alpha.get(q(cursor, other)), 400, 'bad_cursor');
    assertError(await alpha.get(q(listCursor)), 400, 'bad_cursor');
    assertError(await alpha.get(`${at(id)}/revisions?limit=0`), 400, 'bad_request');
    assertError(await alpha.get(`${at(id)}/revisions?limit=501`), 400, 'bad_request');
    assertError(await alpha.get(`${at(id)}/revisions?limit=x`), 400, 'bad_request');
    assertError(await alpha.get(`${at(id)}/revisions?after=1`), 400, 'bad_request');
    assert.equal((await alpha.get(q(cursor))).status, 200);
  });
});

describe('the newest 100 are kept', () => {
  test('after 105 writes the revisions are 5..104; 4 is gone (revert 404); a revert then trims one more', async () => {
    const id = (await createTimeline(alpha, { name: 'w1', clips: [{ asset_id: ids.audio }] })).id;
    for (let r = 1; r < 105; r++) {
      const res = await alpha.patch(at(id), { name: `w${r + 1}` }, { 'If-Match': String(r) });
      assert.equal(res.status, 200, res.text);
    }
    const current = assertTimeline(await alpha.get(at(id)), 200);
    assert.equal(current.revision, 105);
    assert.equal(current.name, 'w105');
    const list = await revisions(alpha, id);
    assert.equal(list.length, 100);
    assert.deepEqual(list.map((r) => r.revision), Array.from({ length: 100 }, (_, i) => 104 - i));
    assert.deepEqual(list.map((r) => r.name), Array.from({ length: 100 }, (_, i) => `w${104 - i}`));
    const paged = await walk(alpha, `${at(id)}/revisions`, 30);
    assert.deepEqual(paged.map((r) => r.revision), list.map((r) => r.revision));

    // Trimmed ones cannot be reverted to; the oldest kept one can.
    assertError(await alpha.post(`${at(id)}:revert`, { revision: 4 }, { 'If-Match': '105' }), 404, 'not_found');
    assertError(await alpha.post(`${at(id)}:revert`, { revision: 1 }, { 'If-Match': '105' }), 404, 'not_found');
    const reverted = assertTimeline(await alpha.post(`${at(id)}:revert`, { revision: 5 }, { 'If-Match': '105' }), 200);
    assert.equal(reverted.revision, 106);
    assert.equal(reverted.name, 'w5');
    const after = await revisions(alpha, id);
    assert.equal(after.length, 100);
    assert.deepEqual(after.map((r) => r.revision), Array.from({ length: 100 }, (_, i) => 105 - i));
    assert.equal(after[0].name, 'w105');
    assertError(await alpha.post(`${at(id)}:revert`, { revision: 5 }, { 'If-Match': '106' }), 404, 'not_found');
  });
});
