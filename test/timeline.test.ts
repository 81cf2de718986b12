import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { client, send } from './helpers/http';
import { assertError, runScenarios, type Scenario, type ScenarioEnv } from './helpers/scenario';
import { startService, type TestService } from './helpers/service';
import {
  assertTimeline,
  clip,
  createTimeline,
  DEFAULT_TARGET,
  MERGE,
  newAsset,
  problems,
  realAsset,
  UNKNOWN_ID,
  walk,
  where,
  type Client,
} from './helpers/timeline';

/**
 * Timelines, black box (docs/api.md "Timeline"):
 * tokens and capabilities, who sees what, create (both forms, defaults, every
 * 422 and 400), PATCH, DELETE and the list. Snapping: timeline-snap.test.ts;
 * revisions and revert: timeline-revisions.test.ts; append:
 * timeline-append.test.ts; reclaim: timeline-reclaim.test.ts.
 */

const BODY_LIMIT = 1_000_000;

let svc: TestService;
let env: ScenarioEnv & { ids: Record<string, string> };
let alpha: Client;
let alphaAll: Client;
let beta: Client;
let gamma: Client;
const ids: Record<string, string> = {};

before(async () => {
  svc = await startService({ args: ['--body-limit', String(BODY_LIMIT)] });
  const tokens: Record<string, string> = {
    alpha: svc.studio('alpha', ['timeline', 'assets']),
    beta: svc.studio('beta', ['timeline', 'assets']),
    gamma: svc.studio('gamma', ['timeline']),
  };
  tokens.alphaAll = svc.token('alpha', ['timeline', 'gallery.read_all']);
  tokens.noTimeline = svc.token('alpha', ['kv', 'records', 'gallery', 'gallery.read_all', 'assets', 'jobs']);
  tokens.revoked = svc.token('alpha', ['timeline']);
  assert.equal(svc.cli(['token', 'revoke', tokens.revoked]).code, 0);
  alpha = client(svc.port, tokens.alpha);
  alphaAll = client(svc.port, tokens.alphaAll);
  beta = client(svc.port, tokens.beta);
  gamma = client(svc.port, tokens.gamma);

  const port = svc.port;
  ids.video5 = (await newAsset(port, tokens.alpha!, 'video', { duration_s: 5 })).id;
  ids.video10 = (await newAsset(port, tokens.alpha!, 'video', { duration_s: 10 })).id;
  ids.audio4 = (await newAsset(port, tokens.alpha!, 'audio', { duration_s: 4 })).id;
  ids.image = (await newAsset(port, tokens.alpha!, 'image')).id;
  ids.other = (await newAsset(port, tokens.alpha!, 'other')).id;
  // Garbage bytes with no hint: ffprobe cannot measure them, so the length is unknown.
  ids.noLen = (await newAsset(port, tokens.alpha!, 'video')).id;
  ids.betaVideo = (await newAsset(port, tokens.beta!, 'video', { duration_s: 5 })).id;
  // Referenced once by a sequence, which is then deleted: reclaimable, and reclaimed.
  ids.reclaimed = (await newAsset(port, tokens.alpha!, 'video', { duration_s: 5 })).id;
  const holder = await createTimeline(alpha, { name: 'holder', clips: [{ asset_id: ids.reclaimed }] });
  assert.equal((await alpha.delete(`/timeline/${holder.id}`)).status, 204);
  const preview = await alpha.post('/assets:reclaim', { asset_ids: [ids.reclaimed] });
  assert.equal(preview.status, 200, preview.text);
  const done = await alpha.post('/assets:reclaim', { asset_ids: [ids.reclaimed], confirm: preview.json.preview });
  assert.deepEqual(done.json.reclaimed, [ids.reclaimed], done.text);

  ids.seq = (await createTimeline(alpha, { name: 'capability target', tracks: { V1: [{ asset_id: ids.video5, start: 0 }] } })).id;
  ids.betaSeq = (await createTimeline(beta, { name: 'beta only' })).id;
  ids.deleted = (await createTimeline(alpha, { name: 'deleted' })).id;
  assert.equal((await alpha.delete(`/timeline/${ids.deleted}`)).status, 204);
  env = { port, tokens, ids };
});

after(async () => {
  await svc?.stop();
});

// ---------------------------------------------------------------------------
describe('token and capability (capability timeline on every route)', () => {
  const endpoints: Pick<Scenario, 'method' | 'path' | 'body' | 'contentType' | 'headers'>[] = [
    { method: 'GET', path: '/timeline' },
    { method: 'POST', path: '/timeline', body: { name: 'refused' } },
    { method: 'GET', path: (e) => `/timeline/${e.ids!.seq}` },
    { method: 'PATCH', path: (e) => `/timeline/${e.ids!.seq}`, body: { name: 'refused' }, contentType: MERGE, headers: { 'If-Match': '*' } },
    { method: 'DELETE', path: (e) => `/timeline/${e.ids!.seq}` },
    { method: 'GET', path: (e) => `/timeline/${e.ids!.seq}/revisions` },
    { method: 'POST', path: (e) => `/timeline/${e.ids!.seq}:revert`, body: { revision: 1 }, headers: { 'If-Match': '*' } },
    { method: 'GET', path: (e) => `/timeline/${e.ids!.seq}:plan` },
    { method: 'POST', path: (e) => `/timeline/${e.ids!.seq}:open` },
    { method: 'POST', path: '/timeline:append', body: { asset_id: UNKNOWN_ID } },
  ];
  const label = (e: (typeof endpoints)[number]) =>
    `${e.method} ${typeof e.path === 'string' ? e.path : e.path({ port: 0, tokens: {}, ids: { seq: '{id}' } })}`;
  const rows: Scenario[] = endpoints.flatMap((e) => [
    { ...e, name: `${label(e)} without a token: 401`, expectStatus: 401, expectCode: 'unauthenticated' },
    { ...e, name: `${label(e)} with an unknown token: 401`, token: 'not-a-token', expectStatus: 401, expectCode: 'unauthenticated' },
    { ...e, name: `${label(e)} with a revoked token: 401`, as: 'revoked', expectStatus: 401, expectCode: 'unauthenticated' },
    {
      ...e,
      name: `${label(e)} without timeline (every other capability): 403 naming timeline`,
      as: 'noTimeline',
      expectStatus: 403,
      expectCode: 'capability_required',
      expectDetails: { capability: 'timeline' },
    },
  ]);
  rows.push(
    { name: 'the capability is checked before the body', method: 'POST', path: '/timeline', as: 'noTimeline', raw: '{', expectStatus: 403, expectCode: 'capability_required' },
    { name: 'the capability is checked before existence', path: `/timeline/${UNKNOWN_ID}`, as: 'noTimeline', expectStatus: 403, expectCode: 'capability_required' },
    { name: 'the capability is checked before the query', path: '/timeline?limit=0', as: 'noTimeline', expectStatus: 403, expectCode: 'capability_required' },
  );
  runScenarios(() => env, rows);

  test('refused requests changed nothing', async () => {
    const t = assertTimeline(await alpha.get(`/timeline/${ids.seq}`), 200);
    assert.equal(t.revision, 1);
    assert.equal(t.name, 'capability target');
    assert.ok(!(await walk(alpha, '/timeline', 500)).some((s) => s.name === 'refused'));
  });
});

// ---------------------------------------------------------------------------
describe("who sees what: another studio's sequence, deleted and unknown ones", () => {
  const seqOf = (key: string) => (e: ScenarioEnv) => `/timeline/${e.ids![key]}`;
  const writes = (key: string, as: string, why: string): Scenario[] => [
    { name: `PATCH ${why}: 404`, method: 'PATCH', path: seqOf(key), as, body: { name: 'stolen' }, contentType: MERGE, headers: { 'If-Match': '*' }, expectStatus: 404, expectCode: 'not_found' },
    { name: `PATCH ${why} with a bad body: 404 before 400`, method: 'PATCH', path: seqOf(key), as, body: { nope: 1 }, contentType: MERGE, headers: { 'If-Match': '*' }, expectStatus: 404, expectCode: 'not_found' },
    { name: `PATCH ${why} without If-Match: 404 before 400`, method: 'PATCH', path: seqOf(key), as, body: { name: 'x' }, contentType: MERGE, expectStatus: 404, expectCode: 'not_found' },
    { name: `DELETE ${why}: 404`, method: 'DELETE', path: seqOf(key), as, expectStatus: 404, expectCode: 'not_found' },
    { name: `DELETE ${why} with a stale If-Match: 404 before 409`, method: 'DELETE', path: seqOf(key), as, headers: { 'If-Match': '"99"' }, expectStatus: 404, expectCode: 'not_found' },
    { name: `:revert ${why}: 404`, method: 'POST', path: (e) => `${seqOf(key)(e)}:revert`, as, body: { revision: 1 }, headers: { 'If-Match': '*' }, expectStatus: 404, expectCode: 'not_found' },
    { name: `:open ${why}: 404`, method: 'POST', path: (e) => `${seqOf(key)(e)}:open`, as, expectStatus: 404, expectCode: 'not_found' },
  ];
  const reads = (key: string, as: string, why: string): Scenario[] => [
    { name: `GET ${why}: 404`, path: seqOf(key), as, expectStatus: 404, expectCode: 'not_found' },
    { name: `revisions of ${why}: 404`, path: (e) => `${seqOf(key)(e)}/revisions`, as, expectStatus: 404, expectCode: 'not_found' },
    { name: `revisions of ${why} with a bad limit: 400 (the query is checked first)`, path: (e) => `${seqOf(key)(e)}/revisions?limit=0`, as, expectStatus: 400, expectCode: 'bad_request' },
    { name: `:plan of ${why}: 404`, path: (e) => `${seqOf(key)(e)}:plan`, as, expectStatus: 404, expectCode: 'not_found' },
  ];
  describe('without gallery.read_all', () => {
    runScenarios(() => env, [
      ...reads('betaSeq', 'alpha', "another studio's sequence"),
      ...writes('betaSeq', 'alpha', "another studio's sequence"),
      ...reads('deleted', 'alpha', 'a deleted sequence'),
      ...writes('deleted', 'alpha', 'a deleted sequence'),
      ...reads('deleted', 'alphaAll', 'a deleted sequence (with gallery.read_all)'),
      { name: 'GET an unknown id: 404', path: `/timeline/${UNKNOWN_ID}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
      { name: 'GET an id of no ULID form: 404', path: '/timeline/nope', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
      { name: 'PATCH an unknown id: 404', method: 'PATCH', path: `/timeline/${UNKNOWN_ID}`, as: 'alpha', body: { name: 'x' }, contentType: MERGE, headers: { 'If-Match': '*' }, expectStatus: 404, expectCode: 'not_found' },
      { name: 'DELETE an unknown id: 404', method: 'DELETE', path: `/timeline/${UNKNOWN_ID}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
      { name: 'revisions of an unknown id: 404', path: `/timeline/${UNKNOWN_ID}/revisions`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
      { name: ':revert of an unknown id: 404', method: 'POST', path: `/timeline/${UNKNOWN_ID}:revert`, as: 'alpha', body: { revision: 1 }, headers: { 'If-Match': '*' }, expectStatus: 404, expectCode: 'not_found' },
      { name: ':append to an unknown timeline_id: 404', method: 'POST', path: '/timeline:append', as: 'alpha', body: { asset_id: UNKNOWN_ID, timeline_id: UNKNOWN_ID }, expectStatus: 404, expectCode: 'not_found' },
    ]);
  });

  describe('with gallery.read_all: reads work, writes stay 404', () => {
    runScenarios(() => env, [
      { name: "GET another studio's sequence: 200", path: seqOf('betaSeq'), as: 'alphaAll', expectStatus: 200, expectJson: { studio_id: 'beta', name: 'beta only', revision: 1 } },
      { name: "revisions of another studio's sequence: 200", path: (e) => `${seqOf('betaSeq')(e)}/revisions`, as: 'alphaAll', expectStatus: 200, expectJson: { items: [], next_cursor: null } },
      // Readable: the plan gets past visibility and answers about the sequence itself (it has no video clip).
      { name: ":plan of another studio's sequence: not 404 (422, no video clip)", path: (e) => `${seqOf('betaSeq')(e)}:plan`, as: 'alphaAll', expectStatus: 422, expectCode: 'invalid_timeline' },
      ...writes('betaSeq', 'alphaAll', "another studio's sequence with gallery.read_all"),
    ]);
    test("another studio's sequence is unchanged by the refused writes", async () => {
      const t = assertTimeline(await beta.get(`/timeline/${ids.betaSeq}`), 200);
      assert.equal(t.revision, 1);
      assert.equal(t.name, 'beta only');
      assert.deepEqual((await beta.get(`/timeline/${ids.betaSeq}/revisions`)).json.items, []);
    });
  });

  test(':append naming another studio\'s or a deleted timeline_id: 404, with or without gallery.read_all', async () => {
    for (const c of [alpha, alphaAll]) {
      for (const key of ['betaSeq', 'deleted']) {
        assertError(await c.post('/timeline:append', { asset_id: ids.video5, timeline_id: ids[key] }), 404, 'not_found');
        // 404 before 422: an unreadable asset does not change the answer.
        assertError(await c.post('/timeline:append', { asset_id: UNKNOWN_ID, timeline_id: ids[key] }), 404, 'not_found');
      }
    }
    assert.equal((await beta.get(`/timeline/${ids.betaSeq}`)).json.revision, 1);
  });
});

// ---------------------------------------------------------------------------
describe('create', () => {
  test('clips are laid end to end per track from 0: video and images on V1, sound on A1; defaults; 201 = GET', async () => {
    const res = await alpha.post('/timeline', {
      name: 'laid out',
      clips: [
        { asset_id: ids.video5 },
        { asset_id: ids.audio4 },
        { asset_id: ids.image },
        { asset_id: ids.video10, in: 2, duration: 3 },
        { asset_id: ids.audio4, duration: 1 },
        { asset_id: ids.video10, in: 2.5 },
        { asset_id: ids.image, duration: 2 },
      ],
    });
    const t = assertTimeline(res, 201);
    assert.equal(res.headers.etag, '"1"');
    assert.equal(t.revision, 1);
    assert.equal(t.studio_id, 'alpha');
    assert.equal(t.name, 'laid out');
    assert.deepEqual(t.target, DEFAULT_TARGET);
    assert.equal(t.created_at, t.updated_at);
    assert.deepEqual(t.tracks, {
      V1: [
        clip(ids.video5!, 0, 5),
        clip(ids.image!, 5, 5), // an image lasts 5 s by default
        clip(ids.video10!, 10, 3, { in: 2 }),
        clip(ids.video10!, 13, 7.5, { in: 2.5 }), // default duration: the source's length minus in
        clip(ids.image!, 20.5, 2),
      ],
      A1: [clip(ids.audio4!, 0, 4), clip(ids.audio4!, 4, 1)],
    });
    assert.equal(t.duration, 22.5);
    const got = await alpha.get(`/timeline/${t.id}`);
    assert.equal(got.headers.etag, '"1"');
    assert.deepEqual(assertTimeline(got, 200), t);
  });

  test('A1 may end after V1: duration is the end of the last clip on any track', async () => {
    const t = await createTimeline(alpha, { name: 'sound longer', clips: [{ asset_id: ids.image, duration: 1 }, { asset_id: ids.audio4 }, { asset_id: ids.audio4 }] });
    assert.deepEqual(t.tracks, { V1: [clip(ids.image!, 0, 1)], A1: [clip(ids.audio4!, 0, 4), clip(ids.audio4!, 4, 4)] });
    assert.equal(t.duration, 8);
  });

  test('the tracks form: any V and A track, in and transitions, duration over every track', async () => {
    const t = await createTimeline(alpha, {
      name: 'tracks',
      target: { fps: 25 },
      tracks: {
        V2: [{ asset_id: ids.video5, start: 1 }],
        A2: [{ asset_id: ids.audio4, start: 0.5, in: 1 }],
        V1: [
          { asset_id: ids.image, start: 0, duration: 1 },
          { asset_id: ids.video10, start: 1, duration: 2, transition: { kind: 'crossfade', duration: 0.4 } },
        ],
        A9: [{ asset_id: ids.audio4, start: 2, duration: 1 }],
        V9: [],
      },
    });
    assert.deepEqual(t.target, { ...DEFAULT_TARGET, fps: 25 });
    assert.deepEqual(t.tracks.V1, [clip(ids.image!, 0, 1), clip(ids.video10!, 1, 2, { transition: 0.4 })]);
    assert.deepEqual(t.tracks.V2, [clip(ids.video5!, 1, 5)]);
    assert.deepEqual(t.tracks.A2, [clip(ids.audio4!, 0.5, 3, { in: 1 })]);
    assert.deepEqual(t.tracks.A9, [clip(ids.audio4!, 2, 1)]);
    assert.deepEqual(t.tracks.V9 ?? [], []);
    assert.equal(t.duration, 6);
    assert.deepEqual(assertTimeline(await alpha.get(`/timeline/${t.id}`), 200), t);
  });

  test('clips given out of order on a track are valid; they are shown by start', async () => {
    const t = await createTimeline(alpha, { name: 'out of order', tracks: { V1: [{ asset_id: ids.video5, start: 3 }, { asset_id: ids.image, start: 0, duration: 3 }] } });
    assert.deepEqual(t.tracks.V1, [clip(ids.image!, 0, 3), clip(ids.video5!, 3, 5)]);
    assert.equal(t.duration, 8);
  });

  test('neither clips nor tracks: an empty sequence with the default target', async () => {
    const t = await createTimeline(alpha, { name: 'empty' });
    assert.deepEqual(t.tracks, {});
    assert.equal(t.duration, 0);
    assert.deepEqual(t.target, DEFAULT_TARGET);
    assert.equal(t.revision, 1);
  });

  test('target members given are kept, the others default', async () => {
    const t = await createTimeline(alpha, { name: 'target', target: { sample_rate: 44100, width: 1280, height: 720 } });
    assert.deepEqual(t.target, { sample_rate: 44100, fps: 30, width: 1280, height: 720 });
    const u = await createTimeline(alpha, { name: 'fps', target: { fps: 29.97 } });
    assert.deepEqual(u.target, { ...DEFAULT_TARGET, fps: 29.97 });
  });

  test('a clip that touches the one before it is fine; clips and tracks never need the same start', async () => {
    const t = await createTimeline(alpha, { name: 'touch', tracks: { V1: [{ asset_id: ids.video5, start: 0, duration: 1 }, { asset_id: ids.video5, start: 1, duration: 1 }] } });
    assert.deepEqual(t.tracks.V1, [clip(ids.video5!, 0, 1), clip(ids.video5!, 1, 1)]);
    // They touch only after snapping at 30 fps: 0.99 and 1.01 both round to frame 30.
    const u = await createTimeline(alpha, { name: 'touch snapped', tracks: { V1: [{ asset_id: ids.video5, start: 0, duration: 0.99 }, { asset_id: ids.video5, start: 1.01, duration: 1 }] } });
    assert.deepEqual(u.tracks.V1, [clip(ids.video5!, 0, 1), clip(ids.video5!, 1, 1)]);
  });

  test('a clip may run past its source (a hold) when it starts inside it', async () => {
    const t = await createTimeline(alpha, { name: 'hold', tracks: { V1: [{ asset_id: ids.video5, start: 0, in: 4, duration: 3 }] } });
    assert.deepEqual(t.tracks.V1, [clip(ids.video5!, 0, 3, { in: 4 })]);
  });

  test('real media files: the default duration comes from a probe when the asset has no duration_s', async () => {
    const video = await realAsset(svc.port, env.tokens.alpha!, 'video', 2);
    const audio = await realAsset(svc.port, env.tokens.alpha!, 'audio', 1.5);
    const t = await createTimeline(alpha, { name: 'probed', clips: [{ asset_id: video.id }, { asset_id: audio.id }, { asset_id: video.id, in: 0.5 }] });
    assert.deepEqual(t.tracks, {
      V1: [clip(video.id, 0, 2), clip(video.id, 2, 1.5, { in: 0.5 })],
      A1: [clip(audio.id, 0, 1.5)],
    });
    assert.equal(t.duration, 3.5);
    // The tracks form measures the same way; `in` past the probed end is refused.
    const u = await createTimeline(alpha, { name: 'probed tracks', tracks: { A2: [{ asset_id: audio.id, start: 1 }] } });
    assert.deepEqual(u.tracks.A2, [clip(audio.id, 1, 1.5)]);
    assert.deepEqual(where(await alpha.post('/timeline', { name: 'x', tracks: { V1: [{ asset_id: video.id, start: 0, in: 2 }] } })), ['V1:0']);
  });

  test('5000 clips are accepted (laid end to end)', async () => {
    const clips = Array.from({ length: 5000 }, () => ({ asset_id: ids.image, duration: 0.04 }));
    const t = await createTimeline(alpha, { name: 'five thousand', clips });
    assert.equal(t.tracks.V1.length, 5000);
    // 0.04 s is one frame at 30 fps: each next clip starts one frame later.
    assert.deepEqual(t.tracks.V1[4999], clip(ids.image!, 4999 / 30, 1 / 30));
    assert.equal(t.duration, 5000 / 30);
  });
});

// ---------------------------------------------------------------------------
describe('create: 422 invalid_timeline names every clip with its problem', () => {
  const refused = (tracks: Record<string, unknown[]>, target?: Record<string, unknown>) =>
    alpha.post('/timeline', { name: 'refused', tracks, ...(target ? { target } : {}) });
  const v = (key: string, start: number, more: Record<string, unknown> = {}) => ({ asset_id: ids[key] ?? key, start, ...more });
  const rows: [string, () => Promise<any>, string[]][] = [
    ['an unknown asset', () => refused({ V1: [v(UNKNOWN_ID, 0, { duration: 1 })] }), ['V1:0']],
    ["another studio's asset", () => refused({ V1: [v('video5', 0), v('betaVideo', 5)] }), ['V1:1']],
    ['a reclaimed asset', () => refused({ V1: [v('reclaimed', 0)] }), ['V1:0']],
    ['an asset of kind other', () => refused({ V1: [v('other', 0, { duration: 1 })] }), ['V1:0']],
    ['an asset of kind other on an A track', () => refused({ A1: [v('other', 0, { duration: 1 })] }), ['A1:0']],
    ['video on an A track', () => refused({ A1: [v('audio4', 0), v('video5', 4)] }), ['A1:1']],
    ['an image on an A track', () => refused({ A2: [v('image', 0)] }), ['A2:0']],
    ['audio on a V track', () => refused({ V1: [v('audio4', 0)] }), ['V1:0']],
    ['an overlap', () => refused({ V1: [v('video5', 0), v('video5', 4.5)] }), ['V1:1']],
    // 0.02 snaps to frame 1, so the first clip ends at frame 31 (1.0333 s); 1.01 snaps to frame 30.
    ['an overlap that exists only after snapping', () => refused({ V1: [v('video5', 0.02, { duration: 0.984 }), v('video5', 1.01, { duration: 1 })] }), ['V1:1']],
    ['an overlap on an A track', () => refused({ A1: [v('audio4', 0), v('audio4', 3.99)] }), ['A1:1']],
    ['an overlap names the clip that starts later, by its place in the request', () => refused({ V1: [v('video5', 2, { duration: 2 }), v('image', 0, { duration: 3 })] }), ['V1:0']],
    ['a duration under one frame after snapping (0.01 s at 30 fps)', () => refused({ V1: [v('video5', 0, { duration: 0.01 })] }), ['V1:0']],
    ['a duration of 0', () => refused({ V1: [v('video5', 0, { duration: 0 })] }), ['V1:0']],
    ['an image of duration 0', () => refused({ V1: [v('image', 0, { duration: 0 })] }), ['V1:0']],
    ['a duration under one sample after snapping (0.00001 s at 48000 Hz)', () => refused({ A1: [v('audio4', 0, { duration: 0.00001 })] }), ['A1:0']],
    ['a duration under one sample at 8000 Hz', () => refused({ A1: [v('audio4', 0, { duration: 0.00006 })] }, { sample_rate: 8000 }), ['A1:0']],
    ['in at the end of the source', () => refused({ V1: [v('video5', 0, { in: 5, duration: 1 })] }), ['V1:0']],
    ['in past the end of the source', () => refused({ A1: [v('audio4', 0, { in: 4.5 })] }), ['A1:0']],
    ['a crossfade on the first clip of a track', () => refused({ V1: [v('video5', 0, { duration: 2, transition: { kind: 'crossfade', duration: 0.5 } })] }), ['V1:0']],
    ['a crossfade after a gap', () => refused({ V1: [v('video5', 0, { duration: 2 }), v('video5', 3, { duration: 2, transition: { kind: 'crossfade', duration: 0.5 } })] }), ['V1:1']],
    ['a crossfade longer than the clip before it', () => refused({ V1: [v('video5', 0, { duration: 1 }), v('video5', 1, { duration: 3, transition: { kind: 'crossfade', duration: 1.5 } })] }), ['V1:1']],
    ['a crossfade longer than its own clip', () => refused({ A1: [v('audio4', 0, { duration: 3 }), v('audio4', 3, { duration: 1, transition: { kind: 'crossfade', duration: 1.5 } })] }), ['A1:1']],
    ['an image with in > 0', () => refused({ V1: [v('image', 0, { in: 1, duration: 2 })] }), ['V1:0']],
    ['an unknown length and no duration', () => refused({ V1: [v('noLen', 0)] }), ['V1:0']],
    [
      'several problems, every one listed in track order then request order',
      () => refused({ A1: [v('video5', 0)], V1: [v('video5', 0), v(UNKNOWN_ID, 10, { duration: 1 }), v('other', 20, { duration: 1 }), v('image', 30, { in: 1 })] }),
      ['V1:1', 'V1:2', 'V1:3', 'A1:0'],
    ],
  ];
  for (const [name, call, expected] of rows) {
    test(`${name}: 422 at ${expected.join(', ')}`, async () => {
      assert.deepEqual(where(await call()), expected);
    });
  }

  test('a crossfade exactly as long as both clips, and a clip of exactly one frame or one sample, are fine', async () => {
    const t = await createTimeline(alpha, {
      name: 'edges',
      tracks: {
        V1: [v('video5', 0, { duration: 1 }), v('video5', 1, { duration: 1, transition: { kind: 'crossfade', duration: 1 } }), v('video5', 2, { duration: 1 / 30 })],
        A1: [v('audio4', 0, { duration: 1 / 48000 })],
      },
    });
    assert.deepEqual(t.tracks.V1[2], clip(ids.video5!, 2, 1 / 30));
    assert.deepEqual(t.tracks.A1, [clip(ids.audio4!, 0, 1 / 48000)]);
    const u = await createTimeline(alpha, { name: 'no length but a duration', tracks: { V1: [v('noLen', 0, { duration: 2 })] } });
    assert.deepEqual(u.tracks.V1, [clip(ids.noLen!, 0, 2)]);
  });

  test('with clips, index is the position in `clips` (track null when no track can be told)', async () => {
    const res = await alpha.post('/timeline', {
      name: 'refused',
      clips: [
        { asset_id: ids.video5 },
        { asset_id: ids.audio4 },
        { asset_id: UNKNOWN_ID },
        { asset_id: ids.other },
        { asset_id: ids.audio4, in: 4 },
        { asset_id: ids.image, in: 1 },
        { asset_id: ids.noLen },
        { asset_id: ids.betaVideo },
      ],
    });
    assert.deepEqual(where(res), ['null:2', 'null:3', 'A1:4', 'V1:5', 'V1:6', 'null:7']);
  });

  test('with clips, a problem found after laying out still names the position in `clips`', async () => {
    const res = await alpha.post('/timeline', {
      name: 'refused',
      clips: [{ asset_id: ids.audio4 }, { asset_id: ids.image, duration: 1 }, { asset_id: ids.video5, duration: 0.01 }, { asset_id: ids.audio4, duration: 0.000001 }],
    });
    assert.deepEqual(where(res), ['V1:2', 'A1:3']);
  });

  test('an unknown asset, another studio\'s and a reclaimed one are refused in the same words', async () => {
    const words = async (assetId: string, form: 'tracks' | 'clips') => {
      const body = form === 'tracks' ? { name: 'x', tracks: { V1: [{ asset_id: assetId, start: 0, duration: 1 }] } } : { name: 'x', clips: [{ asset_id: assetId, duration: 1 }] };
      const res = await alpha.post('/timeline', body);
      const [p] = problems(res);
      return { message: res.json.message.split(assetId).join('<id>'), reason: p!.reason.split(assetId).join('<id>'), track: p!.track };
    };
    for (const form of ['tracks', 'clips'] as const) {
      const unknown = await words(UNKNOWN_ID, form);
      assert.deepEqual(await words(ids.betaVideo!, form), unknown, form);
      assert.deepEqual(await words(ids.reclaimed!, form), unknown, form);
      // A clip of another kind gets other words: the comparison is not vacuous.
      assert.notDeepEqual(await words(ids.other!, form), unknown);
    }
  });

  test('nothing was stored by any refused create', async () => {
    const names = (await walk(alpha, '/timeline', 500)).map((t) => t.name);
    assert.ok(!names.includes('refused'), names.join(','));
    assert.ok(!names.includes('x'));
  });
});

// ---------------------------------------------------------------------------
describe('create: 400 bad_request for a body of the wrong shape, 413 over the body limit', () => {
  const post = (name: string, body: unknown): Scenario => ({ name: `${name}: 400`, method: 'POST', path: '/timeline', as: 'alpha', body, expectStatus: 400, expectCode: 'bad_request' });
  const postRaw = (name: string, raw: string): Scenario => ({ name: `${name}: 400`, method: 'POST', path: '/timeline', as: 'alpha', raw, expectStatus: 400, expectCode: 'bad_request' });
  const A = UNKNOWN_ID;
  const onV1 = (c: Record<string, unknown>) => ({ name: 'refused', tracks: { V1: [{ asset_id: A, start: 0, duration: 1, ...c }] } });
  const target = (t: Record<string, unknown>) => ({ name: 'refused', target: t });
  const tracksNamed = (track: string) => `{"name":"refused","tracks":{${JSON.stringify(track)}:[{"asset_id":"${A}","start":0,"duration":1}]}}`;
  runScenarios(() => env, [
    postRaw('malformed JSON', '{"name":'),
    postRaw('an empty body', ''),
    post('a JSON array', [{ name: 'refused' }]),
    post('no name', { tracks: {} }),
    post('both clips and tracks', { name: 'refused', clips: [], tracks: {} }),
    post('both clips and tracks, both with clips', { name: 'refused', clips: [{ asset_id: A }], tracks: { V1: [{ asset_id: A, start: 0 }] } }),
    post('an unknown member', { name: 'refused', colour: 'red' }),
    post('an unknown clip member', onV1({ speed: 2 })),
    post('an unknown member in clips', { name: 'refused', clips: [{ asset_id: A, start: 0 }] }),
    post('a transition in clips', { name: 'refused', clips: [{ asset_id: A, transition: { kind: 'crossfade', duration: 1 } }] }),
    post('an unknown target member', target({ aspect: '16:9' })),
    post('an unknown transition member', onV1({ transition: { kind: 'crossfade', duration: 0.5, curve: 'log' } })),
    post('a transition kind other than crossfade', onV1({ transition: { kind: 'wipe', duration: 0.5 } })),
    post('a transition without duration', onV1({ transition: { kind: 'crossfade' } })),
    post('name a number', { name: 5 }),
    post('name null', { name: null }),
    post('tracks an array', { name: 'refused', tracks: [] }),
    post('a track an object', { name: 'refused', tracks: { V1: {} } }),
    post('clips an object', { name: 'refused', clips: {} }),
    post('target an array', { name: 'refused', target: [] }),
    post('target null', { name: 'refused', target: null }),
    post('start a string', onV1({ start: '0' })),
    post('start missing in tracks', { name: 'refused', tracks: { V1: [{ asset_id: A, duration: 1 }] } }),
    post('asset_id missing', { name: 'refused', tracks: { V1: [{ start: 0, duration: 1 }] } }),
    post('asset_id a number', onV1({ asset_id: 7 })),
    post('asset_id empty', onV1({ asset_id: '' })),
    post('duration null', onV1({ duration: null })),
    post('a negative start', onV1({ start: -1 })),
    post('a negative in', onV1({ in: -0.5 })),
    post('a negative duration', onV1({ duration: -1 })),
    post('a negative crossfade', onV1({ transition: { kind: 'crossfade', duration: -1 } })),
    post('a negative duration in clips', { name: 'refused', clips: [{ asset_id: A, duration: -1 }] }),
    post('a start over 360000 s', onV1({ start: 360_001 })),
    post('an in over 360000 s', onV1({ in: 360_000.5 })),
    post('a duration over 360000 s', { name: 'refused', clips: [{ asset_id: A, duration: 360_001 }] }),
    post('a width that is odd', target({ width: 1921 })),
    post('a height that is odd', target({ height: 721 })),
    post('a width too small', target({ width: 14 })),
    post('a height of 0', target({ height: 0 })),
    post('a width too large', target({ width: 7682 })),
    post('a height too large', target({ height: 4322 })),
    post('a width that is not whole', target({ width: 1280.5 })),
    post('a width as a string', target({ width: '1280' })),
    post('fps 0', target({ fps: 0 })),
    post('fps negative', target({ fps: -30 })),
    post('fps 241', target({ fps: 241 })),
    post('fps with unsupported decimals (29.1234)', target({ fps: 29.1234 })),
    post('fps 25.0001 (4 decimals, not NTSC)', target({ fps: 25.0001 })),
    post('fps as a string', target({ fps: '30' })),
    post('sample_rate below 8000', target({ sample_rate: 7999 })),
    post('sample_rate above 192000', target({ sample_rate: 192_001 })),
    post('sample_rate not whole', target({ sample_rate: 44100.5 })),
    post('sample_rate 0', target({ sample_rate: 0 })),
    postRaw('track V0', tracksNamed('V0')),
    postRaw('track V10', tracksNamed('V10')),
    postRaw('track X1', tracksNamed('X1')),
    postRaw('track v1', tracksNamed('v1')),
    postRaw('track A0', tracksNamed('A0')),
    postRaw('track "" ', tracksNamed('')),
    postRaw('track __proto__', tracksNamed('__proto__')),
    postRaw('track constructor', tracksNamed('constructor')),
    post('name empty', { name: '' }),
    post('name blank', { name: '   \t ' }),
    post('name with a newline', { name: 'a\nb' }),
    post('name with a control character', { name: 'a\u0001b' }),
    post('name with DEL', { name: 'a\u007fb' }),
    post('name of 501 characters', { name: 'n'.repeat(501) }),
    post('more than 5000 clips in clips', { name: 'refused', clips: Array.from({ length: 5001 }, () => ({ asset_id: A, duration: 1 })) }),
    post('more than 5000 clips in one track', { name: 'refused', tracks: { V1: Array.from({ length: 5001 }, (_, i) => ({ asset_id: A, start: i, duration: 1 })) } }),
    post('more than 5000 clips over two tracks', {
      name: 'refused',
      tracks: {
        V1: Array.from({ length: 2500 }, (_, i) => ({ asset_id: A, start: i, duration: 1 })),
        A1: Array.from({ length: 2501 }, (_, i) => ({ asset_id: A, start: i, duration: 1 })),
      },
    }),
    {
      name: 'a body over the body limit: 413 with details.limit',
      method: 'POST',
      path: '/timeline',
      as: 'alpha',
      raw: JSON.stringify({ name: 'refused', pad: 'x'.repeat(BODY_LIMIT) }),
      expectStatus: 413,
      expectCode: 'too_large',
      expectDetails: { limit: BODY_LIMIT },
    },
    { name: 'a name of 500 characters (astral ones count as one): 201', method: 'POST', path: '/timeline', as: 'alpha', body: { name: '🎬'.repeat(500) }, expectStatus: 201 },
    { name: 'a name with spaces around it: 201, kept as given', method: 'POST', path: '/timeline', as: 'alpha', body: { name: '  spaced  ' }, expectStatus: 201, expectJson: { name: '  spaced  ' } },
    { name: 'fps 240, 12.5 and 59.94 are fine', method: 'POST', path: '/timeline', as: 'alpha', body: { name: 'fps 240', target: { fps: 240 } }, expectStatus: 201, expectJson: { target: { ...DEFAULT_TARGET, fps: 240 } } },
    { name: 'fps 12.5 is fine', method: 'POST', path: '/timeline', as: 'alpha', body: { name: 'fps 12.5', target: { fps: 12.5 } }, expectStatus: 201 },
    { name: 'fps 59.94 is fine', method: 'POST', path: '/timeline', as: 'alpha', body: { name: 'fps 59.94', target: { fps: 59.94 } }, expectStatus: 201 },
    { name: 'the smallest and largest sizes and rates are fine', method: 'POST', path: '/timeline', as: 'alpha', body: { name: 'edges', target: { width: 16, height: 4320, sample_rate: 192000 } }, expectStatus: 201 },
    { name: 'sample_rate 8000 and width 7680 are fine', method: 'POST', path: '/timeline', as: 'alpha', body: { name: 'edges 2', target: { width: 7680, height: 16, sample_rate: 8000 } }, expectStatus: 201 },
  ]);
});

// ---------------------------------------------------------------------------
describe('PATCH', () => {
  const at = (id: string) => `/timeline/${id}`;
  const revisions = async (id: string) => (await alpha.get(`${at(id)}/revisions`)).json.items;

  test('If-Match is required (400), a stale one is 409; quoted, bare and * are accepted; revision and ETag follow', async () => {
    const t = await createTimeline(alpha, { name: 'p', target: { fps: 25 }, tracks: { V1: [{ asset_id: ids.video5, start: 0 }] } });
    assertError(await alpha.patch(at(t.id), { name: 'no if-match' }), 400, 'bad_request');
    assertError(await alpha.patch(at(t.id), { name: 'stale' }, { 'If-Match': '"2"' }), 409, 'etag_mismatch');
    assertError(await alpha.patch(at(t.id), { name: 'stale bare' }, { 'If-Match': '0' }), 409, 'etag_mismatch');
    assertError(await alpha.patch(at(t.id), { name: 'weak' }, { 'If-Match': 'W/"1"' }), 409, 'etag_mismatch');
    assert.deepEqual(assertTimeline(await alpha.get(at(t.id)), 200), t);
    assert.deepEqual(await revisions(t.id), []);

    const r2 = await alpha.patch(at(t.id), { name: 'p2' }, { 'If-Match': '"1"' });
    const t2 = assertTimeline(r2, 200);
    assert.equal(r2.headers.etag, '"2"');
    assert.deepEqual({ ...t2, updated_at: t.updated_at }, { ...t, name: 'p2', revision: 2 });
    assert.equal(t2.created_at, t.created_at);
    assert.ok(t2.updated_at >= t.updated_at);

    const t3 = assertTimeline(await alpha.patch(at(t.id), { name: 'p3' }, { 'If-Match': '2' }), 200);
    assert.equal(t3.revision, 3);
    const t4 = assertTimeline(await alpha.patch(at(t.id), { name: 'p4' }, { 'If-Match': '*' }), 200);
    assert.equal(t4.revision, 4);
    const t5 = assertTimeline(await alpha.patch(at(t.id), { name: 'p5' }, { 'If-Match': '"1", "4"' }), 200);
    assert.equal(t5.revision, 5);
    assert.deepEqual(assertTimeline(await alpha.get(at(t.id)), 200), t5);
    assert.equal((await alpha.get(at(t.id))).headers.etag, '"5"');
    // An empty patch is a write too: a new revision with the same document.
    const t6 = assertTimeline(await alpha.patch(at(t.id), {}, { 'If-Match': '5' }), 200);
    assert.equal(t6.revision, 6);
    assert.deepEqual(t6.tracks, t.tracks);
  });

  test('target members merge; a null member goes back to its default; target null resets all', async () => {
    const t = await createTimeline(alpha, { name: 'target', target: { fps: 25, sample_rate: 44100 } });
    let u = assertTimeline(await alpha.patch(at(t.id), { target: { width: 1280, height: 720 } }, { 'If-Match': '1' }), 200);
    assert.deepEqual(u.target, { sample_rate: 44100, fps: 25, width: 1280, height: 720 });
    u = assertTimeline(await alpha.patch(at(t.id), { target: { fps: null } }, { 'If-Match': '2' }), 200);
    assert.deepEqual(u.target, { sample_rate: 44100, fps: 30, width: 1280, height: 720 });
    u = assertTimeline(await alpha.patch(at(t.id), { target: {} }, { 'If-Match': '3' }), 200);
    assert.deepEqual(u.target, { sample_rate: 44100, fps: 30, width: 1280, height: 720 });
    u = assertTimeline(await alpha.patch(at(t.id), { target: null }, { 'If-Match': '4' }), 200);
    assert.deepEqual(u.target, DEFAULT_TARGET);
    assert.equal(u.name, 'target');
  });

  test('tracks are replaced whole; tracks null empties; name and target stay', async () => {
    const t = await createTimeline(alpha, { name: 'tracks', clips: [{ asset_id: ids.video5 }, { asset_id: ids.audio4 }] });
    let u = assertTimeline(await alpha.patch(at(t.id), { tracks: { A2: [{ asset_id: ids.audio4, start: 1, duration: 2 }] } }, { 'If-Match': '1' }), 200);
    assert.deepEqual(u.tracks, { A2: [clip(ids.audio4!, 1, 2)] });
    assert.equal(u.duration, 3);
    assert.equal(u.name, 'tracks');
    u = assertTimeline(await alpha.patch(at(t.id), { name: 'renamed' }, { 'If-Match': '2' }), 200);
    assert.deepEqual(u.tracks, { A2: [clip(ids.audio4!, 1, 2)] });
    u = assertTimeline(await alpha.patch(at(t.id), { tracks: null }, { 'If-Match': '3' }), 200);
    assert.deepEqual(u.tracks, {});
    assert.equal(u.duration, 0);
    assert.equal(u.name, 'renamed');
    assert.deepEqual(u.target, DEFAULT_TARGET);
  });

  test('the whole result is checked: a target change that makes clips invalid is 422', async () => {
    const t = await createTimeline(alpha, { name: 'whole', tracks: { A1: [{ asset_id: ids.audio4, start: 0, duration: 0.0001 }] } });
    // 0.0001 s is 4.8 samples at 48000 Hz but 0.8 at 8000: still one sample. At 8000 Hz 0.00006 s would be none.
    const u = assertTimeline(await alpha.patch(at(t.id), { target: { sample_rate: 8000 } }, { 'If-Match': '1' }), 200);
    assert.deepEqual(u.tracks.A1, [clip(ids.audio4!, 0, 1 / 8000)]);
    const v = await createTimeline(alpha, { name: 'whole 2', tracks: { V1: [{ asset_id: ids.video5, start: 0, duration: 0.02 }] } });
    // 0.02 s is 0.6 frame at 30 fps (one frame) but 0.48 at 24: none.
    const res = await alpha.patch(at(v.id), { target: { fps: 24 } }, { 'If-Match': '1' });
    // The stored clip was snapped to 1/30 s; at 24 fps that is 0.8 frame: one frame, valid.
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.tracks.V1, [clip(ids.video5!, 0, 1 / 24)]);
  });

  test('a new clip naming an asset the caller cannot read is 422 naming it; nothing is written on any error', async () => {
    const t = await createTimeline(alpha, { name: 'guarded', tracks: { V1: [{ asset_id: ids.video5, start: 0 }] } });
    const before = assertTimeline(await alpha.get(at(t.id)), 200);
    const bad = [
      { tracks: { V1: [{ asset_id: ids.video5, start: 0 }, { asset_id: ids.betaVideo, start: 5 }] } },
      { tracks: { V1: [{ asset_id: ids.video5, start: 0 }], V2: [{ asset_id: UNKNOWN_ID, start: 0, duration: 1 }] } },
      { tracks: { V1: [{ asset_id: ids.reclaimed, start: 0 }] } },
    ];
    assert.deepEqual(where(await alpha.patch(at(t.id), bad[0], { 'If-Match': '1' })), ['V1:1']);
    assert.deepEqual(where(await alpha.patch(at(t.id), bad[1], { 'If-Match': '1' })), ['V2:0']);
    assert.deepEqual(where(await alpha.patch(at(t.id), bad[2], { 'If-Match': '1' })), ['V1:0']);
    assert.deepEqual(where(await alpha.patch(at(t.id), { tracks: { V1: [{ asset_id: ids.video5, start: 0 }, { asset_id: ids.video5, start: 1 }] } }, { 'If-Match': '1' })), ['V1:1']);
    assertError(await alpha.patch(at(t.id), { name: '' }, { 'If-Match': '1' }), 400, 'bad_request');
    assertError(await alpha.patch(at(t.id), { name: null }, { 'If-Match': '1' }), 400, 'bad_request');
    assertError(await alpha.patch(at(t.id), { clips: [] }, { 'If-Match': '1' }), 400, 'bad_request');
    assertError(await alpha.patch(at(t.id), { revision: 9 }, { 'If-Match': '1' }), 400, 'bad_request');
    assertError(await alpha.patch(at(t.id), { target: { fps: 241 } }, { 'If-Match': '1' }), 400, 'bad_request');
    assertError(await alpha.patch(at(t.id), { target: { width: 1921 } }, { 'If-Match': '1' }), 400, 'bad_request');
    assertError(await alpha.patch(at(t.id), { tracks: { V10: [] } }, { 'If-Match': '1' }), 400, 'bad_request');
    assertError(await alpha.patch(at(t.id), { tracks: { V1: Array.from({ length: 5001 }, (_, i) => ({ asset_id: ids.image, start: i, duration: 1 })) } }, { 'If-Match': '1' }), 400, 'bad_request');
    const r = await send(svc.port, { method: 'PATCH', path: `/api/v1${at(t.id)}`, token: env.tokens.alpha, raw: '{"name":', contentType: MERGE, headers: { 'If-Match': '1' } });
    assertError(r, 400, 'bad_request');
    const big = await send(svc.port, { method: 'PATCH', path: `/api/v1${at(t.id)}`, token: env.tokens.alpha, raw: JSON.stringify({ name: 'x'.repeat(BODY_LIMIT) }), contentType: MERGE, headers: { 'If-Match': '1' } });
    assertError(big, 413, 'too_large', { limit: BODY_LIMIT });
    const proto = await send(svc.port, { method: 'PATCH', path: `/api/v1${at(t.id)}`, token: env.tokens.alpha, raw: '{"tracks":{"__proto__":[]}}', contentType: MERGE, headers: { 'If-Match': '1' } });
    assertError(proto, 400, 'bad_request');
    assertError(await alpha.patch(at(t.id), { name: 'stale' }, { 'If-Match': '2' }), 409, 'etag_mismatch');
    assert.deepEqual(assertTimeline(await alpha.get(at(t.id)), 200), before);
    assert.deepEqual(await revisions(t.id), []);
    // Then a good write still goes to revision 2.
    assert.equal(assertTimeline(await alpha.patch(at(t.id), { name: 'ok' }, { 'If-Match': '1' }), 200).revision, 2);
  });

  test('concurrent PATCHes with the same If-Match: exactly one wins, the others are 409', async () => {
    const t = await createTimeline(alpha, { name: 'race' });
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => alpha.patch(at(t.id), { name: `racer ${i}` }, { 'If-Match': '1' })));
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 409, 409, 409, 409, 409]);
    const winner = answers.find((r) => r.status === 200)!.json;
    assert.deepEqual(assertTimeline(await alpha.get(at(t.id)), 200), winner);
    assert.equal(winner.revision, 2);
    assert.deepEqual((await revisions(t.id)).map((r: any) => r.revision), [1]);
  });

  test('a clip already present stays through later writes; a clip added again of an asset present is fine', async () => {
    const t = await createTimeline(alpha, { name: 'present', tracks: { V1: [{ asset_id: ids.video5, start: 0 }] } });
    const u = assertTimeline(await alpha.patch(at(t.id), { tracks: { V1: [{ asset_id: ids.video5, start: 0 }, { asset_id: ids.video5, start: 5, in: 1 }] } }, { 'If-Match': '1' }), 200);
    assert.deepEqual(u.tracks.V1, [clip(ids.video5!, 0, 5), clip(ids.video5!, 5, 4, { in: 1 })]);
  });
});

// ---------------------------------------------------------------------------
describe('DELETE', () => {
  const at = (id: string) => `/timeline/${id}`;

  test('a stale If-Match is 409 and deletes nothing; without If-Match it deletes; then everything is 404', async () => {
    const t = await createTimeline(alpha, { name: 'to delete', clips: [{ asset_id: ids.video5 }] });
    assertTimeline(await alpha.patch(at(t.id), { name: 'to delete 2' }, { 'If-Match': '1' }), 200);
    assertError(await alpha.delete(at(t.id), { 'If-Match': '"1"' }), 409, 'etag_mismatch');
    assertError(await alpha.delete(at(t.id), { 'If-Match': '3' }), 409, 'etag_mismatch');
    assert.equal(assertTimeline(await alpha.get(at(t.id)), 200).revision, 2);

    const res = await alpha.delete(at(t.id));
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    assertError(await alpha.get(at(t.id)), 404, 'not_found');
    assertError(await alphaAll.get(at(t.id)), 404, 'not_found');
    assert.ok(!(await walk(alpha, '/timeline', 500)).some((s) => s.id === t.id));
    assert.ok(!(await walk(alphaAll, '/timeline', 500)).some((s) => s.id === t.id));
    assertError(await alpha.get(`${at(t.id)}/revisions`), 404, 'not_found');
    assertError(await alpha.post('/timeline:append', { asset_id: ids.video5, timeline_id: t.id }), 404, 'not_found');
    assertError(await alpha.patch(at(t.id), { name: 'back' }, { 'If-Match': '*' }), 404, 'not_found');
    assertError(await alpha.post(`${at(t.id)}:revert`, { revision: 1 }, { 'If-Match': '*' }), 404, 'not_found');
    assertError(await alpha.delete(at(t.id)), 404, 'not_found');
    assertError(await alpha.delete(at(t.id), { 'If-Match': '*' }), 404, 'not_found');
  });

  test('a matching If-Match (quoted, bare or *) deletes', async () => {
    for (const header of ['"1"', '1', '*']) {
      const t = await createTimeline(alpha, { name: `delete ${header}` });
      assert.equal((await alpha.delete(at(t.id), { 'If-Match': header })).status, 204, header);
      assertError(await alpha.get(at(t.id)), 404, 'not_found');
    }
  });
});

// ---------------------------------------------------------------------------
describe('list', () => {
  let gammaIds: string[] = [];
  before(async () => {
    gammaIds = [];
    for (let i = 0; i < 7; i++) gammaIds.push((await createTimeline(gamma, { name: `g${i}` })).id);
    assert.equal((await gamma.delete(`/timeline/${gammaIds[3]}`)).status, 204);
  });

  test("own sequences only, newest first, deleted hidden; a write does not reorder (creation order)", async () => {
    assertTimeline(await gamma.patch(`/timeline/${gammaIds[0]}`, { name: 'g0 edited' }, { 'If-Match': '1' }), 200);
    const res = await gamma.get('/timeline');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json).sort(), ['items', 'next_cursor']);
    assert.equal(res.json.next_cursor, null);
    const expected = gammaIds.filter((_, i) => i !== 3).reverse();
    assert.deepEqual(res.json.items.map((t: any) => t.id), expected);
    assert.ok(res.json.items.every((t: any) => t.studio_id === 'gamma'));
    // Items are whole Timelines.
    const first = res.json.items.at(-1);
    assert.equal(first.name, 'g0 edited');
    assert.equal(first.revision, 2);
    assert.deepEqual(Object.keys(first).sort(), Object.keys(assertTimeline(await gamma.get(`/timeline/${first.id}`), 200)).sort());
  });

  test('pages: limit and cursor walk every sequence once', async () => {
    const expected = gammaIds.filter((_, i) => i !== 3).reverse();
    for (const limit of [1, 2, 4, 6]) assert.deepEqual((await walk(gamma, '/timeline', limit)).map((t) => t.id), expected, `limit ${limit}`);
    const page = await gamma.get('/timeline?limit=2');
    assert.equal(page.json.items.length, 2);
    assert.equal(typeof page.json.next_cursor, 'string');
  });

  test('a cursor stays valid while sequences are created and deleted', async () => {
    const page = await gamma.get('/timeline?limit=2');
    const added = await createTimeline(gamma, { name: 'later' });
    assert.equal((await gamma.delete(`/timeline/${gammaIds[4]}`)).status, 204);
    const next = await gamma.get(`/timeline?limit=50&cursor=${encodeURIComponent(page.json.next_cursor)}`);
    assert.equal(next.status, 200);
    assert.deepEqual(next.json.items.map((t: any) => t.id), [gammaIds[2], gammaIds[1], gammaIds[0]]);
    assert.ok(!next.json.items.some((t: any) => t.id === added.id));
  });

  test('without gallery.read_all only own; with it every studio\'s, newest first', async () => {
    const own = await walk(alpha, '/timeline', 500);
    assert.ok(own.length > 0);
    assert.ok(own.every((t) => t.studio_id === 'alpha'));
    const all = await walk(alphaAll, '/timeline', 7);
    const studios = new Set(all.map((t) => t.studio_id));
    assert.deepEqual([...studios].sort(), ['alpha', 'beta', 'gamma']);
    const idsAll = all.map((t) => t.id);
    assert.deepEqual(idsAll, [...idsAll].sort().reverse());
    assert.equal(new Set(idsAll).size, idsAll.length);
    assert.ok(idsAll.includes(ids.betaSeq!));
    assert.ok(!idsAll.includes(ids.deleted!));
    assert.deepEqual(own.map((t) => t.id), idsAll.filter((id) => own.some((t) => t.id === id)));
    assert.equal(all.filter((t) => t.studio_id === 'alpha').length, own.length);
    assert.ok(!(await walk(beta, '/timeline', 500)).some((t) => t.studio_id !== 'beta'));
  });

  test('a cursor from another list, another studio or with other access is 400 bad_cursor', async () => {
    const gammaCursor = (await gamma.get('/timeline?limit=1')).json.next_cursor;
    const alphaCursor = (await alpha.get('/timeline?limit=1')).json.next_cursor;
    const allCursor = (await alphaAll.get('/timeline?limit=1')).json.next_cursor;
    const t = await createTimeline(gamma, { name: 'revs' });
    await gamma.patch(`/timeline/${t.id}`, { name: 'r2' }, { 'If-Match': '1' });
    await gamma.patch(`/timeline/${t.id}`, { name: 'r3' }, { 'If-Match': '2' });
    const revCursor = (await gamma.get(`/timeline/${t.id}/revisions?limit=1`)).json.next_cursor;
    assert.equal(typeof revCursor, 'string');
    const q = (c: string) => `/timeline?cursor=${encodeURIComponent(c)}`;
    assertError(await alpha.get(q(gammaCursor)), 400, 'bad_cursor');
    assertError(await alphaAll.get(q(alphaCursor)), 400, 'bad_cursor');
    assertError(await alpha.get(q(allCursor)), 400, 'bad_cursor');
    assertError(await gamma.get(q(revCursor)), 400, 'bad_cursor');
    assertError(await gamma.get(q('garbage')), 400, 'bad_cursor');
    assertError(await gamma.get(q(gammaCursor.slice(0, -2) + (gammaCursor.endsWith('AA') ? 'BB' : 'AA'))), 400, 'bad_cursor');
    assert.equal((await gamma.get(q(gammaCursor))).status, 200);
  });

  runScenarios(() => env, [
    { name: 'limit 0: 400', path: '/timeline?limit=0', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit 501: 400', path: '/timeline?limit=501', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit abc: 400', path: '/timeline?limit=abc', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit 1.5: 400', path: '/timeline?limit=1.5', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'an empty cursor: 400', path: '/timeline?cursor=', as: 'alpha', expectStatus: 400 },
    { name: 'an unknown query member: 400', path: '/timeline?studio=beta', as: 'alphaAll', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'limit 500: 200', path: '/timeline?limit=500', as: 'alpha', expectStatus: 200 },
  ]);
});
