import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { upload } from './helpers/assets';
import { assertItem, createItem, UNKNOWN_ID } from './helpers/gallery';
import { client, send } from './helpers/http';
import { fixture, startLauncher, type LauncherClient } from './helpers/launcher';
import { assertError } from './helpers/scenario';
import { openSse, type SseConnection, type SseMessage } from './helpers/sse';
import type { TestService } from './helpers/service';

/**
 * The user's changes to any studio's gallery item from the launcher
 * (docs/api.md §Launcher-side reads and edits): `PATCH` and `DELETE
 * /launcher/gallery/items/{id}` act as the studio that owns the item, with the
 * studio route's rules and codes; and the `item` events `/launcher/events`
 * sends for every studio's items (created, updated, deleted, purged by an
 * uninstall), which a studio's own `/events` never carries.
 */

let svc: TestService;
let l: LauncherClient;
let cred: string;
let alpha: ReturnType<typeof client>;
let beta: ReturnType<typeof client>;
let alphaToken: string;
let events: SseConnection;

const itemEvents = () => events.events.filter((m) => m.event === 'item').map((m) => JSON.parse(m.data) as { id: string; studio_id: string; change: string });
const patch = (id: string, body: unknown, token: string | null = cred, headers: Record<string, string> = {}) =>
  send(svc.port, { method: 'PATCH', path: `/api/v1/launcher/gallery/items/${id}`, token, body, headers: { 'Content-Type': 'application/merge-patch+json', ...headers } });
const del = (id: string, token: string | null = cred, headers: Record<string, string> = {}) =>
  send(svc.port, { method: 'DELETE', path: `/api/v1/launcher/gallery/items/${id}`, token, headers });
const waitItem = (id: string, change: string, ms = 3000): Promise<SseMessage[]> =>
  events.waitFor((m) => m.event === 'item' && JSON.parse(m.data).id === id && JSON.parse(m.data).change === change, 1, ms);

async function newItem(c: ReturnType<typeof client>, token: string, body: Record<string, unknown> = {}): Promise<any> {
  // Fresh bytes each time: an item of its own asset.
  const res = await upload(svc.port, token, randomBytes(64), 'kind=other');
  assert.equal(res.status, 201, res.body.toString());
  const asset = res.json;
  return createItem(c, { asset_id: asset.id, title: 'a drawing', tags: ['one'], ...body });
}

before(async () => {
  ({ svc, l } = await startLauncher());
  cred = l.cred;
  alphaToken = svc.studio('alpha', ['assets', 'gallery', 'jobs']);
  alpha = client(svc.port, alphaToken);
  beta = client(svc.port, svc.studio('beta', ['assets', 'gallery', 'gallery.read_all']));
  events = await openSse(svc.port, '/launcher/events', cred);
  assert.equal(events.status, 200);
});

after(async () => {
  events?.close();
  await svc?.stop();
});

describe('PATCH /launcher/gallery/items/{id}', () => {
  test("star, title and tags of any studio's item, as its owner would: the studio reads the change", async () => {
    const it = await newItem(alpha, alphaToken);
    const starred = assertItem(await patch(it.id, { starred: true }), 200);
    assert.equal(starred.starred, true);
    assert.equal(starred.studio_id, 'alpha', 'still the studio\'s item');
    assert.equal(starred.title, 'a drawing', 'a merge patch: the rest stays');
    assert.ok(starred.updated_at >= it.updated_at);
    const changed = assertItem(await patch(it.id, { title: 'renamed', tags: ['b', 'a', 'b'] }), 200);
    assert.deepEqual([changed.title, changed.tags, changed.starred], ['renamed', ['b', 'a'], true]);
    const own = assertItem(await alpha.get(`/gallery/items/${it.id}`), 200);
    assert.deepEqual([own.title, own.tags, own.starred], ['renamed', ['b', 'a'], true]);
    // The search index follows the title, as on the studio route.
    assert.deepEqual((await l.get('/launcher/gallery/items?q=renamed')).json.items.map((i: any) => i.id), [it.id]);
    const cleared = assertItem(await patch(it.id, { title: null, tags: null, starred: false }), 200);
    assert.deepEqual([cleared.title, cleared.tags, cleared.starred], [null, [], false]);
    assert.deepEqual(assertItem(await patch(it.id, {}), 200).tags, [], 'an empty patch changes nothing but answers the item');
  });

  test('every bad input: 400 bad_request, and nothing is written', async () => {
    const it = await newItem(alpha, alphaToken, { title: 'kept', tags: ['kept'] });
    const rows: [string, unknown][] = [
      ['another member', { params: { prompt: 'x' } }],
      ['asset_id', { asset_id: it.asset_id }],
      ['studio_id', { studio_id: 'beta' }],
      ['starred not a boolean', { starred: 'yes' }],
      ['title not a string', { title: 5 }],
      ['title too long', { title: 'x'.repeat(1001) }],
      ['tags not an array', { tags: 'a' }],
      ['an empty tag', { tags: [''] }],
      ['a tag with a control character', { tags: ['a\u0007'] }],
      ['a tag too long', { tags: ['t'.repeat(101)] }],
      ['too many tags', { tags: Array.from({ length: 101 }, (_, i) => `t${i}`) }],
      ['not an object', [1, 2]],
      ['null', null],
    ];
    for (const [name, body] of rows) {
      const res = await patch(it.id, body);
      assert.equal(res.status, 400, `${name}: ${res.text}`);
      assertError(res, 400, 'bad_request');
    }
    const raw = await send(svc.port, { method: 'PATCH', path: `/api/v1/launcher/gallery/items/${it.id}`, token: cred, raw: '{"title":', headers: { 'Content-Type': 'application/json' } });
    assertError(raw, 400, 'bad_request');
    const now = assertItem(await alpha.get(`/gallery/items/${it.id}`), 200);
    assert.deepEqual([now.title, now.tags, now.starred, now.updated_at], ['kept', ['kept'], false, it.updated_at]);
  });

  test('a body over the limit: 413 too_large', async () => {
    const it = await newItem(alpha, alphaToken);
    assertError(await patch(it.id, { title: 'x'.repeat(5 * 1024 * 1024) }), 413, 'too_large');
  });

  test('an unknown or deleted item: 404 not_found, before any answer about the body', async () => {
    assertError(await patch(UNKNOWN_ID, { starred: true }), 404, 'not_found');
    assertError(await patch(UNKNOWN_ID, { nonsense: true }), 404, 'not_found');
    assertError(await patch('not-an-id-at-all', { starred: true }), 404, 'not_found');
    const it = await newItem(alpha, alphaToken);
    assert.equal((await alpha.delete(`/gallery/items/${it.id}`)).status, 204);
    assertError(await patch(it.id, { starred: true }), 404, 'not_found');
    assertError(await patch(it.id, { nonsense: true }), 404, 'not_found');
  });
});

describe('DELETE /launcher/gallery/items/{id}', () => {
  test("any studio's item: 204, then it is gone from every list and read; again: 404", async () => {
    const it = await newItem(beta, svc.token('beta', ['assets', 'gallery']));
    assert.equal((await del(it.id)).status, 204);
    assertError(await beta.get(`/gallery/items/${it.id}`), 404, 'not_found');
    assertError(await l.get(`/launcher/gallery/items/${it.id}`), 404, 'not_found');
    assert.ok(!(await l.get('/launcher/gallery/items?limit=500')).json.items.some((i: any) => i.id === it.id));
    assert.ok(!(await beta.get('/gallery/items?limit=500')).json.items.some((i: any) => i.id === it.id));
    assertError(await del(it.id), 404, 'not_found');
    assertError(await patch(it.id, { starred: true }), 404, 'not_found');
  });

  test('an unknown item: 404 not_found', async () => {
    assertError(await del(UNKNOWN_ID), 404, 'not_found');
    assertError(await del('%E0%A4%A'), 400, 'bad_request');
  });
});

describe('who may call', () => {
  test('no credential, a studio token (even with gallery.read_all): 401; another origin: 403 bad_origin; nothing changes', async () => {
    const it = await newItem(alpha, alphaToken);
    const readAll = svc.token('beta', ['assets', 'gallery', 'gallery.read_all']);
    for (const token of [null, alphaToken, readAll]) {
      assertError(await patch(it.id, { starred: true }, token), 401, 'unauthenticated');
      assertError(await del(it.id, token), 401, 'unauthenticated');
    }
    const foreign: Record<string, string>[] = [{ Origin: 'http://evil.example' }, { Origin: `http://alpha.localhost:${svc.port}` }, { Host: `alpha.localhost:${svc.port}` }];
    for (const headers of foreign) {
      assertError(await patch(it.id, { starred: true }, cred, headers), 403, 'bad_origin');
      assertError(await del(it.id, cred, headers), 403, 'bad_origin');
    }
    const now = assertItem(await alpha.get(`/gallery/items/${it.id}`), 200);
    assert.equal(now.starred, false);
    // The launcher credential opens no studio route.
    assertError(await send(svc.port, { method: 'PATCH', path: `/api/v1/gallery/items/${it.id}`, token: cred, body: { starred: true } }), 401, 'unauthenticated');
  });
});

describe('item events on /launcher/events', () => {
  test('created, updated (by the launcher and by the studio) and deleted, each once, with id, studio_id and change', async () => {
    const it = await newItem(alpha, alphaToken);
    await waitItem(it.id, 'created');
    assert.equal((await patch(it.id, { starred: true })).status, 200);
    await waitItem(it.id, 'updated');
    assert.equal((await alpha.patch(`/gallery/items/${it.id}`, { title: 'by the studio' })).status, 200);
    await waitItem(it.id, 'updated', 2);
    assert.equal((await del(it.id)).status, 204);
    await waitItem(it.id, 'deleted');
    const mine = itemEvents().filter((e) => e.id === it.id);
    assert.deepEqual(mine, [
      { id: it.id, studio_id: 'alpha', change: 'created' },
      { id: it.id, studio_id: 'alpha', change: 'updated' },
      { id: it.id, studio_id: 'alpha', change: 'updated' },
      { id: it.id, studio_id: 'alpha', change: 'deleted' },
    ]);
  });

  test('a refused change says nothing', async () => {
    const it = await newItem(alpha, alphaToken);
    await waitItem(it.id, 'created');
    assertError(await patch(it.id, { nonsense: 1 }), 400, 'bad_request');
    assertError(await alpha.patch(`/gallery/items/${it.id}`, { nonsense: 1 }), 400, 'bad_request');
    assertError(await beta.delete(`/gallery/items/${it.id}`), 404, 'not_found');
    // A marker after them: every event before it has arrived.
    const marker = await newItem(alpha, alphaToken);
    await waitItem(marker.id, 'created');
    assert.deepEqual(itemEvents().filter((e) => e.id === it.id).map((e) => e.change), ['created']);
  });

  test("a studio's own /events never carries item events", async () => {
    const own = await openSse(svc.port, '/events', alphaToken);
    try {
      const it = await newItem(alpha, alphaToken);
      await waitItem(it.id, 'created');
      assert.equal((await patch(it.id, { starred: true })).status, 200);
      await waitItem(it.id, 'updated');
      // Its own job event as a marker that the stream is live and in order.
      const job = await alpha.post('/jobs', { title: 'marker' });
      assert.equal(job.status, 201, job.text);
      await own.waitFor((m) => m.event === 'job' && JSON.parse(m.data).id === job.json.id);
      assert.equal(own.events.filter((m) => m.event === 'item').length, 0);
    } finally {
      own.close();
    }
  });

  test('an uninstall with purge: one deleted event per live item of the studio; without purge: none', async () => {
    const source = fixture({ id: 'purgeme', name: 'Purge me', capabilities: ['assets', 'gallery'] });
    await l.installOk(source);
    const token = svc.token('purgeme', ['assets', 'gallery']);
    const c = client(svc.port, token);
    const items = [await newItem(c, token), await newItem(c, token), await newItem(c, token)];
    assert.equal((await c.delete(`/gallery/items/${items[2].id}`)).status, 204);
    await waitItem(items[2].id, 'deleted');
    await l.uninstall('purgeme', true);
    for (const it of items.slice(0, 2)) await waitItem(it.id, 'deleted');
    const deleted = itemEvents().filter((e) => e.studio_id === 'purgeme' && e.change === 'deleted').map((e) => e.id).sort();
    assert.deepEqual(deleted, items.map((i) => i.id).sort(), 'each item once: the one deleted before is not announced again');
    assert.deepEqual((await l.get('/launcher/gallery/items?studio=purgeme')).json.items, []);

    await l.installOk(source);
    const again = client(svc.port, svc.token('purgeme', ['assets', 'gallery']));
    const kept = await newItem(again, svc.token('purgeme', ['assets', 'gallery']));
    await waitItem(kept.id, 'created');
    await l.uninstall('purgeme', false);
    const marker = await newItem(alpha, alphaToken);
    await waitItem(marker.id, 'created');
    assert.ok(!itemEvents().some((e) => e.id === kept.id && e.change === 'deleted'), 'kept items are not deleted');
    assert.equal((await l.get(`/launcher/gallery/items/${kept.id}`)).status, 200);
  });
});
