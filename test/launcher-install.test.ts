import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { assertError } from './helpers/scenario';
import { tempDir, type TestService } from './helpers/service';
import { CLIPMAKER, fixture, rewriteManifest, SKETCHPAD, startLauncher, type LauncherClient } from './helpers/launcher';

/**
 * Installing studios over HTTP: the install job and
 * the build and download jobs after it, the copy into DIR/studios/<id>/app,
 * every refusal before anything runs (409 id_taken, 422 not_launchable,
 * 400 naming the member, 422 blocked), a failed step, reinstalling over a
 * failed install, declared indexes, and the clean environment of steps.
 */

let svc: TestService;
let l: LauncherClient;

before(async () => {
  ({ svc, l } = await startLauncher({ env: { BACKLOT_SECRET_TEST: 'leaked-if-you-see-this' } }));
});
after(async () => {
  await svc.stop();
});

const studioRoot = (id: string) => join(svc.dataDir, 'studios', id);

/** Asserts a refused install left nothing: no studio, no folder, no job. */
async function assertNothingRegistered(id: string): Promise<void> {
  assert.equal(await l.studio(id), null, 'no studio is registered');
  assert.equal(existsSync(studioRoot(id)), false, 'no folder was made');
  assert.deepEqual(await l.jobsOf(id), [], 'no job ran');
  assert.notEqual(svc.cli(['token', 'create', '--studio', id, '--caps', 'kv']).code, 0, 'the studio is unknown to the service');
}

test('sketchpad: 202 install job; its step is a step event followed by its lines; the app is copied; installed', async () => {
  const res = await l.post('/launcher/studios:install', { source: SKETCHPAD });
  assert.equal(res.status, 202, res.text);
  assert.equal(res.json.kind, 'install');
  assert.equal(res.json.studio_id, 'sketchpad');
  assert.ok(['running', 'succeeded'].includes(res.json.state), res.json.state);
  const job = await l.waitJob(res.json.id);
  assert.equal(job.state, 'succeeded', JSON.stringify(job));
  const studio = await l.waitState('sketchpad', 'installed');
  assert.equal(studio.installed, true);
  assert.equal(studio.version, '1.0.0');
  assert.equal(studio.linked, false);
  assert.equal(studio.heavy, false);
  assert.deepEqual(studio.capabilities, ['kv', 'assets', 'gallery']);
  assert.equal(studio.origin, `http://sketchpad.localhost:${svc.port}`);
  assert.equal(studio.port, null);

  const events = await l.log(res.json.id);
  const stepAt = events.findIndex((m) => m.event === 'step' && JSON.parse(m.data).step === 'prepare');
  assert.ok(stepAt >= 0, 'a step event names the step');
  assert.equal(JSON.parse(events[stepAt]!.data).index, 0);
  const lines = events.map((m, i) => ({ i, m })).filter(({ m }) => m.event === 'line').map(({ i, m }) => ({ i, ...JSON.parse(m.data) }));
  const own = lines.filter((x) => x.step === 'prepare');
  assert.ok(own.some((x) => x.text === 'Preparing Sketchpad 1.0.0 (node ' + process.version + ')'), JSON.stringify(own));
  assert.ok(own.every((x) => x.i > stepAt), "the step's lines follow its step event");
  assert.equal(events[events.length - 1]!.event, 'end');

  const app = join(studioRoot('sketchpad'), 'app');
  assert.equal(readFileSync(join(app, 'server.js'), 'utf8'), readFileSync(join(SKETCHPAD, 'server.js'), 'utf8'));
  assert.ok(existsSync(join(app, 'state', 'installed.json')), 'the step ran in the app folder');
  assert.equal(existsSync(join(SKETCHPAD, 'state')), false, 'the step did not run in the source folder');
  assert.deepEqual(readdirSync(studioRoot('sketchpad')).sort(), ['app', 'data', 'stage'], 'no temporary copy is left');

  const list = await l.get('/launcher/studios');
  assert.equal(list.status, 200);
  assert.ok(list.json.items.some((s: any) => s.id === 'sketchpad' && s.state === 'installed'));
});

test('409 id_taken for an installed id', async () => {
  assertError(await l.post('/launcher/studios:install', { source: SKETCHPAD }), 409, 'id_taken', { id: 'sketchpad' });
});

test('clipmaker: the install job, then a download job for its file: URL; the file is in the app folder', async () => {
  await l.installOk(CLIPMAKER);
  const jobs = await l.jobsOf('clipmaker');
  assert.deepEqual(jobs.map((j) => `${j.kind}:${j.state}`), ['download:succeeded', 'install:succeeded']);
  const bed = readFileSync(join(studioRoot('clipmaker'), 'app', 'models', 'bed.wav'));
  assert.equal(createHash('sha256').update(bed).digest('hex'), '72323d3fa5290ecc6bda159de0e27165a957f85c88dba2373fd8cc66660bdbd4');
  assert.equal(jobs[0].progress_num, bed.length, 'progress counts bytes');
  assert.equal(jobs[0].progress_den, bed.length);
  assert.equal((await l.studio('clipmaker')).heavy, true);
});

test('install, build and download run as three jobs in that order, each with its own steps', async () => {
  const blob = Buffer.from('fixture bytes\n');
  const src = fixture(
    {
      id: 'threejobs',
      install: [{ name: 'fetch deps', run: 'node tool.js print installing' }],
      build: [
        { name: 'compile', run: 'node tool.js print compiled' },
        { name: 'bundle', run: 'node tool.js print bundled' },
      ],
      download: [{ url: 'file:data/blob.bin', sha256: createHash('sha256').update(blob).digest('hex'), to: 'models/blob.bin' }],
    },
    { 'data/blob.bin': blob },
  );
  await l.installOk(src);
  const jobs = (await l.jobsOf('threejobs')).reverse();
  assert.deepEqual(jobs.map((j) => `${j.kind}:${j.state}`), ['install:succeeded', 'build:succeeded', 'download:succeeded']);
  const build = await l.log(jobs[1].id);
  assert.deepEqual(build.filter((m) => m.event === 'step').map((m) => JSON.parse(m.data).step), ['compile', 'bundle']);
  assert.deepEqual(
    build.filter((m) => m.event === 'line').map((m) => [JSON.parse(m.data).step, JSON.parse(m.data).text]),
    [['compile', 'compiled'], ['bundle', 'bundled']],
  );
  assert.ok(jobs[0].created_at <= jobs[1].created_at && jobs[1].created_at <= jobs[2].created_at);
  assert.deepEqual(readFileSync(join(studioRoot('threejobs'), 'app', 'models', 'blob.bin')), blob);
});

test('422 not_launchable: a folder without backlot.json, and no folder at all; 400 for a relative path', async () => {
  const empty = tempDir('backlot-empty-');
  assertError(await l.post('/launcher/studios:install', { source: empty }), 422, 'not_launchable');
  assertError(await l.post('/launcher/studios:install', { source: join(empty, 'missing') }), 422, 'not_launchable');
  assertError(await l.post('/launcher/studios:install', { source: 'examples/studios/sketchpad' }), 400, 'bad_request');
  assertError(await l.post('/launcher/studios:install', {}), 400, 'bad_request');
});

test('400 for a bad manifest names the member, and nothing is registered', async () => {
  const src = fixture({ id: 'badcaps', capabilities: ['kv', 'superuser'] });
  assertError(await l.post('/launcher/studios:install', { source: src }), 400, 'bad_request', { member: 'manifest.capabilities.1' });
  await assertNothingRegistered('badcaps');
  const shell = fixture({ id: 'badshell', install: [{ name: 'x', run: 'node tool.js print a && rm -rf data' }] });
  assertError(await l.post('/launcher/studios:install', { source: shell }), 400, 'bad_request', { member: 'manifest.install.0.run' });
  await assertNothingRegistered('badshell');
});

for (const [name, patch, member] of [
  ['a download.to outside the app folder', { download: [{ url: 'file:tool.js', sha256: 'a'.repeat(64), to: '../../escaped.bin' }] }, 'manifest.download.0.to'],
  ['a step that runs ../', { build: [{ name: 'evil', run: 'node ../../evil.js' }] }, 'manifest.build.0.run'],
  ['an ftp URL', { download: [{ url: 'ftp://127.0.0.1/x.bin', sha256: 'a'.repeat(64), to: 'x.bin' }] }, 'manifest.download.0.url'],
] as const) {
  test(`422 blocked before anything runs: ${name}`, async () => {
    const id = `blocked${member.length}${name.length}`;
    const src = fixture({ id, install: [{ name: 'mark', run: 'node tool.js touch marker.txt' }], ...patch });
    assertError(await l.post('/launcher/studios:install', { source: src }), 422, 'blocked', { member });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(existsSync(join(src, 'marker.txt')), false, 'the first step did not run');
    await assertNothingRegistered(id);
  });
}

test('a failed step fails its job naming the step; the studio is failed with the log kept; reinstalling is allowed', async () => {
  const manifest = {
    id: 'flaky',
    install: [
      { name: 'hello', run: 'node tool.js print first-step-ran' },
      { name: 'boom', run: 'node tool.js fail 3' },
      { name: 'never', run: 'node tool.js touch never.txt' },
    ],
  };
  const src = fixture(manifest);
  const { res, studio } = await l.install(src);
  assert.equal(res.status, 202, res.text);
  assert.equal(studio.state, 'failed');
  assert.equal(studio.installed, false);
  const job = await l.job(res.json.id);
  assert.equal(job.state, 'failed');
  assert.match(job.last_error, /"boom"/);
  assert.match(job.last_error, /code 3/);
  assert.match(studio.last_error, /install job failed/);
  assert.match(studio.last_error, /boom/);
  const text = await l.logText(res.json.id);
  for (const line of ['first-step-ran', 'about to fail', 'failing on stderr']) assert.ok(text.includes(line), `log keeps "${line}": ${text}`);
  assert.equal(existsSync(join(studioRoot('flaky'), 'app', 'never.txt')), false, 'no step ran after the failed one');
  assertError(await l.post('/launcher/studios/flaky:start'), 409, 'not_installed');

  rewriteManifest(src, { ...manifest, install: [manifest.install[0]] });
  const again = await l.installOk(src);
  assert.equal(again.last_error, null);
  const kinds = (await l.jobsOf('flaky')).map((j) => `${j.kind}:${j.state}`);
  assert.deepEqual(kinds, ['install:succeeded', 'install:failed'], 'the first job and its log stay');
  assert.ok((await l.logText(res.json.id)).includes('about to fail'));
});

test('a failed build fails the build job and the studio, and no download runs', async () => {
  const src = fixture({
    id: 'badbuild',
    build: [{ name: 'compile', run: 'node tool.js fail 9' }],
    download: [{ url: 'file:tool.js', sha256: 'a'.repeat(64), to: 'x.bin' }],
  });
  const { studio } = await l.install(src);
  assert.equal(studio.state, 'failed');
  const jobs = await l.jobsOf('badbuild');
  assert.deepEqual(jobs.map((j) => `${j.kind}:${j.state}`), ['build:failed', 'install:succeeded']);
  assert.match(jobs[0].last_error, /"compile"/);
  assert.match(studio.last_error, /build job failed/);
});

test("the manifest's collections indexes are declared at install; a bad index field is 400 naming the member", async () => {
  const src = fixture({ id: 'indexed', capabilities: ['records'], collections: { notes: { indexes: ['title', 'rank'] } } });
  await l.installOk(src);
  for (const field of ['title', 'rank']) {
    const r = svc.cli(['index', 'add', '--studio', 'indexed', '--collection', 'notes', '--field', field]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).created, false, `${field} was declared by the install`);
  }
  const bad = fixture({ id: 'badindex', capabilities: ['records'], collections: { notes: { indexes: ['title', 'a.b'] } } });
  assertError(await l.post('/launcher/studios:install', { source: bad }), 400, 'bad_request', { member: 'manifest.collections.notes' });
  await assertNothingRegistered('badindex');
});

test("a step's environment is clean: PATH, HOME, LANG and the manifest's env; nothing of the service", async () => {
  const src = fixture({ id: 'envstep', install: [{ name: 'env', run: 'node tool.js env' }], env: { FIXTURE_TAG: 'tagged' } });
  const { res } = await l.install(src);
  const line = (await l.logText(res.json.id)).find((t) => t.startsWith('ENV '));
  assert.ok(line, 'the step printed its environment');
  const env = JSON.parse(line.slice(4));
  assert.deepEqual(Object.keys(env).sort(), ['FIXTURE_TAG', 'HOME', 'LANG', 'PATH']);
  assert.equal(env.FIXTURE_TAG, 'tagged');
  assert.equal(env.PATH, process.env.PATH);
  const text = JSON.stringify(env);
  assert.ok(!text.includes('leaked-if-you-see-this'), "the service's variables do not leak");
  assert.ok(!text.includes(l.cred) && !text.includes('bl_launcher_'), 'no launcher credential');
});

test('GET /launcher/jobs: every studio\'s jobs, newest first, by studio, in pages', async () => {
  const all = await l.get('/launcher/jobs?limit=500');
  assert.equal(all.status, 200);
  const studios = new Set(all.json.items.map((j: any) => j.studio_id));
  for (const id of ['sketchpad', 'clipmaker', 'threejobs', 'flaky']) assert.ok(studios.has(id), id);
  const ids = all.json.items.map((j: any) => j.id);
  assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: any = await l.get(`/launcher/jobs?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(page.status, 200, page.text);
    assert.ok(page.json.items.length <= 2);
    seen.push(...page.json.items.map((j: any) => j.id));
    cursor = page.json.next_cursor;
  } while (cursor);
  assert.deepEqual(seen, ids);
  const mine = await l.get('/launcher/jobs?studio=clipmaker');
  assert.deepEqual([...new Set(mine.json.items.map((j: any) => j.studio_id))], ['clipmaker']);
  assertError(await l.get('/launcher/jobs?limit=0'), 400, 'bad_request');
  assertError(await l.get('/launcher/jobs?cursor=garbage'), 400, 'bad_cursor');
  assertError(await l.get('/launcher/jobs/01ARZ3NDEKTSV4RRFFQ69G5FAV'), 404, 'not_found');
});
