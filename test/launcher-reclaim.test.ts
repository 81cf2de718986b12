import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { send } from './helpers/http';
import { ROOT, startService, type TestService } from './helpers/service';

/**
 * Uninstall with purge takes the studio's grants away: blobs
 * another studio still reads stay readable, and what nobody reads any more is
 * reclaimable from the launcher's side (`POST /launcher/assets:reclaim`).
 */

let svc: TestService;
let launcher: string;

const call = (method: string, path: string, token: string, body?: unknown) =>
  send(svc.port, { method, path: `/api/v1${path}`, token, body });

async function waitJob(id: string): Promise<any> {
  let job: any;
  for (let i = 0; i < 300; i++) {
    job = (await call('GET', `/launcher/jobs/${id}`, launcher)).json;
    if (['succeeded', 'failed', 'cancelled'].includes(job.state)) return job;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`job ${id} did not finish: ${JSON.stringify(job)}`);
}

async function upload(token: string, bytes: Buffer): Promise<string> {
  const res = await send(svc.port, { method: 'POST', path: '/api/v1/assets?kind=other&filename=x.bin', token, raw: bytes, contentType: 'application/octet-stream' });
  assert.ok(res.status === 201 || res.status === 200, res.text);
  return res.json.id;
}

before(async () => {
  svc = await startService();
  launcher = svc.cli(['launcher-token']).stdout.trim();
  const install = await call('POST', '/launcher/studios:install', launcher, { source: join(ROOT, 'examples', 'studios', 'sketchpad') });
  assert.equal(install.status, 202, install.text);
  assert.equal((await waitJob(install.json.id)).state, 'succeeded');
});
after(async () => {
  await svc.stop();
});

test('purge: a blob another studio reads stays; the rest is reclaimable from the launcher', async () => {
  const a = svc.token('sketchpad', ['assets', 'gallery']);
  const b = svc.studio('other', ['assets', 'gallery']);
  const shared = Buffer.from('bytes both studios hold');
  const own = Buffer.from('bytes only sketchpad holds');
  const sharedId = await upload(a, shared);
  const ownId = await upload(a, own);
  assert.equal(await upload(b, shared), sharedId);
  for (const asset of [sharedId, ownId]) {
    assert.equal((await call('POST', '/gallery/items', a, { asset_id: asset, title: 'made' })).status, 201);
  }
  const before = await call('POST', '/launcher/assets:reclaim', launcher, {});
  assert.equal(before.status, 200, before.text);
  assert.deepEqual(before.json.assets, [], 'both are in use by live items');

  const un = await call('POST', '/launcher/studios/sketchpad:uninstall', launcher, { confirm: true, purge: true });
  assert.equal(un.status, 202, un.text);
  assert.equal((await waitJob(un.json.id)).state, 'succeeded');
  assert.equal((await call('GET', `/assets/${sharedId}`, b)).status, 200, 'the other studio still reads its blob');
  assert.equal((await call('GET', `/assets/${ownId}`, b)).status, 404);
  assert.equal(existsSync(join(svc.dataDir, 'library', 'sketchpad')), false, "the studio's library files are gone");

  const preview = await call('POST', '/launcher/assets:reclaim', launcher, {});
  assert.equal(preview.status, 200, preview.text);
  assert.ok(preview.json.assets.includes(ownId), 'the asset nobody reads is reclaimable');
  const done = await call('POST', '/launcher/assets:reclaim', launcher, { asset_ids: [ownId], confirm: 'stale' });
  assert.equal(done.status, 409);
  assert.equal(done.json.code, 'preview_changed');
  const only = (await call('POST', '/launcher/assets:reclaim', launcher, { asset_ids: [ownId] })).json;
  const reclaimed = await call('POST', '/launcher/assets:reclaim', launcher, { asset_ids: [ownId], confirm: only.preview });
  assert.equal(reclaimed.status, 200, reclaimed.text);
  assert.deepEqual(reclaimed.json.reclaimed, [ownId]);
  assert.equal(reclaimed.json.bytes_freed, own.length);
  const blobs = readdirSync(join(svc.dataDir, 'blobs'), { recursive: true }).map(String);
  assert.equal(blobs.filter((f) => f.endsWith('.bin')).length, 1, 'one blob left: the shared one');
});

test('the launcher reclaim needs the launcher credential, not a studio token', async () => {
  const token = svc.token('other', ['assets']);
  assert.equal((await call('POST', '/launcher/assets:reclaim', token, {})).status, 401);
  assert.equal((await call('POST', '/launcher/assets:reclaim', '', {})).status, 401);
});
