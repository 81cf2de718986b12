import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { asHttp, makePng, upload } from './helpers/assets';
import { assertError } from './helpers/scenario';
import { type TestService } from './helpers/service';
import { openSse } from './helpers/sse';
import { SKETCHPAD, startLauncher, studioGet, type LauncherClient } from './helpers/launcher';

/**
 * Uninstall (docs/api.md "Uninstall and purge"): 409 confirm_required; it stops the studio,
 * removes its app folder and revokes its tokens; its data stays unless
 * `purge`, and with `purge` every kind of data goes and its assets lose the
 * studio's grants (a blob another studio reads stays readable to it).
 */

const CAPS = ['kv', 'records', 'assets', 'gallery', 'timeline', 'jobs'];
let svc: TestService;
let l: LauncherClient;

before(async () => {
  ({ svc, l } = await startLauncher());
  await l.installOk(SKETCHPAD);
});
after(async () => {
  await svc.stop();
});

const as = (token: string) => ({
  get: (path: string) => l.call('GET', path, undefined, token),
  put: (path: string, body: unknown) => l.call('PUT', path, body, token),
  post: (path: string, body: unknown) => l.call('POST', path, body, token),
});

async function uploadAs(token: string, bytes: Buffer, query: string, type = 'application/octet-stream'): Promise<string> {
  const res = asHttp(await upload(svc.port, token, bytes, query, type));
  assert.ok(res.status === 201 || res.status === 200, res.text);
  return res.json.id;
}

test('409 confirm_required without confirm; 404 for an unknown studio', async () => {
  assertError(await l.post('/launcher/studios/sketchpad:uninstall', {}), 409, 'confirm_required', { purge: false });
  assertError(await l.post('/launcher/studios/sketchpad:uninstall', { purge: true }), 409, 'confirm_required', { purge: true });
  assertError(await l.post('/launcher/studios/sketchpad:uninstall', { confirm: false }), 409, 'confirm_required');
  assertError(await l.post('/launcher/studios/nosuch:uninstall', { confirm: true }), 404, 'not_found');
  assert.equal((await l.studio('sketchpad')).state, 'installed');
});

test('uninstall stops the running studio, removes the app folder, revokes its tokens; its data is back after a reinstall', async () => {
  const token = svc.token('sketchpad', CAPS);
  assert.ok([200, 201].includes((await as(token).put('/kv/settings/theme', { color: 'teal' })).status));
  const running = await l.startOk('sketchpad');
  assert.equal((await studioGet(running.port, '/')).status, 200);
  const events = await openSse(svc.port, '/launcher/events', l.cred);
  try {
    const res = await l.post('/launcher/studios/sketchpad:uninstall', { confirm: true });
    assert.equal(res.status, 202, res.text);
    assert.equal(res.json.kind, 'uninstall');
    const job = await l.waitJob(res.json.id);
    assert.equal(job.state, 'succeeded', JSON.stringify(job));
    await events.waitFor((m) => m.event === 'studio' && JSON.parse(m.data).id === 'sketchpad' && JSON.parse(m.data).removed === true);
    const text = await l.logText(res.json.id);
    assert.ok(text.includes('stopped the running studio'), text.join('\n'));
    assert.ok(text.some((t) => /^revoked \d+ token\(s\)$/.test(t)));
  } finally {
    events.close();
  }
  assert.equal(await l.studio('sketchpad'), null);
  await assert.rejects(studioGet(running.port, '/'), 'its server is gone');
  const root = join(svc.dataDir, 'studios', 'sketchpad');
  assert.equal(existsSync(join(root, 'app')), false, 'the app folder is removed');
  assert.equal((await as(token).get('/kv/settings/theme')).status, 401, 'its tokens are revoked');

  await l.installOk(SKETCHPAD);
  const again = svc.token('sketchpad', CAPS);
  const doc = await as(again).get('/kv/settings/theme');
  assert.equal(doc.status, 200, doc.text);
  assert.deepEqual(doc.json.value, { color: 'teal' }, 'the data stayed');
});

test('uninstall with purge: KV, records, sessions, gallery items, sequences, library files and grants go; a shared blob stays for the other studio', async () => {
  const token = svc.token('sketchpad', CAPS);
  const other = svc.studio('bystander', ['assets']);
  const c = as(token);
  assert.ok([200, 201].includes((await c.put('/kv/settings/theme', { color: 'red' })).status));
  assert.equal((await c.post('/records/notes', { title: 'kept?' })).status, 201);
  assert.equal((await c.post('/sessions', { name: 'session' })).status, 201);
  const image = await uploadAs(token, await makePng(8, 8, 42), 'kind=image', 'image/png');
  const item = await c.post('/gallery/items', { asset_id: image, title: 'drawing', tags: ['x'] });
  assert.equal(item.status, 201, item.text);
  const audio = await uploadAs(token, randomBytes(300), 'kind=audio&duration_s=2');
  const seq = await c.post('/timeline', { name: 'sequence', clips: [{ asset_id: audio }] });
  assert.equal(seq.status, 201, seq.text);
  const sharedBytes = randomBytes(500);
  const shared = await uploadAs(token, sharedBytes, 'kind=other');
  assert.equal(await uploadAs(other, sharedBytes, 'kind=other'), shared);
  const library = join(svc.dataDir, 'library', 'sketchpad');
  assert.ok(readdirSync(library).length >= 3);

  await l.uninstall('sketchpad', true);
  assert.equal(existsSync(library) && readdirSync(library, { recursive: true }).length > 0, false, 'library files removed');
  assert.equal((await as(other).get(`/assets/${shared}`)).status, 200, 'the other studio still reads the shared blob');
  assert.equal((await as(other).get(`/assets/${image}`)).status, 404);

  await l.installOk(SKETCHPAD);
  const fresh = as(svc.token('sketchpad', CAPS));
  assert.equal((await fresh.get('/kv/settings/theme')).status, 404, 'KV gone');
  assert.deepEqual((await fresh.get('/kv/settings')).json.items, []);
  assert.deepEqual((await fresh.get('/records/notes')).json.items, [], 'records gone');
  assert.deepEqual((await fresh.get('/sessions')).json.items, [], 'sessions gone');
  assert.deepEqual((await fresh.get('/gallery/items')).json.items, [], 'gallery items gone');
  assert.equal((await fresh.get(`/gallery/items/${item.json.id}`)).status, 404);
  assert.equal((await fresh.get(`/timeline/${seq.json.id}`)).status, 404, 'sequences gone');
  assert.deepEqual((await fresh.get('/timeline')).json.items, []);
  for (const id of [image, audio, shared]) assert.equal((await fresh.get(`/assets/${id}`)).status, 404, `grant on ${id} gone`);
});
