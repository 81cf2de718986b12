import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { asHttp, getAsset, makePng, rawRequest, upload, type BytesResponse } from './helpers/assets';
import { ffmpegWrapper, freshConnections, JOB_KEYS } from './helpers/export';
import { assertItem, createItem, ids, newestFirst, walk, UNKNOWN_ID } from './helpers/gallery';
import { loginCodeOf, spendLoginCode } from './helpers/login';
import { client, send } from './helpers/http';
import { makeAudio, makeVideo, requireFfmpeg } from './helpers/media';
import { assertError } from './helpers/scenario';
import { startService, tempDir, type TestService } from './helpers/service';
import { openSse, type SseConnection } from './helpers/sse';
import { assertTimeline, MERGE } from './helpers/timeline';

/**
 * The launcher's reads and edits (docs/api.md "Launcher-side reads and
 * edits"), black-box against the real service with the real ffmpeg: every
 * studio's gallery under /launcher/gallery (filters, q, pages, lineage), any
 * asset's bytes and thumbnail under /launcher/assets (ranges, 304, HEAD), the
 * opened sequence under /launcher/timeline/{id} acting as its owning studio
 * (If-Match and 409, revisions, revert, plan, an export cancelled through
 * /launcher/jobs and one that succeeds), the headers of every stored file
 * (nosniff, CSP sandbox, attachment for types that can run script) on the
 * launcher's and the studios' routes, and who may call: the credential as
 * Bearer (a browser sign-in's too, never as a cookie); never a studio token; never another origin.
 */

type Client = ReturnType<typeof client>;

let svc: TestService;
let dir: string;
let wrapper: ReturnType<typeof ffmpegWrapper>;
let cred: string;
let l: Client;
let alpha: Client;
let beta: Client;
let alphaToken: string;
let betaToken: string;
const asset: Record<string, any> = {};
const item: Record<string, any> = {};
/** Every live item, as created. */
const live: any[] = [];

const CSP = "default-src 'none'; sandbox";

async function uploadOk(token: string, bytes: Buffer, query: string, type?: string): Promise<any> {
  const res = await upload(svc.port, token, bytes, query, type);
  assert.ok(res.status === 201 || res.status === 200, res.body.toString());
  return res.json;
}

function bytesOf(path: string, headers: Record<string, string> = {}, method = 'GET', token: string = cred): Promise<BytesResponse> {
  return getAsset(svc.port, token, path, headers, method);
}

/** The headers every stored file carries; `attachment` says whether it must be a download. */
function assertFileHeaders(res: BytesResponse, attachment: boolean, what: string): void {
  assert.equal(res.headers['x-content-type-options'], 'nosniff', what);
  assert.equal(res.headers['content-security-policy'], CSP, what);
  const disposition = res.headers['content-disposition'];
  if (attachment) assert.match(String(disposition), /^attachment; filename="[^"]*"; filename\*=UTF-8''/, what);
  else assert.equal(disposition, undefined, what);
}

before(async () => {
  requireFfmpeg();
  freshConnections();
  dir = tempDir('backlot-lreads-');
  wrapper = ffmpegWrapper(dir);
  writeFileSync(wrapper.mode, 'normal');
  svc = await startService({ env: { BACKLOT_FFMPEG: wrapper.path } });
  const r = svc.cli(['launcher-token']);
  assert.equal(r.code, 0, r.stderr);
  cred = r.stdout.trim();
  l = client(svc.port, cred);
  alphaToken = svc.studio('alpha', ['assets', 'gallery', 'timeline', 'jobs']);
  betaToken = svc.studio('beta', ['assets', 'gallery', 'timeline', 'jobs']);
  alpha = client(svc.port, alphaToken);
  beta = client(svc.port, betaToken);

  const png = await Promise.all([1, 2, 3, 4, 5].map((s) => makePng(16, 12, 1000 + s)));
  asset.p1 = await uploadOk(alphaToken, png[0]!, 'kind=image&filename=one.png', 'image/png');
  asset.p2 = await uploadOk(alphaToken, png[1]!, 'kind=image&filename=two.png', 'image/png');
  asset.p3 = await uploadOk(betaToken, png[2]!, 'kind=image&filename=three.png', 'image/png');
  asset.p4 = await uploadOk(betaToken, png[3]!, 'kind=image&filename=four.png', 'image/png');
  asset.p5 = await uploadOk(alphaToken, png[4]!, 'kind=image&filename=five.png', 'image/png');
  // beta gains read access to p2 by uploading the same bytes.
  assert.equal((await uploadOk(betaToken, png[1]!, 'kind=image&filename=mine.png', 'image/png')).id, asset.p2.id);

  const add = async (c: Client, body: Record<string, unknown>) => {
    const it = await createItem(c, body);
    live.push(it);
    return it;
  };
  item.a1 = await add(alpha, { asset_id: asset.p1.id, title: 'red fox at sunrise', tags: ['animal', 'warm'], starred: true });
  item.a2 = await add(alpha, { asset_id: asset.p2.id, title: 'blue lake', tags: ['water'], inputs: [{ asset_id: asset.p1.id, role: 'init_image' }] });
  item.b1 = await add(beta, { asset_id: asset.p3.id, title: 'fox in snow', tags: ['animal'], inputs: [{ asset_id: asset.p2.id, role: 'init_image' }] });
  for (let n = 0; n < 9; n++) await add(n % 2 ? alpha : beta, { asset_id: n % 2 ? asset.p5.id : asset.p4.id, title: `filler ${n}` });
  item.gone = await createItem(beta, { asset_id: asset.p4.id, title: 'mountain fox', tags: ['animal'] });
  assert.equal((await beta.delete(`/gallery/items/${item.gone.id}`)).status, 204);
});

after(async () => {
  await svc?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('who may call', () => {
  const paths = () => [
    '/launcher/gallery/items',
    `/launcher/gallery/items/${item.a1.id}`,
    `/launcher/gallery/items/${item.a1.id}/lineage`,
    `/launcher/assets/${asset.p1.id}`,
    `/launcher/assets/${asset.p1.id}/thumb`,
    `/launcher/assets/${asset.p1.id}/lineage`,
  ];

  test('no credential and a studio token: 401 on every launcher read', async () => {
    for (const path of paths()) {
      assertError(await send(svc.port, { path: `/api/v1${path}` }), 401, 'unauthenticated');
      assertError(await send(svc.port, { path: `/api/v1${path}`, token: alphaToken }), 401, 'unauthenticated');
    }
  });

  test('another Origin or a studio host: 403 bad_origin, even with the credential', async () => {
    for (const path of paths()) {
      assertError(await send(svc.port, { path: `/api/v1${path}`, token: cred, headers: { Origin: 'http://evil.example' } }), 403, 'bad_origin');
      assertError(
        await send(svc.port, { path: `/api/v1${path}`, token: cred, headers: { Origin: `http://alpha.localhost:${svc.port}` } }),
        403,
        'bad_origin',
      );
      assertError(await send(svc.port, { path: `/api/v1${path}`, token: cred, headers: { Host: `alpha.localhost:${svc.port}` } }), 403, 'bad_origin');
    }
  });

  test("a browser sign-in's credential opens them as the launcher-token one does, as a Bearer header only; it never opens a studio route", async () => {
    const url = svc.cli(['login-url']).stdout.trim();
    const res = await spendLoginCode(svc.port, loginCodeOf(url));
    assert.equal(res.status, 200, res.text);
    const browser = res.json.credential as string;
    const list = await send(svc.port, { path: '/api/v1/launcher/gallery/items?limit=100', token: browser });
    assert.equal(list.status, 200, list.text);
    assert.equal(list.json.items.length, live.length);
    const bytes = await rawRequest(svc.port, { path: `/api/v1/launcher/assets/${asset.p3.id}`, token: browser });
    assert.equal(bytes.status, 200);
    assert.equal(bytes.body.length, asset.p3.size);
    // As a cookie it is nothing.
    assertError(await send(svc.port, { path: '/api/v1/launcher/gallery/items', headers: { Cookie: `backlot_launcher=${browser}` } }), 401, 'unauthenticated');
    assert.equal((await rawRequest(svc.port, { path: `/api/v1/launcher/assets/${asset.p3.id}`, headers: { Cookie: `backlot_launcher=${browser}` } })).status, 401);
    assertError(await send(svc.port, { path: '/api/v1/gallery/items', token: browser }), 401, 'unauthenticated');
    assertError(await send(svc.port, { path: '/api/v1/gallery/items', token: cred }), 401, 'unauthenticated');
    assertError(await send(svc.port, { path: `/api/v1/assets/${asset.p1.id}`, token: cred }), 401, 'unauthenticated');
  });
});

describe('GET /launcher/gallery/items', () => {
  test("every studio's live items, newest first, page by page", async () => {
    const expected = ids(newestFirst(live));
    for (const limit of [1, 4, 100]) assert.deepEqual(ids(await walk(l, '/launcher/gallery/items', limit)), expected, `limit ${limit}`);
    const first = await l.get('/launcher/gallery/items?limit=100');
    for (const it of first.json.items) assert.deepEqual(Object.keys(it).sort(), Object.keys(item.a1).sort());
    assert.ok(!ids(first.json.items).includes(item.gone.id), 'a deleted item never');
  });

  test('the studio route\'s filters, q and their combinations', async () => {
    const get = async (query: string) => {
      const res = await l.get(`/launcher/gallery/items?limit=100&${query}`);
      assert.equal(res.status, 200, `${query}: ${res.text}`);
      return ids(res.json.items);
    };
    const of = (...items: any[]) => ids(newestFirst(items));
    assert.deepEqual(await get('studio=beta'), ids(newestFirst(live.filter((i) => i.studio_id === 'beta'))));
    assert.deepEqual(await get('studio=alpha'), ids(newestFirst(live.filter((i) => i.studio_id === 'alpha'))));
    assert.deepEqual(await get('studio=nosuch'), []);
    assert.deepEqual(await get('tag=animal'), of(item.a1, item.b1));
    assert.deepEqual(await get('tag=animal&tag=warm'), of(item.a1));
    assert.deepEqual(await get('starred=true'), of(item.a1));
    assert.equal((await get('starred=false')).length, live.length - 1);
    assert.deepEqual(await get('q=fox'), of(item.a1, item.b1));
    assert.deepEqual(await get('q=fo'), of(item.a1, item.b1));
    assert.deepEqual(await get('q=fox&studio=beta'), of(item.b1));
    assert.deepEqual(await get(`asset_id=${asset.p2.id}`), of(item.a2));
    assert.equal((await get('kind=image')).length, live.length);
    assert.deepEqual(await get('kind=video'), []);
    assert.deepEqual(await get(`since=${encodeURIComponent(item.b1.created_at)}&q=fox`), of(item.b1));
    // There is no scope on this side: every studio's, whatever is sent.
    assert.equal((await get('scope=self')).length, live.length);
    assert.deepEqual(ids(await walk(l, '/launcher/gallery/items?tag=animal', 1)), of(item.a1, item.b1));
  });

  test('bad filters and cursors: 400 as on the studio route', async () => {
    assertError(await l.get('/launcher/gallery/items?studio=NOT_AN_ID'), 400, 'bad_request');
    assertError(await l.get('/launcher/gallery/items?kind=painting'), 400, 'bad_request');
    assertError(await l.get('/launcher/gallery/items?since=yesterday'), 400, 'bad_request');
    assertError(await l.get('/launcher/gallery/items?limit=0'), 400, 'bad_request');
    assertError(await l.get(`/launcher/gallery/items?${Array.from({ length: 21 }, (_, i) => `tag=t${i}`).join('&')}`), 400, 'bad_request');
    assertError(await l.get('/launcher/gallery/items?cursor=nonsense'), 400, 'bad_cursor');
    // A cursor is bound to its list: a studio's own list, or other filters, do not take it.
    const studioPage = await alpha.get('/gallery/items?limit=1');
    assertError(await l.get(`/launcher/gallery/items?limit=1&cursor=${encodeURIComponent(studioPage.json.next_cursor)}`), 400, 'bad_cursor');
    const page = await l.get('/launcher/gallery/items?limit=1&tag=animal');
    assertError(await l.get(`/launcher/gallery/items?limit=1&tag=water&cursor=${encodeURIComponent(page.json.next_cursor)}`), 400, 'bad_cursor');
  });
});

describe('GET /launcher/gallery/items/{id} and lineage', () => {
  test("any studio's item as its studio reads it; unknown and deleted ones 404", async () => {
    const got = assertItem(await l.get(`/launcher/gallery/items/${item.b1.id}`), 200);
    assert.deepEqual(got, (await beta.get(`/gallery/items/${item.b1.id}`)).json);
    assertError(await l.get(`/launcher/gallery/items/${UNKNOWN_ID}`), 404, 'not_found');
    assertError(await l.get(`/launcher/gallery/items/${item.gone.id}`), 404, 'not_found');
  });

  test('upstream lineage crosses studios and shows every live item; paged', async () => {
    // beta alone (no gallery.read_all) sees none of alpha's items upstream of its own.
    assert.deepEqual(ids((await beta.get(`/gallery/items/${item.b1.id}/lineage`)).json.items), []);
    assert.deepEqual(ids(await walk(l, `/launcher/gallery/items/${item.b1.id}/lineage`, 1)), [item.a2.id, item.a1.id]);
    assert.deepEqual(ids(await walk(l, `/launcher/gallery/items/${item.a1.id}/lineage`, 10)), []);
    assertError(await l.get(`/launcher/gallery/items/${UNKNOWN_ID}/lineage`), 404, 'not_found');
    assertError(await l.get(`/launcher/gallery/items/${item.a2.id}/lineage?limit=x`), 400, 'bad_request');
  });

  test('downstream lineage of an asset: every studio\'s items made from it, recursively', async () => {
    assert.deepEqual(ids(await walk(l, `/launcher/assets/${asset.p1.id}/lineage`, 1)), [item.b1.id, item.a2.id]);
    assert.deepEqual(ids((await alpha.get(`/assets/${asset.p1.id}/lineage`)).json.items), [item.a2.id]);
    assertError(await l.get(`/launcher/assets/${UNKNOWN_ID}/lineage`), 404, 'not_found');
  });
});

describe('GET /launcher/assets/{id} and /thumb', () => {
  test("any studio's bytes: the same answer its studio gets, with ranges, 304, HEAD and 416", async () => {
    const whole = await bytesOf(`/launcher/assets/${asset.p3.id}`);
    const studio = await bytesOf(`/assets/${asset.p3.id}`, {}, 'GET', betaToken);
    assert.equal(whole.status, 200);
    assert.deepEqual(whole.body, studio.body);
    assert.equal(whole.headers['content-type'], 'image/png');
    assert.equal(whole.headers.etag, `"${asset.p3.sha256}"`);
    assert.equal(whole.headers['accept-ranges'], 'bytes');
    assertFileHeaders(whole, false, 'png');

    const part = await bytesOf(`/launcher/assets/${asset.p3.id}`, { Range: 'bytes=4-13' });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 4-13/${asset.p3.size}`);
    assert.deepEqual(part.body, whole.body.subarray(4, 14));
    assertFileHeaders(part, false, 'range');
    const tail = await bytesOf(`/launcher/assets/${asset.p3.id}`, { Range: 'bytes=-7' });
    assert.equal(tail.status, 206);
    assert.deepEqual(tail.body, whole.body.subarray(whole.body.length - 7));
    const past = await bytesOf(`/launcher/assets/${asset.p3.id}`, { Range: `bytes=${asset.p3.size}-` });
    assertError(asHttp(past), 416, 'range_not_satisfiable');
    assert.equal(past.headers['content-range'], `bytes */${asset.p3.size}`);
    const cached = await bytesOf(`/launcher/assets/${asset.p3.id}`, { 'If-None-Match': `"${asset.p3.sha256}"` });
    assert.equal(cached.status, 304);
    assertFileHeaders(cached, false, '304');
    const head = await bytesOf(`/launcher/assets/${asset.p3.id}`, {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['content-length'], String(asset.p3.size));
    assertFileHeaders(head, false, 'HEAD');

    assertError(asHttp(await bytesOf(`/launcher/assets/${UNKNOWN_ID}`)), 404, 'not_found');
    assertError(asHttp(await bytesOf(`/launcher/assets/${UNKNOWN_ID}/thumb`)), 404, 'not_found');
  });

  test('read only: no other method on the launcher asset paths', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await send(svc.port, { method, path: `/api/v1/launcher/assets/${asset.p1.id}`, token: cred });
      assert.ok([404, 405].includes(res.status), `${method}: ${res.status}`);
    }
  });

  test('the thumbnail: WebP with nosniff and the sandbox, on both sides; 501 for a video', async () => {
    for (const [path, token] of [[`/launcher/assets/${asset.p4.id}/thumb`, cred], [`/assets/${asset.p4.id}/thumb`, betaToken]] as const) {
      const res = await bytesOf(path, {}, 'GET', token);
      assert.equal(res.status, 200, res.body.toString());
      assert.equal(res.headers['content-type'], 'image/webp');
      assert.equal(res.body.subarray(8, 12).toString(), 'WEBP');
      assertFileHeaders(res, false, path);
      const again = await bytesOf(path, { 'If-None-Match': String(res.headers.etag) }, 'GET', token);
      assert.equal(again.status, 304);
      assertFileHeaders(again, false, `${path} 304`);
    }
    const video = await uploadOk(alphaToken, Buffer.from('not really a video'), 'kind=video&duration_s=1');
    assertError(asHttp(await bytesOf(`/launcher/assets/${video.id}/thumb`)), 501, 'unsupported');
  });
});

describe('stored files that can run script are downloads, on every route that serves them', () => {
  const SCRIPT = '<script>fetch("/api/v1/launcher/studios")</script>';
  const cases: { name: string; type?: string; kind: string; body: string; attachment: boolean; filename?: string }[] = [
    { name: 'svg', kind: 'image', type: 'image/svg+xml', attachment: true, body: `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><script>alert(1)</script><rect width="4" height="4"/></svg>` },
    { name: 'svg-other', kind: 'other', type: 'image/svg+xml', attachment: true, body: `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(2)</script></svg>` },
    { name: 'html', kind: 'other', type: 'text/html', attachment: true, body: `<!doctype html>${SCRIPT}` },
    { name: 'xhtml', kind: 'other', type: 'application/xhtml+xml', attachment: true, body: `<html xmlns="http://www.w3.org/1999/xhtml">${SCRIPT}</html>` },
    { name: 'text-xml', kind: 'other', type: 'text/xml', attachment: true, body: '<?xml version="1.0"?><a/>' },
    { name: 'app-xml', kind: 'other', type: 'application/xml', attachment: true, body: '<?xml version="1.0"?><b/>' },
    { name: 'rss', kind: 'other', type: 'application/rss+xml', attachment: true, body: '<?xml version="1.0"?><rss/>' },
    { name: 'xsl', kind: 'other', type: 'application/xslt+xml', attachment: true, body: '<?xml version="1.0"?><x/>' },
    { name: 'pdf', kind: 'other', type: 'application/pdf', attachment: true, body: '%PDF-1.4 not really' },
    { name: 'untyped', kind: 'other', attachment: true, body: `<html>${SCRIPT}</html>` },
    { name: 'unknown', kind: 'other', type: 'application/x-backlot-test', attachment: true, body: 'whatever' },
    { name: 'text', kind: 'other', type: 'text/plain', attachment: false, body: `<html>${SCRIPT}</html>` },
    { name: 'json', kind: 'other', type: 'application/json', attachment: false, body: '{"a":1}' },
    { name: 'video', kind: 'video', type: 'video/mp4', attachment: false, body: 'not really an mp4' },
    { name: 'video-xml', kind: 'video', type: 'video/x-test+xml', attachment: true, body: '<x/>' },
    { name: 'sound', kind: 'audio', type: 'audio/wav', attachment: false, body: 'not really a wav' },
    { name: 'quoted "name" ü', kind: 'other', type: 'text/html', attachment: true, body: '<p>x</p>', filename: 'quoted "name" ü.html' },
  ];

  test('Content-Disposition: attachment for SVG, HTML, XHTML, XML, PDF and any unknown type; never for images, video, sound, text', async () => {
    for (const c of cases) {
      const filename = c.filename ?? `${c.name}.bin`;
      const up = await upload(svc.port, alphaToken, Buffer.from(c.kind === 'image' || c.type === 'application/json' ? c.body : c.body + c.name), `kind=${c.kind}&filename=${encodeURIComponent(filename)}&duration_s=1`, c.type);
      assert.equal(up.status, 201, `${c.name}: ${up.body.toString()}`);
      for (const [path, token] of [[`/launcher/assets/${up.json.id}`, cred], [`/assets/${up.json.id}`, alphaToken]] as const) {
        const ways: [Record<string, string>, string][] = [[{}, 'GET'], [{}, 'HEAD'], [{ 'If-None-Match': `"${up.json.sha256}"` }, 'GET']];
        // (Two bytes of JSON would not parse in the test's client.)
        if (c.type !== 'application/json') ways.push([{ Range: 'bytes=0-1' }, 'GET']);
        for (const [headers, method] of ways) {
          const res = await bytesOf(path, headers, method, token);
          assert.ok([200, 206, 304].includes(res.status), `${c.name} ${path} ${method} ${JSON.stringify(headers)}: ${res.status}`);
          assertFileHeaders(res, c.attachment, `${c.name} ${path} ${method} ${JSON.stringify(headers)}`);
        }
      }
      if (c.filename) {
        const res = await bytesOf(`/launcher/assets/${up.json.id}`);
        assert.equal(res.headers['content-disposition'], `attachment; filename="quoted _name_ _.html"; filename*=UTF-8''quoted%20_name_%20%C3%BC.html`);
      }
    }
  });
});

describe('/launcher/timeline/{id}: the opened sequence, acting as its owner', () => {
  let seq: string;
  let betaSeq: string;
  let page: SseConnection | null = null;
  const video: Record<string, any> = {};

  before(async () => {
    const files = {
      a: makeVideo(join(dir, 'a.mp4'), { seconds: 2, width: 320, height: 180 }),
      b: makeVideo(join(dir, 'b.mp4'), { seconds: 1, width: 320, height: 180 }),
      tone: makeAudio(join(dir, 'tone.wav'), { seconds: 1 }),
    };
    video.a = await uploadOk(alphaToken, readFileSync(files.a), 'kind=video&filename=a.mp4');
    video.b = await uploadOk(alphaToken, readFileSync(files.b), 'kind=video&filename=b.mp4');
    video.betaOnly = await uploadOk(betaToken, readFileSync(files.tone), 'kind=audio&filename=tone.wav');
    const created = await alpha.post('/timeline', { name: 'Launcher cut', target: { fps: 25, width: 320, height: 180 }, clips: [{ asset_id: video.a.id }] });
    seq = assertTimeline(created, 201).id;
    betaSeq = assertTimeline(await beta.post('/timeline', { name: 'Beta cut' }), 201).id;
  });
  after(() => page?.close());

  const base = () => `/launcher/timeline/${seq}`;
  const patch = (path: string, body: unknown, ifMatch?: string) =>
    l.patch(path, body, ifMatch === undefined ? { 'Content-Type': MERGE } : { 'Content-Type': MERGE, 'If-Match': ifMatch });

  test('before its studio opens it on the editor surface: 404 on every route', async () => {
    const paths = [['GET', base()], ['GET', `${base()}/revisions`], ['GET', `${base()}:plan`], ['GET', `${base()}/exports`]];
    for (const [method, path] of paths) assertError(await send(svc.port, { method, path: `/api/v1${path}`, token: cred }), 404, 'not_found');
    assertError(await patch(base(), { name: 'x' }, '"1"'), 404, 'not_found');
    assertError(await l.post(`${base()}:revert`, { revision: 1 }, { 'If-Match': '"1"' }), 404, 'not_found');
    assertError(await l.post(`${base()}:export`, {}), 404, 'not_found');
    assertError(await l.get(`/launcher/timeline/${UNKNOWN_ID}`), 404, 'not_found');
  });

  test('after :open reached an editor page: read as the studio reads it', async () => {
    page = await openSse(svc.port, '!/editor/events', cred);
    assert.equal(page.status, 200);
    await page.waitFor((m) => m.event === 'hello');
    const opened = await alpha.post(`/timeline/${seq}:open`, undefined);
    assert.equal(opened.status, 200, opened.text);
    const got = assertTimeline(await l.get(base()), 200);
    const own = await alpha.get(`/timeline/${seq}`);
    assert.deepEqual(got, own.json);
    assert.equal(got.studio_id, 'alpha');
    // Only the opened one: beta's sequence and an unknown id stay 404.
    assertError(await l.get(`/launcher/timeline/${betaSeq}`), 404, 'not_found');
  });

  test('PATCH with If-Match: 400 without, 409 stale, 200 a new revision the studio sees; its rules, as the owner', async () => {
    const current = assertTimeline(await l.get(base()), 200);
    assertError(await patch(base(), { name: 'Renamed' }), 400, 'bad_request');
    assertError(await patch(base(), { name: 'Renamed' }, `"${current.revision + 5}"`), 409, 'etag_mismatch');
    const changed = assertTimeline(await patch(base(), { name: 'Renamed', tracks: { V1: [{ asset_id: video.a.id, start: 0, in: 0, duration: 1 }, { asset_id: video.b.id, start: 1, in: 0, duration: 1 }] } }, `"${current.revision}"`), 200);
    assert.equal(changed.revision, current.revision + 1);
    assert.equal(changed.name, 'Renamed');
    assert.deepEqual((await alpha.get(`/timeline/${seq}`)).json, changed);
    // The owner's assets only: beta's sound is not alpha's to use.
    const foreign = await patch(base(), { tracks: { A1: [{ asset_id: video.betaOnly.id, start: 0, in: 0, duration: 1 }] } }, `"${changed.revision}"`);
    assertError(foreign, 422, 'invalid_timeline');
    assertError(await patch(base(), { nonsense: 1 }, `"${changed.revision}"`), 400, 'bad_request');
    // A concurrent write by the studio: the launcher's next write with the old etag is 409.
    const byStudio = await alpha.patch(`/timeline/${seq}`, { name: 'By the studio' }, { 'If-Match': `"${changed.revision}"` });
    assert.equal(byStudio.status, 200, byStudio.text);
    assertError(await patch(base(), { name: 'Stale' }, `"${changed.revision}"`), 409, 'etag_mismatch');
  });

  test('revisions and :revert write an earlier revision forward', async () => {
    const revisions = await walk(l, `${base()}/revisions`, 1);
    assert.deepEqual(revisions, await walk(alpha, `/timeline/${seq}/revisions`, 100));
    assert.deepEqual(revisions.map((r: any) => r.revision), [2, 1]);
    const now = assertTimeline(await l.get(base()), 200);
    assertError(await l.post(`${base()}:revert`, { revision: 1 }), 400, 'bad_request');
    assertError(await l.post(`${base()}:revert`, { revision: 1 }, { 'If-Match': '"1"' }), 409, 'etag_mismatch');
    const reverted = assertTimeline(await l.post(`${base()}:revert`, { revision: 1 }, { 'If-Match': `"${now.revision}"` }), 200);
    assert.equal(reverted.revision, now.revision + 1);
    assert.equal(reverted.name, 'Launcher cut');
    assert.deepEqual(reverted.tracks, revisions[1].tracks);
    assert.deepEqual((await alpha.get(`/timeline/${seq}`)).json, reverted);
    assertError(await l.post(`${base()}:revert`, { revision: 99 }, { 'If-Match': `"${reverted.revision}"` }), 404, 'not_found');
  });

  test(':plan answers what the studio\'s plan answers', async () => {
    const plan = await l.get(`${base()}:plan`);
    assert.equal(plan.status, 200, plan.text);
    assert.deepEqual(plan.json, (await alpha.get(`/timeline/${seq}:plan`)).json);
    assertError(await l.get(`${base()}:plan?preset=nosuch`), 400, 'bad_request');
  });

  test(':export starts an export of the owning studio, listed and cancelled through /launcher/jobs; another one succeeds', async () => {
    writeFileSync(wrapper.gate, ''); // ffmpeg waits at the gate: the job is surely running when cancelled
    let job: any;
    try {
      const started = await l.post(`${base()}:export`, { preset: 'auto' });
      assert.equal(started.status, 202, started.text);
      job = started.json;
      assert.deepEqual(Object.keys(job).sort(), JOB_KEYS);
      assert.equal(job.kind, 'export');
      assert.equal(job.studio_id, 'alpha');
      assert.equal(job.timeline_id, seq);
      assertError(await l.post(`${base()}:export`, {}), 409, 'already_exporting');
      assert.ok(ids((await l.get('/launcher/jobs?studio=alpha&limit=100')).json.items).includes(job.id));
      assert.deepEqual(ids((await l.get(`${base()}/exports`)).json.items), [job.id]);
      assert.equal((await alpha.get(`/jobs/${job.id}`)).json.kind, 'export', 'the studio sees it as its own');
      const cancel = await l.post(`/launcher/jobs/${job.id}:cancel`);
      assert.equal(cancel.status, 204, cancel.text);
      assert.equal((await l.get(`/launcher/jobs/${job.id}`)).json.state, 'cancelled');
      assertError(await l.post(`/launcher/jobs/${job.id}:cancel`), 409, 'job_finished');
    } finally {
      if (existsSync(wrapper.gate)) unlinkSync(wrapper.gate);
    }

    const second = await l.post(`${base()}:export`, { filename: 'from the launcher' });
    assert.equal(second.status, 202, second.text);
    const deadline = Date.now() + 60_000;
    let done: any;
    for (;;) {
      done = (await l.get(`/launcher/jobs/${second.json.id}`)).json;
      if (['succeeded', 'failed', 'cancelled'].includes(done.state) || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(done.state, 'succeeded', JSON.stringify(done));
    const exported = assertItem(await l.get(`/launcher/gallery/items/${done.data.item_id}`), 200);
    assert.equal(exported.studio_id, 'alpha');
    assert.equal(exported.timeline_id, seq);
    assert.deepEqual(exported, (await alpha.get(`/gallery/items/${done.data.item_id}`)).json);
    const file = await bytesOf(`/launcher/assets/${done.data.asset_id}`, { Range: 'bytes=0-11' });
    assert.equal(file.status, 206);
    assert.equal(file.headers['content-type'], 'video/mp4');
    assert.equal(file.body.subarray(4, 8).toString(), 'ftyp');
    assertFileHeaders(file, false, 'exported mp4');
    // The exports list and its cancel route are mirrored too: a finished export is 409.
    assert.deepEqual(ids((await l.get(`${base()}/exports`)).json.items), [second.json.id, job.id]);
    assertError(await l.post(`${base()}/exports/${second.json.id}:cancel`), 409, 'job_finished');
    assertError(await l.post(`${base()}/exports/${UNKNOWN_ID}:cancel`), 404, 'not_found');
  });

  test('a deleted sequence is 404 again, opened or not', async () => {
    const now = assertTimeline(await l.get(base()), 200);
    assert.equal((await alpha.delete(`/timeline/${seq}`, { 'If-Match': `"${now.revision}"` })).status, 204);
    assertError(await l.get(base()), 404, 'not_found');
    assertError(await patch(base(), { name: 'x' }, `"${now.revision}"`), 404, 'not_found');
  });
});
