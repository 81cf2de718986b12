import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../service/db/open';
import { newId } from '../service/core/ids';
import { createJobsStore, type JobRow } from '../service/jobs/store';
import { JOB_STATES, type JobState } from '../service/jobs/states';
import { startService, type TestService } from './helpers/service';
import { client } from './helpers/http';
import { assertError, runScenarios, type ScenarioEnv } from './helpers/scenario';
import { openSse } from './helpers/sse';

/** Jobs over the real service (docs/api.md "Jobs and events"). */

const JOB_KEYS = [
  'cancel_requested_at', 'created_at', 'data', 'finished_at', 'id', 'kind', 'last_error', 'progress_den',
  'progress_num', 'state', 'studio_id', 'timeline_id', 'title', 'updated_at',
];

let svc: TestService;
const env: ScenarioEnv = { port: 0, tokens: {}, ids: {} };
const ids = env.ids!;

/** A lifecycle job row written straight into the data dir (no public route starts one). */
function seed(studioId: string, kind: JobRow['kind'], state: JobState, extra: Partial<JobRow> = {}): string {
  const db = openDatabase(svc.dataDir);
  try {
    const now = new Date().toISOString();
    const id = newId();
    createJobsStore(db).insert({
      id, studio_id: studioId, kind, title: `${kind} job`, state, progress_num: 0, progress_den: 0, last_error: null,
      cancel_requested_at: null, data: '{}', timeline_id: null, created_at: now, updated_at: now,
      finished_at: ['succeeded', 'failed', 'cancelled'].includes(state) ? now : null, ...extra,
    });
    return id;
  } finally {
    db.close();
  }
}

const alpha = () => client(env.port, env.tokens.alpha);
const beta = () => client(env.port, env.tokens.beta);

async function task(state: JobState = 'running', c = alpha()): Promise<string> {
  const created = await c.post('/jobs', { title: 'work', ...(state === 'queued' ? { state: 'queued' } : {}) });
  assert.equal(created.status, 201, created.text);
  if (state !== 'queued' && state !== 'running') {
    const r = await c.patch(`/jobs/${created.json.id}`, { state });
    assert.equal(r.status, 200, r.text);
  }
  return created.json.id;
}

before(async () => {
  svc = await startService({ env: { BACKLOT_SSE_HEARTBEAT_MS: '200' } });
  env.port = svc.port;
  env.tokens.alpha = svc.studio('alpha', ['jobs']);
  env.tokens.beta = svc.studio('beta', ['jobs']);
  env.tokens.noJobs = svc.studio('gamma', ['kv']);
  ids.install = seed('alpha', 'install', 'running');
  ids.exportDone = seed('alpha', 'export', 'succeeded', { timeline_id: '01J0000000000000000000TL00' });
  ids.betaTask = await task('running', beta());
  ids.running = await task('running');
  ids.queued = await task('queued');
  ids.done = await task('succeeded');
});
after(async () => {
  await svc.stop();
});

describe('access and bad input', () => {
  const p = (key: string, suffix = '') => (e: ScenarioEnv) => `/jobs/${e.ids![key]}${suffix}`;
  runScenarios(() => env, [
    { name: 'no token is 401', path: '/jobs', expectStatus: 401, expectCode: 'unauthenticated' },
    { name: 'list needs jobs', path: '/jobs', as: 'noJobs', expectStatus: 403, expectCode: 'capability_required', expectDetails: { capability: 'jobs' } },
    { name: 'create needs jobs', method: 'POST', path: '/jobs', as: 'noJobs', body: { title: 't' }, expectStatus: 403, expectCode: 'capability_required' },
    { name: 'events need jobs', path: '/events', as: 'noJobs', expectStatus: 403, expectCode: 'capability_required' },
    { name: 'logs need jobs', path: p('running', '/logs'), as: 'noJobs', expectStatus: 403, expectCode: 'capability_required' },
    { name: 'create without title', method: 'POST', path: '/jobs', as: 'alpha', body: {}, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'create with an empty title', method: 'POST', path: '/jobs', as: 'alpha', body: { title: '' }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'create with a title of 501 characters', method: 'POST', path: '/jobs', as: 'alpha', body: { title: 'é'.repeat(501) }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a title of 500 characters is fine', method: 'POST', path: '/jobs', as: 'alpha', body: { title: '😀'.repeat(500) }, expectStatus: 201 },
    { name: 'last_error over 10000 characters is 400', method: 'PATCH', path: p('running'), as: 'alpha', body: { last_error: 'e'.repeat(10_001) }, contentType: 'application/merge-patch+json', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'create finished', method: 'POST', path: '/jobs', as: 'alpha', body: { title: 't', state: 'succeeded' }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'create with an unknown member', method: 'POST', path: '/jobs', as: 'alpha', body: { title: 't', kind: 'install' }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'create with progress over den', method: 'POST', path: '/jobs', as: 'alpha', body: { title: 't', progress_num: 2, progress_den: 1 }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'create with negative progress', method: 'POST', path: '/jobs', as: 'alpha', body: { title: 't', progress_num: -1 }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'create with fractional progress', method: 'POST', path: '/jobs', as: 'alpha', body: { title: 't', progress_den: 1.5 }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'create with non-object data', method: 'POST', path: '/jobs', as: 'alpha', body: { title: 't', data: [1] }, expectStatus: 400, expectCode: 'bad_request' },
    { name: "another studio's job is 404", path: p('betaTask'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'an unknown job is 404', path: '/jobs/01J00000000000000000000000', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: "patch of another studio's job is 404", method: 'PATCH', path: p('betaTask'), as: 'alpha', body: { title: 'x' }, contentType: 'application/merge-patch+json', expectStatus: 404, expectCode: 'not_found' },
    { name: "log append to another studio's job is 404", method: 'POST', path: p('betaTask', '/logs'), as: 'alpha', body: { lines: ['x'] }, expectStatus: 404, expectCode: 'not_found' },
    { name: "cancel of another studio's job is 404", method: 'POST', path: p('betaTask', ':cancel'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: "logs of another studio's job are 404", path: p('betaTask', '/logs'), as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'own lifecycle job is shown', path: p('install'), as: 'alpha', expectStatus: 200, expectJson: { kind: 'install', state: 'running' } },
    { name: 'patch of a lifecycle job is 403 not_a_task', method: 'PATCH', path: p('install'), as: 'alpha', body: { state: 'succeeded' }, contentType: 'application/merge-patch+json', expectStatus: 403, expectCode: 'not_a_task' },
    { name: 'patch of a finished export job is 403 (kind before state)', method: 'PATCH', path: p('exportDone'), as: 'alpha', body: { title: 'x' }, contentType: 'application/merge-patch+json', expectStatus: 403, expectCode: 'not_a_task' },
    { name: 'log append to a lifecycle job is 403', method: 'POST', path: p('install', '/logs'), as: 'alpha', body: { lines: ['x'] }, expectStatus: 403, expectCode: 'not_a_task' },
    { name: 'log append to a finished export job is 403', method: 'POST', path: p('exportDone', '/logs'), as: 'alpha', body: { lines: ['x'] }, expectStatus: 403, expectCode: 'not_a_task' },
    { name: 'cancel of an install job is 403', method: 'POST', path: p('install', ':cancel'), as: 'alpha', expectStatus: 403, expectCode: 'not_a_task' },
    { name: 'cancel of a finished export job is 403', method: 'POST', path: p('exportDone', ':cancel'), as: 'alpha', expectStatus: 403, expectCode: 'not_a_task' },
    { name: 'patch with progress over den is 400', method: 'PATCH', path: p('running'), as: 'alpha', body: { progress_num: 5, progress_den: 4 }, contentType: 'application/merge-patch+json', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'patch with negative progress is 400', method: 'PATCH', path: p('running'), as: 'alpha', body: { progress_den: -4 }, contentType: 'application/merge-patch+json', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'patch with title null is 400', method: 'PATCH', path: p('running'), as: 'alpha', body: { title: null }, contentType: 'application/merge-patch+json', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'patch with an unknown member is 400', method: 'PATCH', path: p('running'), as: 'alpha', body: { kind: 'x' }, contentType: 'application/merge-patch+json', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'patch of a finished job is 409 job_finished', method: 'PATCH', path: p('done'), as: 'alpha', body: { title: 'x' }, contentType: 'application/merge-patch+json', expectStatus: 409, expectCode: 'job_finished' },
    { name: 'log append to a finished job is 409', method: 'POST', path: p('done', '/logs'), as: 'alpha', body: { lines: ['x'] }, expectStatus: 409, expectCode: 'job_finished' },
    { name: 'cancel of a finished job is 409', method: 'POST', path: p('done', ':cancel'), as: 'alpha', expectStatus: 409, expectCode: 'job_finished' },
    { name: 'log append without lines is 400', method: 'POST', path: p('running', '/logs'), as: 'alpha', body: { lines: [] }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'log append of 1001 lines is 400', method: 'POST', path: p('running', '/logs'), as: 'alpha', body: { lines: Array(1001).fill('x') }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'log append of a non-string is 400', method: 'POST', path: p('running', '/logs'), as: 'alpha', body: { lines: [1] }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a line over 16 KiB is 400', method: 'POST', path: p('running', '/logs'), as: 'alpha', body: { lines: ['x'.repeat(16 * 1024 + 1)] }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'a line of 16 KiB is fine', method: 'POST', path: p('running', '/logs'), as: 'alpha', body: { lines: ['x'.repeat(16 * 1024)] }, expectStatus: 204 },
    { name: 'log append of 1000 lines is fine', method: 'POST', path: p('running', '/logs'), as: 'alpha', body: { lines: Array(1000).fill('x') }, expectStatus: 204 },
    { name: 'bad limit is 400', path: '/jobs?limit=0', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'bad cursor is 400', path: '/jobs?cursor=abc.def', as: 'alpha', expectStatus: 400, expectCode: 'bad_cursor' },
  ]);
});

describe('task jobs', () => {
  test('create answers 201 with the Job shape, running by default', async () => {
    const r = await alpha().post('/jobs', { title: 'render', progress_den: 10, data: { k: 1 } });
    assert.equal(r.status, 201);
    assert.deepEqual(Object.keys(r.json).sort(), JOB_KEYS);
    assert.equal(r.json.kind, 'task');
    assert.equal(r.json.studio_id, 'alpha');
    assert.equal(r.json.state, 'running');
    assert.deepEqual([r.json.progress_num, r.json.progress_den], [0, 10]);
    assert.deepEqual(r.json.data, { k: 1 });
    assert.equal(r.json.finished_at, null);
    assert.deepEqual(r.json, (await alpha().get(`/jobs/${r.json.id}`)).json);
  });

  test('state: queued creates a queued job', async () => {
    const r = await alpha().post('/jobs', { title: 'later', state: 'queued' });
    assert.equal(r.json.state, 'queued');
  });

  describe('the state table through PATCH', () => {
    const verdict = (from: JobState, to: JobState): [number, string?] => {
      if (['succeeded', 'failed', 'cancelled'].includes(from)) return [409, 'job_finished'];
      if (from === to || from === 'queued' || to !== 'queued') return [200];
      return [409, 'conflict'];
    };
    for (const from of JOB_STATES) {
      for (const to of JOB_STATES) {
        const [status, code] = verdict(from, to);
        test(`${from} -> ${to}: ${status} ${code ?? ''}`, async () => {
          const id = await task(from);
          const r = await alpha().patch(`/jobs/${id}`, { state: to });
          if (code) {
            assertError(r, status, code);
            assert.equal((await alpha().get(`/jobs/${id}`)).json.state, from);
          } else {
            assert.equal(r.status, 200, r.text);
            assert.equal(r.json.state, to);
            assert.equal(r.json.finished_at !== null, ['succeeded', 'failed', 'cancelled'].includes(to));
          }
        });
      }
    }
  });

  test('progress, title, last_error and data change; last_error null clears', async () => {
    const id = await task();
    let r = await alpha().patch(`/jobs/${id}`, { progress_num: 3, progress_den: 8, title: 'renamed', last_error: 'warn', data: { a: 1 } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.json.progress_num, r.json.progress_den, r.json.title, r.json.last_error], [3, 8, 'renamed', 'warn']);
    r = await alpha().patch(`/jobs/${id}`, { progress_num: 9 });
    assertError(r, 400, 'bad_request');
    r = await alpha().patch(`/jobs/${id}`, { last_error: null, data: { b: 2 } });
    assert.equal(r.json.last_error, null);
    assert.deepEqual(r.json.data, { a: 1, b: 2 });
    assert.equal((await alpha().get(`/jobs/${id}`)).json.last_error, null);
  });

  test('cancel records cancel_requested_at, keeps the job running and emits a job event', async () => {
    const events = await openSse(env.port, '/events', env.tokens.alpha);
    const betaEvents = await openSse(env.port, '/events', env.tokens.beta);
    try {
      assert.equal(events.status, 200);
      assert.match(String(events.headers['content-type']), /^text\/event-stream/);
      assert.equal(events.headers['cache-control'], 'no-cache');
      await events.waitForComment(() => true);
      for (const state of ['running', 'queued'] as const) {
        const id = await task(state);
        const r = await alpha().post(`/jobs/${id}:cancel`);
        assert.equal(r.status, 204, r.text);
        const job = (await alpha().get(`/jobs/${id}`)).json;
        assert.equal(job.state, state);
        assert.match(job.cancel_requested_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        const [event] = await events.waitFor((m) => m.event === 'job' && JSON.parse(m.data).id === id && JSON.parse(m.data).cancel_requested_at !== null);
        assert.deepEqual(JSON.parse(event!.data), job);
        // The studio ends it itself.
        assert.equal((await alpha().patch(`/jobs/${id}`, { state: 'cancelled' })).json.state, 'cancelled');
      }
      // Another studio's channel hears none of alpha's jobs.
      assert.equal(betaEvents.events.filter((m) => JSON.parse(m.data).studio_id !== 'beta').length, 0);
    } finally {
      events.close();
      betaEvents.close();
    }
  });

  test('list shows the studio\'s task and lifecycle jobs, newest first, in pages; never another studio\'s', async () => {
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const r = await alpha().get(`/jobs?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(r.status, 200, r.text);
      seen.push(...r.json.items);
      cursor = r.json.next_cursor;
    } while (cursor);
    const got = seen.map((j) => j.id);
    assert.deepEqual(got, [...got].sort().reverse());
    assert.equal(new Set(got).size, got.length);
    assert.ok(got.includes(ids.install) && got.includes(ids.exportDone) && got.includes(ids.running));
    assert.ok(!got.includes(ids.betaTask));
    assert.ok(seen.every((j) => j.studio_id === 'alpha'));
    assert.equal(seen.find((j) => j.id === ids.exportDone).timeline_id, '01J0000000000000000000TL00');
    const betaPage = await beta().get(`/jobs?cursor=${encodeURIComponent((await alpha().get('/jobs?limit=1')).json.next_cursor)}`);
    assertError(betaPage, 400, 'bad_cursor');
  });
});

describe('log stream', () => {
  test('replays from the start, goes live, sends end once after the job finishes, then closes', async () => {
    const id = await task();
    const c = alpha();
    assert.equal((await c.post(`/jobs/${id}/logs`, { lines: ['one', 'two\nthree'] })).status, 204);
    const first = await openSse(env.port, `/jobs/${id}/logs`, env.tokens.alpha);
    const second = await openSse(env.port, `/jobs/${id}/logs`, env.tokens.alpha);
    assert.equal(first.status, 200);
    assert.match(String(first.headers['content-type']), /^text\/event-stream/);
    await first.waitFor((m) => m.event === 'line', 3);
    for (let i = 4; i <= 60; i++) assert.equal((await c.post(`/jobs/${id}/logs`, { lines: [`live ${i}`] })).status, 204);
    await first.waitFor((m) => m.event === 'line', 60);
    assert.equal((await c.patch(`/jobs/${id}`, { state: 'failed', last_error: 'it broke' })).status, 200);
    await Promise.all([first.closed, second.closed]);
    for (const s of [first, second]) {
      const lines = s.events.filter((m) => m.event === 'line').map((m) => JSON.parse(m.data));
      assert.deepEqual(lines.map((l) => l.n), Array.from({ length: 60 }, (_, i) => i + 1));
      assert.deepEqual(lines.slice(0, 4).map((l) => l.text), ['one', 'two', 'three', 'live 4']);
      assert.deepEqual(Object.keys(lines[0]).sort(), ['at', 'n', 'step', 'text']);
      assert.equal(lines[0].step, null);
      assert.deepEqual(s.events.filter((m) => m.event === 'line').map((m) => m.id), lines.map((l) => String(l.n)));
      assert.equal(s.events.filter((m) => m.event === 'step').length, 0, 'a task job has no step events');
      const ends = s.events.filter((m) => m.event === 'end');
      assert.equal(ends.length, 1);
      assert.equal(s.events[s.events.length - 1]!.event, 'end');
      assert.deepEqual(JSON.parse(ends[0]!.data), { state: 'failed', last_error: 'it broke' });
    }
  });

  test('Last-Event-ID resumes after line n; a finished job replays and ends at once', async () => {
    const id = await task();
    await alpha().post(`/jobs/${id}/logs`, { lines: ['a', 'b', 'c', 'd', 'e'] });
    await alpha().patch(`/jobs/${id}`, { state: 'succeeded' });
    const resumed = await openSse(env.port, `/jobs/${id}/logs`, env.tokens.alpha, { 'Last-Event-ID': '3' });
    await resumed.closed;
    assert.deepEqual(resumed.events.map((m) => m.event + (m.id ? `:${m.id}` : '')), ['line:4', 'line:5', 'end:5']);
    const all = await openSse(env.port, `/jobs/${id}/logs`, env.tokens.alpha, { 'Last-Event-ID': 'junk' });
    await all.closed;
    assert.equal(all.events.filter((m) => m.event === 'line').length, 5);
    const past = await openSse(env.port, `/jobs/${id}/logs`, env.tokens.alpha, { 'Last-Event-ID': '5' });
    await past.closed;
    assert.deepEqual(past.events.map((m) => m.event), ['end']);
  });

  test('a resumed live stream gets only newer lines', async () => {
    const id = await task();
    await alpha().post(`/jobs/${id}/logs`, { lines: ['1', '2'] });
    const s = await openSse(env.port, `/jobs/${id}/logs`, env.tokens.alpha, { 'Last-Event-ID': '2' });
    await alpha().post(`/jobs/${id}/logs`, { lines: ['3'] });
    const [line] = await s.waitFor((m) => m.event === 'line');
    assert.equal(JSON.parse(line!.data).text, '3');
    await alpha().patch(`/jobs/${id}`, { state: 'succeeded' });
    await s.closed;
    assert.deepEqual(s.events.map((m) => m.event), ['line', 'end']);
  });

  test('a finished lifecycle job streams its end to its own studio', async () => {
    const s = await openSse(env.port, `/jobs/${ids.exportDone}/logs`, env.tokens.alpha);
    await s.closed;
    assert.deepEqual(s.events.map((m) => [m.event, JSON.parse(m.data)]), [['end', { state: 'succeeded', last_error: null }]]);
  });

  test('a heartbeat comment keeps an idle stream alive', async () => {
    const id = await task();
    const s = await openSse(env.port, `/jobs/${id}/logs`, env.tokens.alpha);
    const e = await openSse(env.port, '/events', env.tokens.alpha);
    try {
      await s.waitForComment((c) => c === 'heartbeat', 5000);
      await e.waitForComment((c) => c === 'heartbeat', 5000);
    } finally {
      s.close();
      e.close();
    }
  });

  test('a log that would pass 64 MiB is 413 too_large and keeps what it had', async () => {
    const id = await task();
    const lines = Array(250).fill('z'.repeat(16 * 1024));
    let r;
    let appended = 0;
    for (let i = 0; i < 40; i++) {
      r = await alpha().post(`/jobs/${id}/logs`, { lines });
      if (r.status !== 204) break;
      appended += 250;
    }
    assertError(r!, 413, 'too_large', { limit: 64 * 1024 * 1024 });
    assert.ok(appended >= 3750, `${appended} lines appended before the cap`);
    const { statSync } = await import('node:fs');
    assert.ok(statSync(`${svc.dataDir}/jobs/${id}.log`).size <= 64 * 1024 * 1024);
    assert.equal((await alpha().post(`/jobs/${id}/logs`, { lines: ['small'] })).status, 204);
  });

  test('lines are kept in a file the service owns, not in the database', async () => {
    const id = await task();
    await alpha().post(`/jobs/${id}/logs`, { lines: ['on disk'] });
    const { readFileSync } = await import('node:fs');
    const text = readFileSync(`${svc.dataDir}/jobs/${id}.log`, 'utf8');
    assert.deepEqual(JSON.parse(text.trim()).text, 'on disk');
  });
});
