import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { getAsset } from './helpers/assets';
import { createItem, INSTANT, newAsset, ULID, UNKNOWN_ID } from './helpers/gallery';
import { client } from './helpers/http';
import { fixture, sleep, startLauncher, type LauncherClient } from './helpers/launcher';
import { assertError } from './helpers/scenario';
import { openSse, type SseConnection } from './helpers/sse';
import type { TestService } from './helpers/service';

/**
 * Handoffs, black box (docs/api.md "Handoffs"): the manifest's `accepts`,
 * every check of `POST /handoffs` in its documented order, who sees what, the
 * user's approval (once or always), the all-or-nothing accept and the grant it
 * makes (the same as an upload of the bytes), withdraw, the events on each
 * channel, the pending quota, expiry, and an uninstall with purge.
 */

const KEYS = ['accepted_session_id', 'asset_ids', 'created_at', 'from', 'id', 'item_id', 'note', 'session_id', 'state', 'to', 'updated_at'];
/** The launcher's view adds the offered session's name. */
const LAUNCHER_KEYS = [...KEYS, 'session_name'].sort();
const ALL = ['assets', 'gallery', 'jobs', 'kv', 'timeline'];

let svc: TestService;
let l: LauncherClient;
let sender: ReturnType<typeof client>;
let senderToken: string;
let rx: ReturnType<typeof client>;
let rxToken: string;
let other: ReturnType<typeof client>;
let otherToken: string;
let launcherEvents: SseConnection;
let senderEvents: SseConnection;
let rxEvents: SseConnection;

function assertHandoff(res: { status: number; json: any; text: string }, status: number, keys = KEYS): any {
  assert.equal(res.status, status, res.text);
  const h = res.json;
  assert.deepEqual(Object.keys(h).sort(), keys);
  assert.match(h.id, ULID);
  assert.match(h.created_at, INSTANT);
  assert.match(h.updated_at, INSTANT);
  return h;
}

const offer = (body: Record<string, unknown>, c = sender) => c.post('/handoffs', { to: 'receiver', ...body });
async function offerOk(body: Record<string, unknown>, c = sender): Promise<any> {
  return assertHandoff(await offer(body, c), 201);
}
const image = () => newAsset(svc.port, senderToken, 'image');
const approve = (id: string, body: unknown = {}) => l.post(`/launcher/handoffs/${id}:approve`, body);
const decline = (id: string) => l.post(`/launcher/handoffs/${id}:decline`);
const handoffEvents = (sse: SseConnection, id: string) =>
  sse.events.filter((m) => m.event === 'handoff').map((m) => JSON.parse(m.data)).filter((d) => d.id === id);

before(async () => {
  ({ svc, l } = await startLauncher());
  const receiver = fixture({ id: 'receiver', name: 'Receiver', capabilities: ALL, accepts: { kinds: ['image', 'video'], path: '/receive' } });
  const plain = fixture({ id: 'plain', name: 'Plain', capabilities: ['assets'] });
  const listener = fixture({ id: 'listener', name: 'Listener', capabilities: ['assets'], accepts: { kinds: ['audio'] } });
  for (const dir of [receiver, plain, listener]) await l.installOk(dir);
  senderToken = svc.studio('sender', ALL);
  sender = client(svc.port, senderToken);
  rxToken = svc.token('receiver', ALL);
  rx = client(svc.port, rxToken);
  otherToken = svc.studio('other', ALL);
  other = client(svc.port, otherToken);
  launcherEvents = await openSse(svc.port, '/launcher/events', l.cred);
  senderEvents = await openSse(svc.port, '/events', senderToken);
  rxEvents = await openSse(svc.port, '/events', rxToken);
});

after(async () => {
  for (const s of [launcherEvents, senderEvents, rxEvents]) s?.close();
  await svc?.stop();
});

describe('the manifest declares what a studio accepts', () => {
  test('the studio shows its accepts, the path defaulting to /; a studio without one shows null', async () => {
    assert.deepEqual((await l.studio('receiver')).accepts, { kinds: ['image', 'video'], path: '/receive' });
    assert.deepEqual((await l.studio('listener')).accepts, { kinds: ['audio'], path: '/' });
    assert.equal((await l.studio('plain')).accepts, null);
  });

  test('a bad accepts is 400 bad_request naming the member, and nothing is installed', async () => {
    const cases: [unknown, string][] = [
      [{ kinds: [] }, 'manifest.accepts.kinds'],
      [{ kinds: ['picture'] }, 'manifest.accepts.kinds.0'],
      [{ kinds: ['image', 'image'] }, 'manifest.accepts.kinds'],
      [{ kinds: ['image'], path: 'receive' }, 'manifest.accepts.path'],
      [{ kinds: ['image'], path: '/receive?x=1' }, 'manifest.accepts.path'],
      [{ kinds: ['image'], path: '/a b' }, 'manifest.accepts.path'],
      [{ kinds: ['image'], open: '/' }, 'manifest.accepts.open'],
      [['image'], 'manifest.accepts'],
    ];
    for (const [accepts, member] of cases) {
      const dir = fixture({ id: 'badaccepts', accepts });
      const { res } = await l.install(dir);
      assertError(res, 400, 'bad_request');
      assert.equal(res.json.details.member, member, JSON.stringify(accepts));
      assert.equal(await l.studio('badaccepts'), null);
    }
  });
});

describe('POST /handoffs: each check, in order', () => {
  test('bad bodies are 400 bad_request', async () => {
    const a = await image();
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `01ARZ3NDEKTSV4RRFFQ69G5F${String(i).padStart(2, '0').replace(/[^0-9]/g, '0')}`);
    const bodies: unknown[] = [
      {},
      { to: 'receiver' },
      { to: 'receiver', asset_ids: [] },
      { to: 'receiver', asset_ids: 'x' },
      { to: 'receiver', asset_ids: [a.id, a.id] },
      { to: 'receiver', asset_ids: ['not-a-ulid'] },
      { to: 'receiver', asset_ids: ids(51) },
      { to: 'Receiver!', asset_ids: [a.id] },
      { to: 'receiver', asset_ids: [a.id], note: 'x'.repeat(501) },
      { to: 'receiver', asset_ids: [a.id], note: 5 },
      { to: 'receiver', asset_ids: [a.id], extra: true },
      { to: 'receiver', asset_ids: [a.id], item_id: '' },
      [a.id],
    ];
    for (const body of bodies) assertError(await sender.post('/handoffs', body), 400, 'bad_request');
    assert.equal((await sender.post('/handoffs', { to: 'receiver', asset_ids: [a.id], note: '✓'.repeat(500) })).status, 201, 'a note of 500 characters');
  });

  test('capabilities: assets always; kv too with a session', async () => {
    const a = await image();
    const noAssets = client(svc.port, svc.token('sender', ['gallery', 'kv']));
    assertError(await noAssets.post('/handoffs', { to: 'receiver', asset_ids: [a.id] }), 403, 'capability_required');
    const noKv = client(svc.port, svc.token('sender', ['assets']));
    const session = (await sender.post('/sessions', { name: 'caps' })).json;
    assertError(await noKv.post('/handoffs', { to: 'receiver', asset_ids: [a.id], session_id: session.id }), 403, 'capability_required');
    assertHandoff(await noKv.post('/handoffs', { to: 'receiver', asset_ids: [a.id] }), 201);
  });

  test('1. an asset or item the caller may not read is 404, before every other check', async () => {
    const mine = await image();
    const theirs = await newAsset(svc.port, otherToken, 'image');
    assertError(await offer({ asset_ids: [mine.id, theirs.id] }), 404, 'not_found');
    assertError(await offer({ asset_ids: [UNKNOWN_ID] }), 404, 'not_found');
    const theirItem = await createItem(other, { asset_id: theirs.id });
    assertError(await offer({ asset_ids: [mine.id], item_id: theirItem.id }), 404, 'not_found');
    assertError(await offer({ asset_ids: [mine.id], item_id: 'nope' }), 404, 'not_found');
    // Before self_handoff, unknown_session, not_installed, not_launchable.
    assertError(await offer({ to: 'sender', asset_ids: [theirs.id], session_id: 'nope' }), 404, 'not_found');
    assertError(await offer({ to: 'nobody', asset_ids: [UNKNOWN_ID] }), 404, 'not_found');
    // With gallery.read_all, another studio's item may go with the offer.
    const reader = client(svc.port, svc.token('sender', [...ALL, 'gallery.read_all']));
    assertHandoff(await reader.post('/handoffs', { to: 'receiver', asset_ids: [mine.id], item_id: theirItem.id }), 201);
  });

  test('2. to the caller itself is 422 self_handoff, before the session check', async () => {
    const a = await image();
    assertError(await offer({ to: 'sender', asset_ids: [a.id] }), 422, 'self_handoff');
    assertError(await offer({ to: 'sender', asset_ids: [a.id], session_id: 'nope' }), 422, 'self_handoff');
  });

  test("3. a session that is not one of the caller's live sessions is 422 unknown_session, before not_installed", async () => {
    const a = await image();
    const theirs = (await other.post('/sessions', { name: 'theirs' })).json;
    const gone = (await sender.post('/sessions', { name: 'gone' })).json;
    assert.equal((await sender.delete(`/sessions/${gone.id}`)).status, 204);
    for (const id of ['nope', theirs.id, gone.id]) assertError(await offer({ asset_ids: [a.id], session_id: id }), 422, 'unknown_session');
    assertError(await offer({ to: 'nobody', asset_ids: [a.id], session_id: 'nope' }), 422, 'unknown_session');
  });

  test('4. a recipient that is not installed is 409 not_installed (unknown, or only registered from the CLI)', async () => {
    const a = await image();
    assertError(await offer({ to: 'nobody', asset_ids: [a.id] }), 409, 'not_installed');
    assertError(await offer({ to: 'other', asset_ids: [a.id] }), 409, 'not_installed');
  });

  test('5. a recipient that accepts none of the kinds is 422 not_launchable with its kinds', async () => {
    const img = await image();
    const sound = await newAsset(svc.port, senderToken, 'audio');
    assertError(await offer({ to: 'plain', asset_ids: [img.id] }), 422, 'not_launchable', { accepts: [] });
    assertError(await offer({ to: 'listener', asset_ids: [img.id] }), 422, 'not_launchable', { accepts: ['audio'] });
    assertError(await offer({ asset_ids: [sound.id] }), 422, 'not_launchable', { accepts: ['image', 'video'] });
    // One accepted kind among the offered is enough.
    assertHandoff(await offer({ to: 'listener', asset_ids: [img.id, sound.id] }), 201);
  });

  test('6. the same open handoff (same assets in any order, item and session) is 409 already_exists', async () => {
    const [a, b] = [await image(), await image()];
    const item = await createItem(sender, { asset_id: a.id });
    const first = await offerOk({ asset_ids: [a.id, b.id], item_id: item.id, note: 'first' });
    assert.equal(first.state, 'pending');
    assert.deepEqual([first.from, first.to, first.asset_ids, first.item_id, first.session_id, first.note], ['sender', 'receiver', [a.id, b.id], item.id, null, 'first']);
    assert.equal(first.accepted_session_id, null);
    // Order and note do not matter.
    assertError(await offer({ asset_ids: [b.id, a.id], item_id: item.id, note: 'again' }), 409, 'already_exists', { handoff: first.id });
    // Another item (none), another set or another recipient is another handoff.
    const noItem = await offerOk({ asset_ids: [a.id, b.id] });
    const fewer = await offerOk({ asset_ids: [a.id], item_id: item.id });
    // Still the same once approved; no longer once it is over.
    assert.equal((await approve(first.id)).status, 200);
    assertError(await offer({ asset_ids: [a.id, b.id], item_id: item.id }), 409, 'already_exists', { handoff: first.id });
    assert.equal((await sender.delete(`/handoffs/${first.id}`)).status, 204);
    await offerOk({ asset_ids: [a.id, b.id], item_id: item.id });
    for (const h of [noItem, fewer]) assert.equal((await sender.delete(`/handoffs/${h.id}`)).status, 204);
  });

  test('7. at most 20 pending per studio: one more is 429 quota_exceeded; answering one frees a place', async () => {
    const q = client(svc.port, svc.studio('flood', ALL));
    const floodToken = svc.token('flood', ALL);
    const made: any[] = [];
    for (let i = 0; i < 20; i++) {
      const a = await newAsset(svc.port, floodToken, 'image');
      made.push(await offerOk({ asset_ids: [a.id] }, q));
    }
    const a = await newAsset(svc.port, floodToken, 'image');
    assertError(await offer({ asset_ids: [a.id] }, q), 429, 'quota_exceeded', { quota: 'pending_handoffs', limit: 20, used: 20 });
    // Another studio's quota is its own.
    await offerOk({ asset_ids: [(await image()).id] });
    assert.equal((await decline(made[0].id)).status, 200);
    const ok = await offerOk({ asset_ids: [a.id] }, q);
    const b = await newAsset(svc.port, floodToken, 'image');
    assertError(await offer({ asset_ids: [b.id] }, q), 429, 'quota_exceeded');
    // An approved one does not wait for the user: it does not count.
    assert.equal((await approve(ok.id)).status, 200);
    await offerOk({ asset_ids: [b.id] }, q);
    for (const h of (await l.get('/launcher/handoffs?state=pending&limit=500')).json.items.filter((h: any) => h.from === 'flood')) {
      assert.equal((await decline(h.id)).status, 200);
    }
  });
});

describe('who sees a handoff', () => {
  test('the sender always; the recipient only once approved; anyone else never', async () => {
    const a = await image();
    const h = await offerOk({ asset_ids: [a.id] });
    assertHandoff(await sender.get(`/handoffs/${h.id}`), 200);
    assertError(await rx.get(`/handoffs/${h.id}`), 404, 'not_found');
    assertError(await other.get(`/handoffs/${h.id}`), 404, 'not_found');
    assert.ok(!(await rx.get('/handoffs?limit=500')).json.items.some((x: any) => x.id === h.id));
    assert.ok((await sender.get('/handoffs?direction=sent&limit=500')).json.items.some((x: any) => x.id === h.id));
    assert.equal((await approve(h.id)).status, 200);
    assert.equal(assertHandoff(await rx.get(`/handoffs/${h.id}`), 200).state, 'approved');
    assert.ok((await rx.get('/handoffs?direction=received&limit=500')).json.items.some((x: any) => x.id === h.id));
    assert.ok(!(await rx.get('/handoffs?direction=sent&limit=500')).json.items.some((x: any) => x.id === h.id));
    assert.ok(!(await sender.get('/handoffs?direction=received&limit=500')).json.items.some((x: any) => x.id === h.id));
    assertError(await other.get(`/handoffs/${h.id}`), 404, 'not_found');
    // Still seen by the recipient once withdrawn.
    assert.equal((await sender.delete(`/handoffs/${h.id}`)).status, 204);
    assert.equal(assertHandoff(await rx.get(`/handoffs/${h.id}`), 200).state, 'withdrawn');
    // A declined one never reaches the recipient.
    const d = await offerOk({ asset_ids: [(await image()).id] });
    assert.equal((await decline(d.id)).status, 200);
    assertError(await rx.get(`/handoffs/${d.id}`), 404, 'not_found');
    assert.equal(assertHandoff(await sender.get(`/handoffs/${d.id}`), 200).state, 'declined');
  });

  test('lists: newest first, pages with cursors bound to their filters, bad queries 400', async () => {
    const p = client(svc.port, svc.studio('pager', ALL));
    const pagerToken = svc.token('pager', ALL);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await offerOk({ asset_ids: [(await newAsset(svc.port, pagerToken, 'image')).id] }, p)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await p.get(`/handoffs?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      assert.equal(r.status, 200, r.text);
      assert.ok(r.json.items.length <= 2);
      seen.push(...r.json.items.map((h: any) => h.id));
      cursor = r.json.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [...made].reverse());
    const first = (await p.get('/handoffs?limit=2')).json.next_cursor;
    assertError(await p.get(`/handoffs?limit=2&direction=sent&cursor=${encodeURIComponent(first)}`), 400, 'bad_cursor');
    assertError(await sender.get(`/handoffs?limit=2&cursor=${encodeURIComponent(first)}`), 400, 'bad_cursor');
    for (const q of ['direction=both', 'direction=', 'limit=0', 'limit=501', 'cursor=', 'cursor=junk']) {
      assert.equal((await p.get(`/handoffs?${q}`)).status, 400, q);
    }
    for (const q of ['state=maybe', 'limit=x', 'item_id=']) assert.equal((await l.get(`/launcher/handoffs?${q}`)).status, 400, q);
    const pending = (await l.get('/launcher/handoffs?state=pending&limit=500')).json.items;
    assert.ok(pending.every((h: any) => h.state === 'pending'));
    for (const id of made) assert.ok(pending.some((h: any) => h.id === id));
    for (const id of made) assert.equal((await decline(id)).status, 200);
  });

  test('the launcher lists by item, and reads one; unknown ids are 404', async () => {
    const a = await image();
    const item = await createItem(sender, { asset_id: a.id });
    const h = await offerOk({ asset_ids: [a.id], item_id: item.id });
    const byItem = (await l.get(`/launcher/handoffs?item_id=${item.id}`)).json.items;
    assert.deepEqual(byItem.map((x: any) => x.id), [h.id]);
    // By sender and recipient (the editor's bin reads what a studio accepted).
    const toListener = await offerOk({ to: 'listener', asset_ids: [a.id, (await newAsset(svc.port, senderToken, 'audio')).id] });
    const toRx = (await l.get('/launcher/handoffs?to=receiver&from=sender&limit=500')).json.items;
    assert.ok(toRx.some((x: any) => x.id === h.id) && toRx.every((x: any) => x.to === 'receiver' && x.from === 'sender'));
    const waiting = (await l.get('/launcher/handoffs?to=listener&state=pending&limit=500')).json.items;
    assert.ok(waiting.some((x: any) => x.id === toListener.id) && waiting.every((x: any) => x.to === 'listener' && x.state === 'pending'));
    assert.deepEqual((await l.get('/launcher/handoffs?from=receiver')).json.items, []);
    for (const q of ['to=Bad!', 'from=']) assert.equal((await l.get(`/launcher/handoffs?${q}`)).status, 400, q);
    const firstPage = (await l.get('/launcher/handoffs?to=receiver&limit=1')).json.next_cursor;
    assertError(await l.get(`/launcher/handoffs?to=listener&limit=1&cursor=${encodeURIComponent(firstPage)}`), 400, 'bad_cursor');
    assert.equal((await decline(toListener.id)).status, 200);
    assert.deepEqual(assertHandoff(await l.get(`/launcher/handoffs/${h.id}`), 200, LAUNCHER_KEYS), { ...h, session_name: null });
    assertError(await l.get(`/launcher/handoffs/${UNKNOWN_ID}`), 404, 'not_found');
    assertError(await approve(UNKNOWN_ID), 404, 'not_found');
    assertError(await decline(UNKNOWN_ID), 404, 'not_found');
    assert.equal((await decline(h.id)).status, 200);
  });

  test('the launcher side takes the launcher credential only; the studio side a studio token only', async () => {
    assertError(await l.call('GET', '/launcher/handoffs', undefined, senderToken), 401, 'unauthenticated');
    assertError(await l.call('GET', '/launcher/handoff-rules', undefined, rxToken), 401, 'unauthenticated');
    assertError(await l.call('GET', '/handoffs', undefined, l.cred), 401, 'unauthenticated');
  });
});

describe('the user answers: approve once or always, decline', () => {
  test('approve and decline move only a pending handoff; anything else is 409 conflict', async () => {
    const h = await offerOk({ asset_ids: [(await image()).id] });
    assertError(await approve(h.id, { always: 'yes' }), 400, 'bad_request');
    assertError(await approve(h.id, { sometimes: true }), 400, 'bad_request');
    const approved = assertHandoff(await l.post(`/launcher/handoffs/${h.id}:approve`), 200, LAUNCHER_KEYS); // no body: once
    assert.equal(approved.state, 'approved');
    assertError(await approve(h.id), 409, 'conflict');
    assertError(await decline(h.id), 409, 'conflict');
    const d = await offerOk({ asset_ids: [(await image()).id] });
    assert.equal(assertHandoff(await decline(d.id), 200, LAUNCHER_KEYS).state, 'declined');
    assertError(await approve(d.id), 409, 'conflict');
    assertError(await decline(d.id), 409, 'conflict');
    assert.equal((await sender.delete(`/handoffs/${h.id}`)).status, 204);
  });

  test('always: the pair is allowed from then on (created approved), listed, and revoked', async () => {
    const h = await offerOk({ asset_ids: [(await image()).id] });
    assert.equal(assertHandoff(await approve(h.id, { always: true }), 200, LAUNCHER_KEYS).state, 'approved');
    const rules = (await l.get('/launcher/handoff-rules')).json;
    assert.deepEqual(rules.items.map((r: any) => [r.from, r.to]), [['sender', 'receiver']]);
    assert.match(rules.items[0].created_at, INSTANT);
    assert.equal(rules.next_cursor, null);
    const next = await offerOk({ asset_ids: [(await image()).id] });
    assert.equal(next.state, 'approved', 'no question asked');
    await rxEvents.waitFor((m) => m.event === 'handoff' && JSON.parse(m.data).id === next.id, 1, 3000);
    assert.equal(assertHandoff(await rx.get(`/handoffs/${next.id}`), 200).state, 'approved');
    // Only that pair.
    assert.equal((await offerOk({ to: 'listener', asset_ids: [(await image()).id, (await newAsset(svc.port, senderToken, 'audio')).id] })).state, 'pending');
    assertError(await l.call('DELETE', '/launcher/handoff-rules/receiver/sender'), 404, 'not_found');
    assertError(await l.call('DELETE', '/launcher/handoff-rules/Bad!/sender'), 400, 'bad_request');
    assert.equal((await l.call('DELETE', '/launcher/handoff-rules/sender/receiver')).status, 204);
    assertError(await l.call('DELETE', '/launcher/handoff-rules/sender/receiver'), 404, 'not_found');
    assert.deepEqual((await l.get('/launcher/handoff-rules')).json.items, []);
    assert.equal((await offerOk({ asset_ids: [(await image()).id] })).state, 'pending', 'asked again');
  });
});

describe('POST /handoffs/{id}:accept', () => {
  test('the recipient reads every offered asset as if it had uploaded it: bytes, thumbnail, sequences, items, lineage', async () => {
    const [a, b] = [await image(), await image()];
    const made = await createItem(sender, { asset_id: a.id, title: 'the drawing' });
    const h = await offerOk({ asset_ids: [a.id, b.id], item_id: made.id, note: 'for your reel' });
    for (const id of [a.id, b.id]) {
      assertError(await rx.get(`/assets/${id}`), 404, 'not_found');
      assert.equal((await getAsset(svc.port, rxToken, `/assets/${id}/thumb`)).status, 404);
    }
    assertError(await rx.post('/timeline', { name: 'before', clips: [{ asset_id: a.id }] }), 422, 'invalid_timeline');
    // Not the recipient's until approved: 404 (it cannot see it yet).
    assertError(await rx.post(`/handoffs/${h.id}:accept`, {}), 404, 'not_found');
    assert.equal((await approve(h.id)).status, 200);
    assertError(await sender.post(`/handoffs/${h.id}:accept`, {}), 404, 'not_found');
    assertError(await other.post(`/handoffs/${h.id}:accept`, {}), 404, 'not_found');
    assertError(await rx.post(`/handoffs/${h.id}:accept`, { session_name: '' }), 400, 'bad_request');
    assertError(await rx.post(`/handoffs/${h.id}:accept`, { extra: 1 }), 400, 'bad_request');
    const accepted = assertHandoff(await rx.post(`/handoffs/${h.id}:accept`, {}), 200);
    assert.equal(accepted.state, 'accepted');
    assert.equal(accepted.accepted_session_id, null);
    const bytes = await getAsset(svc.port, rxToken, `/assets/${a.id}`);
    const original = await getAsset(svc.port, senderToken, `/assets/${a.id}`);
    assert.equal(bytes.status, 200);
    assert.ok(bytes.body.length > 0 && bytes.body.equals(original.body));
    // Its own library file, under the sender's name for it, as an upload of the bytes makes.
    assert.ok(existsSync(join(svc.dataDir, 'library', 'receiver', a.filename)), a.filename);
    assert.equal((await getAsset(svc.port, rxToken, `/assets/${b.id}/thumb`)).status, 200);
    assert.equal((await rx.post('/timeline', { name: 'with the drawing', clips: [{ asset_id: a.id }] })).status, 201);
    const render = await createItem(rx, { asset_id: b.id, inputs: [{ asset_id: a.id, role: 'source' }] });
    const up = (await l.get(`/launcher/gallery/items/${render.id}/lineage`)).json.items.map((i: any) => i.id);
    assert.deepEqual(up, [made.id], "the sender's item is upstream");
    // Accepting again, or after it is over: 409 conflict.
    assertError(await rx.post(`/handoffs/${h.id}:accept`, {}), 409, 'conflict');
    assertError(await sender.delete(`/handoffs/${h.id}`), 409, 'conflict');
  });

  test('with a session: a never-opened copy, named as given or as the original; a clash is 409 name_taken and grants nothing', async () => {
    const a = await image();
    const s = (await sender.post('/sessions', { name: 'Brush settings', state: { size: 12, colour: '#c33' } })).json;
    assert.equal((await sender.post(`/sessions/${s.id}:activate`)).status, 204);
    const h = await offerOk({ asset_ids: [a.id], session_id: s.id });
    // The launcher names the session in its request (studios see only its id).
    assert.equal((await l.get(`/launcher/handoffs/${h.id}`)).json.session_name, 'Brush settings');
    assert.equal((await approve(h.id)).status, 200);
    const clash = (await rx.post('/sessions', { name: 'Brush settings' })).json;
    assertError(await rx.post(`/handoffs/${h.id}:accept`, {}), 409, 'name_taken');
    assertError(await rx.get(`/assets/${a.id}`), 404, 'not_found');
    assert.equal(assertHandoff(await rx.get(`/handoffs/${h.id}`), 200).state, 'approved', 'nothing changed');
    const accepted = assertHandoff(await rx.post(`/handoffs/${h.id}:accept`, { session_name: 'From Sketchpad' }), 200);
    const copy = (await rx.get(`/sessions/${accepted.accepted_session_id}`)).json;
    assert.deepEqual([copy.name, copy.state, copy.opened_at], ['From Sketchpad', { size: 12, colour: '#c33' }, null]);
    assert.notEqual(copy.id, s.id);
    assert.equal((await rx.get(`/assets/${a.id}`)).status, 200);
    // The original's name when none is given.
    assert.equal((await rx.delete(`/sessions/${clash.id}`)).status, 204);
    const h2 = await offerOk({ asset_ids: [(await image()).id], session_id: s.id });
    assert.equal((await approve(h2.id)).status, 200);
    const second = assertHandoff(await rx.post(`/handoffs/${h2.id}:accept`), 200); // no body at all
    assert.equal((await rx.get(`/sessions/${second.accepted_session_id}`)).json.name, 'Brush settings');
  });

  test('something offered is gone: 409 missing naming it, and nothing is granted', async () => {
    // An asset's file removed behind the service's back, beside one that is fine.
    const [gone, fine] = [await image(), await image()];
    const h = await offerOk({ asset_ids: [fine.id, gone.id] });
    assert.equal((await approve(h.id)).status, 200);
    rmSync(join(svc.dataDir, 'blobs', `${gone.sha256}.png`), { force: true });
    assertError(await rx.post(`/handoffs/${h.id}:accept`, {}), 409, 'missing', { missing: [gone.id] });
    assertError(await rx.get(`/assets/${fine.id}`), 404, 'not_found');
    assert.equal(assertHandoff(await rx.get(`/handoffs/${h.id}`), 200).state, 'approved');
    // A deleted item; a deleted session.
    const a = await image();
    const item = await createItem(sender, { asset_id: a.id });
    const s = (await sender.post('/sessions', { name: 'soon gone' })).json;
    const h2 = await offerOk({ asset_ids: [a.id], item_id: item.id, session_id: s.id });
    assert.equal((await approve(h2.id)).status, 200);
    assert.equal((await sender.delete(`/gallery/items/${item.id}`)).status, 204);
    assert.equal((await sender.delete(`/sessions/${s.id}`)).status, 204);
    assertError(await rx.post(`/handoffs/${h2.id}:accept`, {}), 409, 'missing', { missing: [item.id, s.id] });
    assert.equal((await l.get(`/launcher/handoffs/${h2.id}`)).json.session_name, null, 'a deleted session has no name to show');
    assertError(await rx.get(`/assets/${a.id}`), 404, 'not_found');
    assert.equal((await rx.get('/sessions?limit=500')).json.items.filter((x: any) => x.name === 'soon gone').length, 0);
  });
});

describe('reclaim', () => {
  test('an asset on offer (pending or approved) is not reclaimable; once the handoff is over it is again', async () => {
    const a = await image();
    const item = await createItem(sender, { asset_id: a.id });
    assert.equal((await sender.delete(`/gallery/items/${item.id}`)).status, 204);
    const h = await offerOk({ asset_ids: [a.id] });
    assertError(await sender.post('/assets:reclaim', { asset_ids: [a.id] }), 409, 'not_reclaimable', { assets: [a.id] });
    assert.equal((await approve(h.id)).status, 200);
    assertError(await sender.post('/assets:reclaim', { asset_ids: [a.id] }), 409, 'not_reclaimable', { assets: [a.id] });
    assert.equal((await sender.delete(`/handoffs/${h.id}`)).status, 204);
    const preview = await sender.post('/assets:reclaim', { asset_ids: [a.id] });
    assert.equal(preview.status, 200, preview.text);
    assert.deepEqual(preview.json.assets, [a.id]);
  });
});

describe('DELETE /handoffs/{id}', () => {
  test('the sender withdraws a pending or approved one; later, or anyone else, cannot', async () => {
    const h = await offerOk({ asset_ids: [(await image()).id] });
    assertError(await rx.delete(`/handoffs/${h.id}`), 404, 'not_found');
    assertError(await other.delete(`/handoffs/${h.id}`), 404, 'not_found');
    assert.equal((await sender.delete(`/handoffs/${h.id}`)).status, 204);
    assert.equal(assertHandoff(await sender.get(`/handoffs/${h.id}`), 200).state, 'withdrawn');
    assertError(await sender.delete(`/handoffs/${h.id}`), 409, 'conflict');
    assertError(await approve(h.id), 409, 'conflict');
    const ap = await offerOk({ asset_ids: [(await image()).id] });
    assert.equal((await approve(ap.id)).status, 200);
    assert.equal((await sender.delete(`/handoffs/${ap.id}`)).status, 204);
    assertError(await rx.post(`/handoffs/${ap.id}:accept`, {}), 409, 'conflict');
    assertError(await sender.delete(`/handoffs/${UNKNOWN_ID}`), 404, 'not_found');
  });
});

describe('events', () => {
  test("the sender hears every change, the recipient only the approval, the launcher the whole handoff each time", async () => {
    const a = await image();
    const h = await offerOk({ asset_ids: [a.id] });
    await launcherEvents.waitFor((m) => m.event === 'handoff' && JSON.parse(m.data).id === h.id, 1, 3000);
    assert.equal((await approve(h.id)).status, 200);
    await rxEvents.waitFor((m) => m.event === 'handoff' && JSON.parse(m.data).id === h.id, 1, 3000);
    assert.equal((await rx.post(`/handoffs/${h.id}:accept`, {})).status, 200);
    await senderEvents.waitFor((m) => m.event === 'handoff' && JSON.parse(m.data).id === h.id && JSON.parse(m.data).state === 'accepted', 1, 3000);
    await launcherEvents.waitFor((m) => m.event === 'handoff' && JSON.parse(m.data).id === h.id && JSON.parse(m.data).state === 'accepted', 1, 3000);
    assert.deepEqual(handoffEvents(senderEvents, h.id), ['pending', 'approved', 'accepted'].map((state) => ({ id: h.id, from: 'sender', to: 'receiver', state })));
    assert.deepEqual(handoffEvents(rxEvents, h.id), [{ id: h.id, from: 'sender', to: 'receiver', state: 'approved' }]);
    const full = handoffEvents(launcherEvents, h.id);
    assert.deepEqual(full.map((e) => e.state), ['pending', 'approved', 'accepted']);
    for (const e of full) assert.deepEqual(Object.keys(e).sort(), LAUNCHER_KEYS);
    // A declined one never reaches the recipient's channel; another studio hears nothing.
    const d = await offerOk({ asset_ids: [(await image()).id] });
    assert.equal((await decline(d.id)).status, 200);
    await senderEvents.waitFor((m) => m.event === 'handoff' && JSON.parse(m.data).id === d.id && JSON.parse(m.data).state === 'declined', 1, 3000);
    assert.deepEqual(handoffEvents(rxEvents, d.id), []);
    // The launcher hears each change once (not also the studios' copies).
    await launcherEvents.waitFor((m) => m.event === 'handoff' && JSON.parse(m.data).id === d.id && JSON.parse(m.data).state === 'declined', 1, 3000);
    assert.equal(handoffEvents(launcherEvents, d.id).length, 2);
  });
});

describe('expiry and uninstall', () => {
  test('a pending handoff expires after its time: the sender hears it, it frees a place, and can no longer be approved', async () => {
    const short = await startLauncher({ env: { BACKLOT_HANDOFF_TTL_MS: '1500' } });
    try {
      await short.l.installOk(fixture({ id: 'receiver', capabilities: ['assets'], accepts: { kinds: ['image'] } }));
      const token = short.svc.studio('sender', ['assets', 'jobs']);
      const c = client(short.svc.port, token);
      const events = await openSse(short.svc.port, '/events', token);
      try {
        const a = await newAsset(short.svc.port, token, 'image');
        const h = assertHandoff(await c.post('/handoffs', { to: 'receiver', asset_ids: [a.id] }), 201);
        const ap = assertHandoff(await c.post('/handoffs', { to: 'receiver', asset_ids: [(await newAsset(short.svc.port, token, 'image')).id] }), 201);
        assert.equal((await short.l.post(`/launcher/handoffs/${ap.id}:approve`, {})).status, 200);
        await events.waitFor((m) => m.event === 'handoff' && JSON.parse(m.data).state === 'expired', 1, 5000);
        assert.equal(assertHandoff(await c.get(`/handoffs/${h.id}`), 200).state, 'expired');
        assert.equal(assertHandoff(await c.get(`/handoffs/${ap.id}`), 200).state, 'approved', 'only pending ones expire');
        assertError(await short.l.post(`/launcher/handoffs/${h.id}:approve`, {}), 409, 'conflict');
        // The same offer may be made again: the expired one is over.
        assert.equal((await c.post('/handoffs', { to: 'receiver', asset_ids: [a.id] })).status, 201);
      } finally {
        events.close();
      }
    } finally {
      await short.svc.stop();
    }
  });

  test('even without the sweep, a read past the time sees it expired', async () => {
    const short = await startLauncher({ env: { BACKLOT_HANDOFF_TTL_MS: '400' } });
    try {
      await short.l.installOk(fixture({ id: 'receiver', capabilities: ['assets'], accepts: { kinds: ['image'] } }));
      const token = short.svc.studio('sender', ['assets']);
      const c = client(short.svc.port, token);
      const h = assertHandoff(await c.post('/handoffs', { to: 'receiver', asset_ids: [(await newAsset(short.svc.port, token, 'image')).id] }), 201);
      await sleep(450);
      assert.equal((await short.l.get(`/launcher/handoffs?state=expired`)).json.items[0]?.id, h.id);
    } finally {
      await short.svc.stop();
    }
  });

  test("uninstalling a studio with purge ends its open handoffs and its rules; without purge, approving is 409 not_installed", async () => {
    await l.installOk(fixture({ id: 'leaving', name: 'Leaving', capabilities: ['assets'], accepts: { kinds: ['image'] } }));
    const h = await offerOk({ to: 'leaving', asset_ids: [(await image()).id] });
    const ruled = await offerOk({ to: 'leaving', asset_ids: [(await image()).id] });
    assert.equal((await approve(ruled.id, { always: true })).status, 200);
    await l.uninstall('leaving', true);
    assert.equal(assertHandoff(await sender.get(`/handoffs/${h.id}`), 200).state, 'withdrawn');
    assert.equal(assertHandoff(await sender.get(`/handoffs/${ruled.id}`), 200).state, 'withdrawn');
    assert.ok(!(await l.get('/launcher/handoff-rules')).json.items.some((r: any) => r.to === 'leaving'));
    assertError(await offer({ to: 'leaving', asset_ids: [(await image()).id] }), 409, 'not_installed');

    await l.installOk(fixture({ id: 'leaving2', name: 'Leaving too', capabilities: ['assets'], accepts: { kinds: ['image'] } }));
    const kept = await offerOk({ to: 'leaving2', asset_ids: [(await image()).id] });
    await l.uninstall('leaving2', false);
    assertError(await approve(kept.id), 409, 'not_installed');
    assert.equal((await decline(kept.id)).status, 200);
  });
});
