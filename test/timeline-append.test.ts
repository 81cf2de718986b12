import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { client, send } from './helpers/http';
import { assertError } from './helpers/scenario';
import { startService, type TestService } from './helpers/service';
import { assertTimeline, clip, createTimeline, newAsset, problems, realAsset, UNKNOWN_ID, where, type Client } from './helpers/timeline';

/**
 * POST /timeline:append (docs/api.md "Append `POST /timeline:append`"):
 * one asset at the end of a track, of `timeline_id` or of the caller's most
 * recently updated live sequence; no If-Match; 409 `no_timeline` when the
 * caller owns none (deleted ones do not count).
 */

let svc: TestService;
let alpha: Client;
let alphaAll: Client;
let beta: Client;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};

before(async () => {
  svc = await startService();
  tokens.alpha = svc.studio('alpha', ['timeline', 'assets']);
  tokens.beta = svc.studio('beta', ['timeline', 'assets']);
  tokens.alphaAll = svc.token('alpha', ['timeline', 'gallery.read_all']);
  tokens.solo = svc.studio('solo', ['timeline', 'assets']);
  tokens.gone = svc.studio('gone', ['timeline', 'assets']);
  alpha = client(svc.port, tokens.alpha);
  alphaAll = client(svc.port, tokens.alphaAll);
  beta = client(svc.port, tokens.beta);
  const port = svc.port;
  ids.video5 = (await newAsset(port, tokens.alpha, 'video', { duration_s: 5 })).id;
  ids.video10 = (await newAsset(port, tokens.alpha, 'video', { duration_s: 10 })).id;
  ids.audio4 = (await newAsset(port, tokens.alpha, 'audio', { duration_s: 4 })).id;
  ids.image = (await newAsset(port, tokens.alpha, 'image')).id;
  ids.other = (await newAsset(port, tokens.alpha, 'other')).id;
  ids.noLen = (await newAsset(port, tokens.alpha, 'video')).id;
  ids.betaVideo = (await newAsset(port, tokens.beta, 'video', { duration_s: 5 })).id;
  ids.soloVideo = (await newAsset(port, tokens.solo, 'video', { duration_s: 5 })).id;
  ids.goneVideo = (await newAsset(port, tokens.gone, 'video', { duration_s: 5 })).id;
});

after(async () => {
  await svc?.stop();
});

const append = (body: Record<string, unknown>, c: Client = alpha) => c.post('/timeline:append', body);
const get = async (id: string) => assertTimeline(await alpha.get(`/timeline/${id}`), 200);

describe('append to timeline_id', () => {
  test('default track by kind (video and images V1, sound A1), at the end of the track; revision + 1; no If-Match', async () => {
    const t = await createTimeline(alpha, { name: 'append', tracks: { V1: [{ asset_id: ids.video5, start: 0 }] } });
    const steps: [Record<string, unknown>, string, unknown][] = [
      [{ asset_id: ids.video10 }, 'V1', clip(ids.video10!, 5, 10)],
      [{ asset_id: ids.image }, 'V1', clip(ids.image!, 15, 5)],
      [{ asset_id: ids.audio4 }, 'A1', clip(ids.audio4!, 0, 4)],
      [{ asset_id: ids.audio4, in: 1, duration: 2 }, 'A1', clip(ids.audio4!, 4, 2, { in: 1 })],
      [{ asset_id: ids.audio4, track: 'A2' }, 'A2', clip(ids.audio4!, 0, 4)],
      [{ asset_id: ids.video5, track: 'V2', in: 2 }, 'V2', clip(ids.video5!, 0, 3, { in: 2 })],
      [{ asset_id: ids.image, track: 'V2', duration: 1 }, 'V2', clip(ids.image!, 3, 1)],
      [{ asset_id: ids.video5, duration: 7 }, 'V1', clip(ids.video5!, 20, 7)], // past its source: a hold
    ];
    let previous = t;
    for (const [body, track, expected] of steps) {
      const res = await append({ ...body, timeline_id: t.id });
      const u = assertTimeline(res, 200);
      assert.equal(u.revision, previous.revision + 1, JSON.stringify(body));
      assert.equal(res.headers.etag, `"${u.revision}"`);
      assert.deepEqual(u.tracks[track].at(-1), expected, JSON.stringify(body));
      // Only that track changed.
      for (const name of Object.keys(previous.tracks)) if (name !== track) assert.deepEqual(u.tracks[name], previous.tracks[name]);
      assert.equal(u.name, 'append');
      assert.deepEqual(await get(t.id), u);
      previous = u;
    }
    assert.equal(previous.duration, 27);
    assert.equal(previous.tracks.V1.length, 4);
  });

  test('the end of the track is the end of its last clip, after a gap, at the target\'s rate', async () => {
    const t = await createTimeline(alpha, {
      name: 'gap',
      target: { fps: 29.97 },
      tracks: { V1: [{ asset_id: ids.image, start: 10, duration: 1 }, { asset_id: ids.image, start: 0, duration: 1 }], A1: [{ asset_id: ids.audio4, start: 30 }] },
    });
    const u = assertTimeline(await append({ asset_id: ids.video5, timeline_id: t.id }), 200);
    // 10 s → 300 frames (10.01 s); 1 s → 30 frames: the track ends at 330 frames = 11.011 s. 5 s = 150 frames = 5.005 s.
    assert.deepEqual(u.tracks.V1.at(-1), clip(ids.video5!, (330 * 1001) / 30000, (150 * 1001) / 30000));
    const v = assertTimeline(await append({ asset_id: ids.audio4, timeline_id: t.id, duration: 0.51 }), 200);
    assert.deepEqual(v.tracks.A1.at(-1), clip(ids.audio4!, 34, 0.51));
    const w = assertTimeline(await append({ asset_id: ids.image, timeline_id: t.id, duration: 0.51 }), 200);
    // 0.51 s at 29.97 fps is 15.28 frames → 15.
    assert.deepEqual(w.tracks.V1.at(-1), clip(ids.image!, (480 * 1001) / 30000, (15 * 1001) / 30000));
  });

  test('appending to an empty sequence starts at 0; a probed length is used when the asset has no duration_s', async () => {
    const audio = await realAsset(svc.port, tokens.alpha!, 'audio', 1.5);
    const t = await createTimeline(alpha, { name: 'empty' });
    const u = assertTimeline(await append({ asset_id: audio.id, timeline_id: t.id }), 200);
    assert.deepEqual(u.tracks, { A1: [clip(audio.id, 0, 1.5)] });
    const v = assertTimeline(await append({ asset_id: audio.id, timeline_id: t.id, in: 0.5 }), 200);
    assert.deepEqual(v.tracks.A1, [clip(audio.id, 0, 1.5), clip(audio.id, 1.5, 1, { in: 0.5 })]);
    assert.equal(v.duration, 2.5);
  });

  test('422 invalid_timeline: wrong kind for the track, unreadable or other assets, bad times; nothing written', async () => {
    const t = await createTimeline(alpha, { name: 'refusals', tracks: { V1: [{ asset_id: ids.video5, start: 0 }], A1: [{ asset_id: ids.audio4, start: 0 }] } });
    const rows: [string, Record<string, unknown>, string[]][] = [
      ['audio on V1', { asset_id: ids.audio4, track: 'V1' }, ['V1:1']],
      ['video on A1', { asset_id: ids.video5, track: 'A1' }, ['A1:1']],
      ['an image on A2', { asset_id: ids.image, track: 'A2' }, ['A2:0']],
      ['an asset of kind other', { asset_id: ids.other }, ['V1:1']],
      ['an asset of kind other on A1', { asset_id: ids.other, track: 'A1', duration: 1 }, ['A1:1']],
      ['an unknown asset', { asset_id: UNKNOWN_ID }, ['V1:1']],
      ["another studio's asset", { asset_id: ids.betaVideo }, ['V1:1']],
      ["another studio's asset on A1", { asset_id: ids.betaVideo, track: 'A1' }, ['A1:1']],
      ['in at the source\'s end', { asset_id: ids.video5, in: 5 }, ['V1:1']],
      ['an image with in > 0', { asset_id: ids.image, in: 1 }, ['V1:1']],
      ['a duration under one frame', { asset_id: ids.video5, duration: 0.01 }, ['V1:1']],
      ['a duration under one sample', { asset_id: ids.audio4, duration: 0.00001 }, ['A1:1']],
      ['an unknown length and no duration', { asset_id: ids.noLen }, ['V1:1']],
    ];
    for (const [name, body, expected] of rows) {
      assert.deepEqual(where(await append({ ...body, timeline_id: t.id })), expected, name);
    }
    assert.deepEqual(await get(t.id), t);
    assert.deepEqual((await alpha.get(`/timeline/${t.id}/revisions`)).json.items, []);
    // The same words for an unknown asset and another studio's.
    const a = await append({ asset_id: UNKNOWN_ID, timeline_id: t.id });
    const b = await append({ asset_id: ids.betaVideo, timeline_id: t.id });
    assert.equal(a.json.message.split(UNKNOWN_ID).join('<id>'), b.json.message.split(ids.betaVideo!).join('<id>'));
    assert.equal(problems(a)[0]!.reason.split(UNKNOWN_ID).join('<id>'), problems(b)[0]!.reason.split(ids.betaVideo!).join('<id>'));
    // With a duration the unknown length is fine.
    assert.deepEqual(assertTimeline(await append({ asset_id: ids.noLen, timeline_id: t.id, duration: 2 }), 200).tracks.V1.at(-1), clip(ids.noLen!, 5, 2));
  });

  test('concurrent appends each apply to the current revision: none lost, end to end', async () => {
    const t = await createTimeline(alpha, { name: 'concurrent' });
    const answers = await Promise.all(Array.from({ length: 8 }, () => append({ asset_id: ids.video5, timeline_id: t.id, duration: 1 })));
    assert.ok(answers.every((r) => r.status === 200), answers.map((r) => r.text).join('\n'));
    assert.deepEqual(answers.map((r) => r.json.revision).sort((a, b) => a - b), [2, 3, 4, 5, 6, 7, 8, 9]);
    const u = await get(t.id);
    assert.equal(u.revision, 9);
    assert.deepEqual(u.tracks.V1.map((c: any) => c.start), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal((await alpha.get(`/timeline/${t.id}/revisions`)).json.items.length, 8);
  });

  test('400 bad_request for a body of the wrong shape; nothing written', async () => {
    const t = await createTimeline(alpha, { name: 'bad bodies' });
    const bodies: [string, unknown][] = [
      ['no asset_id', { timeline_id: t.id }],
      ['asset_id a number', { asset_id: 1, timeline_id: t.id }],
      ['an unknown member', { asset_id: ids.video5, timeline_id: t.id, start: 0 }],
      ['a transition', { asset_id: ids.video5, timeline_id: t.id, transition: { kind: 'crossfade', duration: 1 } }],
      ['track V0', { asset_id: ids.video5, timeline_id: t.id, track: 'V0' }],
      ['track X1', { asset_id: ids.video5, timeline_id: t.id, track: 'X1' }],
      ['track v1', { asset_id: ids.video5, timeline_id: t.id, track: 'v1' }],
      ['track V10', { asset_id: ids.video5, timeline_id: t.id, track: 'V10' }],
      ['a negative in', { asset_id: ids.video5, timeline_id: t.id, in: -1 }],
      ['a negative duration', { asset_id: ids.video5, timeline_id: t.id, duration: -1 }],
      ['a duration over 360000 s', { asset_id: ids.video5, timeline_id: t.id, duration: 360_001 }],
      ['timeline_id a number', { asset_id: ids.video5, timeline_id: 5 }],
      ['timeline_id null', { asset_id: ids.video5, timeline_id: null }],
      ['an array', [{ asset_id: ids.video5 }]],
    ];
    for (const [name, body] of bodies) assert.equal((await alpha.post('/timeline:append', body)).json?.code, 'bad_request', name);
    const raw = await send(svc.port, { method: 'POST', path: '/api/v1/timeline:append', token: tokens.alpha, raw: '{"asset_id":' });
    assertError(raw, 400, 'bad_request');
    assert.deepEqual(await get(t.id), t);
  });

  test('a sequence holds at most 5000 clips over all its tracks: an append past that is 400', async () => {
    const t = await createTimeline(alpha, { name: 'full', clips: Array.from({ length: 5000 }, () => ({ asset_id: ids.image, duration: 0.04 })) });
    assertError(await append({ asset_id: ids.image, timeline_id: t.id }), 400, 'bad_request');
    assertError(await append({ asset_id: ids.audio4, timeline_id: t.id }), 400, 'bad_request');
    assertError(await append({ asset_id: ids.video5, timeline_id: t.id, track: 'V2' }), 400, 'bad_request');
    assert.equal((await get(t.id)).revision, 1);
  });
});

describe('append without timeline_id: the most recently updated own live sequence', () => {
  test('not the newest created: an older one written since wins; every kind of write counts; deleted ones do not', async () => {
    const s1 = await createTimeline(alpha, { name: 's1' });
    const s2 = await createTimeline(alpha, { name: 's2' });
    const tracksOf = async (id: string) => (await get(id)).tracks;

    // Newest created and written: s2.
    assert.equal(assertTimeline(await append({ asset_id: ids.image }), 200).id, s2.id);
    // s1 written by PATCH since: s1.
    assertTimeline(await alpha.patch(`/timeline/${s1.id}`, { name: 's1 edited' }, { 'If-Match': '1' }), 200);
    assert.equal(assertTimeline(await append({ asset_id: ids.image }), 200).id, s1.id);
    // An append with timeline_id is a write too.
    assertTimeline(await append({ asset_id: ids.image, timeline_id: s2.id }), 200);
    assert.equal(assertTimeline(await append({ asset_id: ids.audio4 }), 200).id, s2.id);
    // So is a revert.
    assertTimeline(await alpha.post(`/timeline/${s1.id}:revert`, { revision: 1 }, { 'If-Match': '3' }), 200);
    assert.equal(assertTimeline(await append({ asset_id: ids.audio4 }), 200).id, s1.id);
    // Another studio's writes and a read_all token change nothing: alpha's own sequences only.
    const b = await createTimeline(beta, { name: 'beta newest' });
    assertTimeline(await beta.patch(`/timeline/${b.id}`, { name: 'beta newest 2' }, { 'If-Match': '1' }), 200);
    assert.equal(assertTimeline(await append({ asset_id: ids.video5 }, alphaAll), 200).id, s1.id);
    assert.equal((await beta.get(`/timeline/${b.id}`)).json.revision, 2);
    // A failed append is no write: s2 written, then a refused no-id append, then s2 still the target.
    assertTimeline(await append({ asset_id: ids.image, timeline_id: s2.id }), 200);
    assert.deepEqual(where(await append({ asset_id: ids.other })), [`V1:${(await tracksOf(s2.id)).V1.length}`]);
    assert.equal(assertTimeline(await append({ asset_id: ids.image }), 200).id, s2.id);
    // Deleting the most recently written one: the next most recent.
    assert.equal((await alpha.delete(`/timeline/${s2.id}`)).status, 204);
    assert.equal(assertTimeline(await append({ asset_id: ids.image }), 200).id, s1.id);
    // A create counts as a write.
    const s3 = await createTimeline(alpha, { name: 's3' });
    const u = assertTimeline(await append({ asset_id: ids.video5 }), 200);
    assert.equal(u.id, s3.id);
    assert.deepEqual(u.tracks, { V1: [clip(ids.video5!, 0, 5)] });
    assert.equal(u.revision, 2);
  });

  test('409 no_timeline when the caller owns no sequence, or only deleted ones', async () => {
    const solo = client(svc.port, tokens.solo);
    assertError(await append({ asset_id: ids.soloVideo }, solo), 409, 'no_timeline');
    // Another studio's sequences are not the caller's.
    assertError(await append({ asset_id: ids.soloVideo }, solo), 409, 'no_timeline');
    const gone = client(svc.port, tokens.gone);
    const g1 = await createTimeline(gone, { name: 'g1' });
    const g2 = await createTimeline(gone, { name: 'g2' });
    assert.equal((await gone.delete(`/timeline/${g1.id}`)).status, 204);
    assert.equal((await gone.delete(`/timeline/${g2.id}`)).status, 204);
    assertError(await append({ asset_id: ids.goneVideo }, gone), 409, 'no_timeline');
    // 409 before 422: which asset is named does not matter when there is no sequence.
    assertError(await append({ asset_id: UNKNOWN_ID }, gone), 409, 'no_timeline');
    // A new one is found again.
    const g3 = await createTimeline(gone, { name: 'g3' });
    assert.equal(assertTimeline(await append({ asset_id: ids.goneVideo }, gone), 200).id, g3.id);
  });
});
