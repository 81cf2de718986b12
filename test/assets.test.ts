import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { startService, tempDir, type TestService } from './helpers/service';
import { client } from './helpers/http';
import { assertError, runScenarios, type ScenarioEnv } from './helpers/scenario';
import { asHttp, getAsset, makeJpeg, makePng, upload, uploadChunked } from './helpers/assets';

/** Assets over HTTP (docs/api.md "Assets"). Reclaim with references: assets-reclaim.test.ts. */

let svc: TestService;
const env: ScenarioEnv = { port: 0, tokens: {}, ids: {} };
const ASSET_KEYS = ['created_at', 'duration_s', 'filename', 'fps', 'height', 'id', 'kind', 'library_path', 'mime', 'pinned', 'sha256', 'size', 'width'];
let jpeg: Buffer;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const dirs = (studio: string) => ({ stage: join(svc.dataDir, 'studios', studio, 'stage'), data: join(svc.dataDir, 'studios', studio, 'data') });
const tmpEntries = () => readdirSync(join(svc.dataDir, 'blobs', '.tmp'));
const blobFiles = () => readdirSync(join(svc.dataDir, 'blobs')).filter((n) => n !== '.tmp');
const T = (name: string) => env.tokens[name]!;

before(async () => {
  svc = await startService();
  env.port = svc.port;
  env.tokens.alpha = svc.studio('alpha', ['assets']);
  env.tokens.beta = svc.studio('beta', ['assets']);
  env.tokens.gamma = svc.studio('gamma', ['assets']);
  env.tokens.noAssets = svc.studio('delta', ['kv']);
  jpeg = await makeJpeg(800, 600, 1);
  const r = await upload(svc.port, T('alpha'), jpeg, 'kind=image', 'image/jpeg');
  assert.equal(r.status, 201, r.body.toString());
  env.ids!.image = r.json.id;
  const video = await upload(svc.port, T('alpha'), randomBytes(5000), 'kind=video&filename=clip.mp4', 'video/mp4');
  env.ids!.video = video.json.id;
  const other = await upload(svc.port, T('alpha'), Buffer.from('plain text'), 'kind=other', 'text/plain');
  env.ids!.other = other.json.id;
  const audio = await upload(svc.port, T('alpha'), randomBytes(700), 'kind=audio&duration_s=3', 'audio/mpeg');
  env.ids!.audio = audio.json.id;
});
after(async () => {
  await svc.stop();
});

describe('upload', () => {
  test('an image: 201, the Asset members, probed size, default filename, library hardlink, blob 0444', async () => {
    const bytes = await makePng(123, 45, 2);
    const r = await upload(svc.port, T('alpha'), bytes, 'kind=image', 'image/png');
    assert.equal(r.status, 201, r.body.toString());
    const a = r.json;
    assert.deepEqual(Object.keys(a).sort(), ASSET_KEYS);
    assert.equal(a.sha256, sha(bytes));
    assert.equal(a.size, bytes.length);
    assert.equal(a.kind, 'image');
    assert.equal(a.mime, 'image/png');
    assert.equal(a.width, 123);
    assert.equal(a.height, 45);
    assert.equal(a.duration_s, null);
    assert.equal(a.fps, null);
    assert.equal(a.pinned, false);
    assert.equal(a.filename, `${a.id}.png`);
    assert.match(a.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(a.library_path, join(svc.dataDir, 'library', 'alpha', `${a.id}.png`));
    const blob = join(svc.dataDir, 'blobs', `${a.sha256}.png`);
    assert.equal(statSync(blob).mode & 0o777, 0o444);
    assert.equal(statSync(a.library_path).ino, statSync(blob).ino, 'the library file is a hardlink of the blob');
    assert.deepEqual(readFileSync(blob), bytes);
  });

  test('the same bytes again: 200, the same asset, nothing more stored', async () => {
    const before = blobFiles().length;
    const r = await upload(svc.port, T('alpha'), jpeg, 'kind=image', 'image/jpeg');
    assert.equal(r.status, 200);
    assert.equal(r.json.id, env.ids!.image);
    assert.equal(blobFiles().length, before);
    assert.deepEqual(tmpEntries(), []);
  });

  test('another studio uploading the same bytes gains read access, with its own name and library file', async () => {
    assertError(asHttp(await getAsset(svc.port, T('beta'), `/assets/${env.ids!.image}`)), 404, 'not_found');
    const r = await upload(svc.port, T('beta'), jpeg, 'kind=image&filename=holiday.jpg', 'image/jpeg');
    assert.equal(r.status, 200);
    assert.equal(r.json.id, env.ids!.image);
    assert.equal(r.json.filename, 'holiday.jpg');
    assert.equal(r.json.library_path, join(svc.dataDir, 'library', 'beta', 'holiday.jpg'));
    assert.equal(statSync(r.json.library_path).ino, statSync(join(svc.dataDir, 'blobs', `${sha(jpeg)}.jpg`)).ino);
    const got = await getAsset(svc.port, T('beta'), `/assets/${env.ids!.image}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, jpeg);
    const alphaView = await client(svc.port, T('alpha')).get(`/assets/${env.ids!.image}/thumb`);
    assert.equal(alphaView.status, 200);
    assertError(asHttp(await getAsset(svc.port, T('gamma'), `/assets/${env.ids!.image}`)), 404, 'not_found');
  });

  test('video: the hints are stored, Content-Type is the mime, filename gives the library name and blob extension', async () => {
    const bytes = randomBytes(3000);
    const r = await upload(svc.port, T('alpha'), bytes, 'kind=video&filename=take%201.mov&width=1920&height=1080&duration_s=12.5&fps=29.97', 'video/quicktime');
    assert.equal(r.status, 201, r.body.toString());
    assert.equal(r.json.mime, 'video/quicktime');
    assert.equal(r.json.width, 1920);
    assert.equal(r.json.height, 1080);
    assert.equal(r.json.duration_s, 12.5);
    assert.equal(r.json.fps, 29.97);
    assert.equal(r.json.filename, 'take 1.mov');
    assert.equal(r.json.library_path, join(svc.dataDir, 'library', 'alpha', 'take 1.mov'));
    assert.ok(existsSync(join(svc.dataDir, 'blobs', `${sha(bytes)}.mov`)));
  });

  test('audio without hints has null hints; no Content-Type means application/octet-stream and .bin', async () => {
    const r = await upload(svc.port, T('alpha'), randomBytes(100), 'kind=audio', '');
    assert.equal(r.status, 201, r.body.toString());
    assert.equal(r.json.mime, 'application/octet-stream');
    assert.equal(r.json.duration_s, null);
    assert.equal(r.json.filename, `${r.json.id}.bin`);
  });

  test('a taken library name gets a suffix; a filename with a path keeps only its last segment', async () => {
    const one = await upload(svc.port, T('alpha'), randomBytes(10), 'kind=other&filename=notes.txt', 'text/plain');
    const two = await upload(svc.port, T('alpha'), randomBytes(10), 'kind=other&filename=notes.txt', 'text/plain');
    assert.equal(one.json.library_path, join(svc.dataDir, 'library', 'alpha', 'notes.txt'));
    assert.equal(two.json.library_path, join(svc.dataDir, 'library', 'alpha', 'notes (2).txt'));
    const evil = await upload(svc.port, T('alpha'), randomBytes(10), `kind=other&filename=${encodeURIComponent('../../../evil.txt')}`, 'text/plain');
    assert.equal(evil.status, 201);
    assert.equal(evil.json.filename, 'evil.txt');
    assert.equal(evil.json.library_path, join(svc.dataDir, 'library', 'alpha', 'evil.txt'));
  });

  test('pinned=true pins; a later upload without it leaves it pinned', async () => {
    const bytes = randomBytes(64);
    const r = await upload(svc.port, T('alpha'), bytes, 'kind=other&pinned=true', 'text/plain');
    assert.equal(r.json.pinned, true);
    const again = await upload(svc.port, T('beta'), bytes, 'kind=other&pinned=false', 'text/plain');
    assert.equal(again.json.pinned, true);
  });

  test('an upload of an existing asset with pinned=true pins it', async () => {
    const bytes = randomBytes(64);
    assert.equal((await upload(svc.port, T('alpha'), bytes, 'kind=other', 'text/plain')).json.pinned, false);
    assert.equal((await upload(svc.port, T('alpha'), bytes, 'kind=other&pinned=true', 'text/plain')).json.pinned, true);
  });

  test('a chunked body (no Content-Length) is stored the same way', async () => {
    const parts = [randomBytes(70_000), randomBytes(1), randomBytes(200_000)];
    const r = await uploadChunked(svc.port, T('alpha'), parts, 'kind=other');
    assert.equal(r.status, 201, r.body.toString());
    assert.equal(r.json.sha256, sha(Buffer.concat(parts)));
    assert.equal(r.json.size, 270_001);
  });

  test('a client that goes away mid-upload leaves no temp file and no asset', async () => {
    const before = blobFiles().length;
    await new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: svc.port, method: 'POST', path: '/api/v1/assets?kind=other', headers: { Host: `127.0.0.1:${svc.port}`, Authorization: `Bearer ${T('alpha')}`, 'Content-Length': '10000000' } });
      req.on('error', () => resolve());
      req.write(randomBytes(300_000), async () => {
        for (let i = 0; i < 100 && tmpEntries().length === 0; i++) await new Promise((r) => setTimeout(r, 10));
        if (tmpEntries().length === 0) reject(new Error('the upload never started'));
        req.destroy();
        resolve();
      });
    });
    for (let i = 0; i < 100 && tmpEntries().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(tmpEntries(), []);
    assert.equal(blobFiles().length, before);
  });

  test('kind=image with bytes that are no image is 400 and leaves nothing behind', async () => {
    const before = blobFiles().length;
    const r = await upload(svc.port, T('alpha'), Buffer.from('not an image at all'), 'kind=image', 'image/png');
    assertError(asHttp(r), 400, 'bad_request');
    assert.equal(blobFiles().length, before);
    assert.deepEqual(tmpEntries(), []);
  });

  test('an empty body is a valid asset', async () => {
    const r = await upload(svc.port, T('alpha'), Buffer.alloc(0), 'kind=other');
    assert.equal(r.status, 201, r.body.toString());
    assert.equal(r.json.size, 0);
    const got = await getAsset(svc.port, T('alpha'), `/assets/${r.json.id}`);
    assert.equal(got.status, 200);
    assert.equal(got.headers['content-length'], '0');
    assert.equal(got.body.length, 0);
    assertError(asHttp(await getAsset(svc.port, T('alpha'), `/assets/${r.json.id}`, { Range: 'bytes=0-' })), 416, 'range_not_satisfiable');
  });
});

describe('upload: bad input and access', () => {
  runScenarios(() => env, [
    { name: 'no token is 401', method: 'POST', path: '/assets?kind=other', raw: 'x', expectStatus: 401, expectCode: 'unauthenticated' },
    { name: 'without the assets capability 403', method: 'POST', path: '/assets?kind=other', as: 'noAssets', raw: 'x', expectStatus: 403, expectCode: 'capability_required', expectDetails: { capability: 'assets' } },
    { name: 'kind is required', method: 'POST', path: '/assets', as: 'alpha', raw: 'x', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'an unknown kind', method: 'POST', path: '/assets?kind=movie', as: 'alpha', raw: 'x', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'kind given twice', method: 'POST', path: '/assets?kind=other&kind=image', as: 'alpha', raw: 'x', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'pinned must be true or false', method: 'POST', path: '/assets?kind=other&pinned=yes', as: 'alpha', raw: 'x', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'width must be a positive integer', method: 'POST', path: '/assets?kind=video&width=-3', as: 'alpha', raw: 'x', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'width 0', method: 'POST', path: '/assets?kind=video&width=0', as: 'alpha', raw: 'x', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'fps must be a number', method: 'POST', path: '/assets?kind=video&fps=fast', as: 'alpha', raw: 'x', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'duration_s must be a number', method: 'POST', path: '/assets?kind=video&duration_s=1e5', as: 'alpha', raw: 'x', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'an empty filename', method: 'POST', path: '/assets?kind=other&filename=', as: 'alpha', raw: 'x', expectStatus: 400, expectCode: 'bad_request' },
  ]);
});

describe('read', () => {
  const path = () => `/assets/${env.ids!.image}`;
  test('the whole file: 200, ETag the sha256, Accept-Ranges, the stored mime, Content-Length', async () => {
    const r = await getAsset(svc.port, T('alpha'), path());
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, jpeg);
    assert.equal(r.headers.etag, `"${sha(jpeg)}"`);
    assert.equal(r.headers['accept-ranges'], 'bytes');
    assert.equal(r.headers['content-type'], 'image/jpeg');
    assert.equal(r.headers['content-length'], String(jpeg.length));
  });

  const ranges: { header: string; start: number; end: number }[] = [
    { header: 'bytes=0-9', start: 0, end: 9 },
    { header: 'bytes=100-199', start: 100, end: 199 },
    { header: 'bytes=-10', start: -10, end: -1 },
    { header: 'bytes=1000-', start: 1000, end: -1 },
    { header: 'bytes=0-99999999', start: 0, end: -1 },
  ];
  for (const { header, start, end } of ranges) {
    test(`Range ${header}: 206 with Content-Range and exactly those bytes`, async () => {
      const r = await getAsset(svc.port, T('alpha'), path(), { Range: header });
      const s = start < 0 ? jpeg.length + start : start;
      const e = end < 0 ? jpeg.length + end : end;
      assert.equal(r.status, 206);
      assert.equal(r.headers['content-range'], `bytes ${s}-${e}/${jpeg.length}`);
      assert.equal(r.headers['content-length'], String(e - s + 1));
      assert.equal(r.headers.etag, `"${sha(jpeg)}"`);
      assert.deepEqual(r.body, jpeg.subarray(s, e + 1));
    });
  }

  test('several ranges answer 200 with the whole file', async () => {
    const r = await getAsset(svc.port, T('alpha'), path(), { Range: 'bytes=0-1,5-6' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, jpeg);
  });

  test('an unsatisfiable range: 416 range_not_satisfiable with Content-Range bytes */size', async () => {
    const r = await getAsset(svc.port, T('alpha'), path(), { Range: `bytes=${jpeg.length}-` });
    assertError(asHttp(r), 416, 'range_not_satisfiable');
    assert.equal(r.headers['content-range'], `bytes */${jpeg.length}`);
  });

  test('If-None-Match with the sha256: 304 without a body', async () => {
    const r = await getAsset(svc.port, T('alpha'), path(), { 'If-None-Match': `"${sha(jpeg)}"` });
    assert.equal(r.status, 304);
    assert.equal(r.body.length, 0);
    assert.equal(r.headers.etag, `"${sha(jpeg)}"`);
    assert.equal((await getAsset(svc.port, T('alpha'), path(), { 'If-None-Match': '"other"' })).status, 200);
  });

  test('If-Range with another tag ignores the Range', async () => {
    const r = await getAsset(svc.port, T('alpha'), path(), { Range: 'bytes=0-9', 'If-Range': '"stale"' });
    assert.equal(r.status, 200);
    assert.equal(r.body.length, jpeg.length);
  });

  test('HEAD: the headers of GET, no body', async () => {
    const r = await getAsset(svc.port, T('alpha'), path(), {}, 'HEAD');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-length'], String(jpeg.length));
    assert.equal(r.headers['content-type'], 'image/jpeg');
    assert.equal(r.headers.etag, `"${sha(jpeg)}"`);
    assert.equal(r.body.length, 0);
    const ranged = await getAsset(svc.port, T('alpha'), path(), { Range: 'bytes=0-9' }, 'HEAD');
    assert.equal(ranged.status, 206);
    assert.equal(ranged.headers['content-length'], '10');
  });

  test('a row whose file is gone: 410 asset_missing for GET and thumb', async () => {
    const bytes = await makeJpeg(40, 30, 77);
    const r = await upload(svc.port, T('alpha'), bytes, 'kind=image', 'image/jpeg');
    unlinkSync(join(svc.dataDir, 'blobs', `${sha(bytes)}.jpg`));
    assertError(asHttp(await getAsset(svc.port, T('alpha'), `/assets/${r.json.id}`)), 410, 'asset_missing');
    assert.equal((await getAsset(svc.port, T('alpha'), `/assets/${r.json.id}`, {}, 'HEAD')).status, 410);
    assertError(asHttp(await getAsset(svc.port, T('alpha'), `/assets/${r.json.id}/thumb`)), 410, 'asset_missing');
    // The same bytes uploaded again put the file back.
    assert.equal((await upload(svc.port, T('alpha'), bytes, 'kind=image', 'image/jpeg')).status, 200);
    assert.equal((await getAsset(svc.port, T('alpha'), `/assets/${r.json.id}`)).status, 200);
  });

  runScenarios(() => env, [
    { name: 'GET of an id that is not a ULID is 404 like any unknown id', path: '/assets/nope', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'GET of an unknown asset is 404', path: '/assets/01ARZ3NDEKTSV4RRFFQ69G5FAV', as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'GET of an id of 300 characters is 404, not 400', path: `/assets/${'A'.repeat(300)}`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'the thumbnail of an id of 300 characters is 404', path: `/assets/${'A'.repeat(300)}/thumb`, as: 'alpha', expectStatus: 404, expectCode: 'not_found' },
    { name: 'GET of another studio\'s asset is 404', path: (e) => `/assets/${e.ids!.video}`, as: 'gamma', expectStatus: 404, expectCode: 'not_found' },
    { name: 'GET without the capability is 403', path: (e) => `/assets/${e.ids!.video}`, as: 'noAssets', expectStatus: 403, expectCode: 'capability_required' },
    { name: 'GET without a token is 401', path: (e) => `/assets/${e.ids!.video}`, expectStatus: 401, expectCode: 'unauthenticated' },
  ]);
});

describe('thumbnails', () => {
  test('320 px wide WebP, aspect kept, cached on disk', async () => {
    const r = await getAsset(svc.port, T('alpha'), `/assets/${env.ids!.image}/thumb?w=320`);
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'image/webp');
    const meta = await sharp(r.body).metadata();
    assert.equal(meta.format, 'webp');
    assert.equal(meta.width, 320);
    assert.equal(meta.height, 240);
    const cached = join(svc.dataDir, 'thumbs', `${sha(jpeg)}-320.webp`);
    assert.deepEqual(readFileSync(cached), r.body);
    const ino = statSync(cached).ino;
    const again = await getAsset(svc.port, T('alpha'), `/assets/${env.ids!.image}/thumb`);
    assert.deepEqual(again.body, r.body);
    assert.equal(statSync(cached).ino, ino, 'served from the cache, not made again');
    const notModified = await getAsset(svc.port, T('alpha'), `/assets/${env.ids!.image}/thumb`, { 'If-None-Match': again.headers.etag as string });
    assert.equal(notModified.status, 304);
  });

  test('a small image is scaled up to 320 px wide', async () => {
    const r = await upload(svc.port, T('alpha'), await makePng(100, 50, 9), 'kind=image', 'image/png');
    const t = await getAsset(svc.port, T('alpha'), `/assets/${r.json.id}/thumb`);
    const meta = await sharp(t.body).metadata();
    assert.deepEqual([meta.width, meta.height], [320, 160]);
  });

  test('concurrent first requests make the thumbnail once', async () => {
    const bytes = await makeJpeg(2000, 1500, 31, true);
    const r = await upload(svc.port, T('alpha'), bytes, 'kind=image', 'image/jpeg');
    const answers = await Promise.all(Array.from({ length: 8 }, () => getAsset(svc.port, T('alpha'), `/assets/${r.json.id}/thumb`)));
    for (const a of answers) assert.equal(a.status, 200);
    for (const a of answers) assert.deepEqual(a.body, answers[0]!.body);
    const made = svc.stderr().split('\n').filter((l) => l.includes(`thumbnail made`) && l.includes(sha(bytes)));
    assert.equal(made.length, 1, svc.stderr());
  });

  test('a burst of thumbnail jobs does not starve the API', async () => {
    const images = await Promise.all(Array.from({ length: 8 }, (_, i) => makeJpeg(3000, 2000, 100 + i, true)));
    const ids: string[] = [];
    for (const img of images) ids.push((await upload(svc.port, T('alpha'), img, 'kind=image', 'image/jpeg')).json.id);
    const burst = Promise.all(ids.map((id) => getAsset(svc.port, T('alpha'), `/assets/${id}/thumb`)));
    await new Promise((r) => setTimeout(r, 150));
    const started = performance.now();
    const cheap = await getAsset(svc.port, T('alpha'), `/assets/${env.ids!.image}`, { Range: 'bytes=0-99' });
    const ms = performance.now() - started;
    assert.equal(cheap.status, 206);
    assert.ok(ms < 2000, `a range read took ${ms} ms during the burst`);
    for (const a of await burst) assert.equal(a.status, 200);
  });

  runScenarios(() => env, [
    { name: 'w other than 320 is 400', path: (e) => `/assets/${e.ids!.image}/thumb?w=100`, as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'video has no thumbnail: 501', path: (e) => `/assets/${e.ids!.video}/thumb`, as: 'alpha', expectStatus: 501, expectCode: 'unsupported' },
    { name: 'audio has no thumbnail: 501', path: (e) => `/assets/${e.ids!.audio}/thumb`, as: 'alpha', expectStatus: 501, expectCode: 'unsupported' },
    { name: 'other has no thumbnail: 501', path: (e) => `/assets/${e.ids!.other}/thumb`, as: 'alpha', expectStatus: 501, expectCode: 'unsupported' },
    { name: 'another studio\'s thumbnail is 404', path: (e) => `/assets/${e.ids!.video}/thumb`, as: 'gamma', expectStatus: 404, expectCode: 'not_found' },
    { name: 'a bad w is 400 even on an asset the caller cannot see (the query is checked before visibility, as everywhere)', path: (e) => `/assets/${e.ids!.video}/thumb?w=1`, as: 'gamma', expectStatus: 400, expectCode: 'bad_request' },
  ]);
});

describe('adopt', () => {
  const adopt = (token: string, body: unknown) => client(svc.port, token).post('/assets:adopt', body);

  test('from the stage folder: 201, hardlinked (same inode), 0444, the stage entry unlinked', async () => {
    const bytes = randomBytes(10_000);
    const file = join(dirs('alpha').stage, 'render.bin');
    writeFileSync(file, bytes);
    const ino = statSync(file).ino;
    const r = await adopt(T('alpha'), { path: file, kind: 'other' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.sha256, sha(bytes));
    assert.equal(r.json.filename, 'render.bin');
    assert.match(String(r.headers['server-timing']), /hash;dur=[\d.]+, rest;dur=[\d.]+/);
    const blob = join(svc.dataDir, 'blobs', `${sha(bytes)}.bin`);
    assert.equal(statSync(blob).ino, ino, 'no copy: the blob is the studio\'s file');
    assert.equal(statSync(blob).mode & 0o777, 0o444);
    assert.equal(existsSync(file), false);
    assert.equal(statSync(r.json.library_path).ino, ino);
  });

  test('from the data folder: 201, the file stays, made 0444, same inode as the blob', async () => {
    const bytes = await makeJpeg(64, 48, 55);
    const file = join(dirs('alpha').data, 'photo.jpg');
    writeFileSync(file, bytes, { mode: 0o644 });
    const r = await adopt(T('alpha'), { path: file, kind: 'image', filename: 'named.jpg', pinned: true });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.width, 64);
    assert.equal(r.json.filename, 'named.jpg');
    assert.equal(r.json.pinned, true);
    assert.equal(statSync(file).mode & 0o777, 0o444);
    assert.equal(statSync(file).ino, statSync(join(svc.dataDir, 'blobs', `${sha(bytes)}.jpg`)).ino);
  });

  test('bytes already stored: 200, a stage entry is unlinked, a data file is left alone', async () => {
    const bytes = randomBytes(5000);
    const first = await upload(svc.port, T('beta'), bytes, 'kind=other');
    const staged = join(dirs('alpha').stage, 'again.bin');
    writeFileSync(staged, bytes);
    const fromStage = await adopt(T('alpha'), { path: staged, kind: 'other' });
    assert.equal(fromStage.status, 200, fromStage.text);
    assert.equal(fromStage.json.id, first.json.id);
    assert.equal(existsSync(staged), false);
    const dataFile = join(dirs('gamma').data, 'again.bin');
    writeFileSync(dataFile, bytes, { mode: 0o640 });
    const ino = statSync(dataFile).ino;
    const fromData = await adopt(T('gamma'), { path: dataFile, kind: 'other' });
    assert.equal(fromData.status, 200);
    assert.equal(fromData.json.id, first.json.id);
    assert.equal(statSync(dataFile).mode & 0o777, 0o640, 'left alone');
    assert.equal(statSync(dataFile).ino, ino);
    assert.notEqual(statSync(join(svc.dataDir, 'blobs', `${sha(bytes)}.bin`)).ino, ino);
    // gamma gained read access as an upload would give it.
    assert.equal((await getAsset(svc.port, T('gamma'), `/assets/${first.json.id}`)).status, 200);
  });

  test('a file replaced by a symlink between calls: 422 outside_roots, nothing adopted', async () => {
    const file = join(dirs('alpha').data, 'swap.txt');
    writeFileSync(file, 'first version');
    assert.equal((await adopt(T('alpha'), { path: file, kind: 'other' })).status, 201);
    rmSync(file, { force: true });
    const target = join(tempDir(), 'secret.txt');
    writeFileSync(target, 'secret');
    symlinkSync(target, file);
    assertError(await adopt(T('alpha'), { path: file, kind: 'other' }), 422, 'outside_roots');
  });

  test('a file written to while it is adopted: 409 conflict, nothing adopted', async () => {
    const file = join(dirs('alpha').data, 'growing.bin');
    writeFileSync(file, Buffer.alloc(256 * 1024 * 1024, 7));
    const before = readdirSync(join(svc.dataDir, 'blobs')).length;
    // Keep appending for as long as the request runs, so every moment of it sees a write.
    let writing = true;
    const writer = (async () => {
      const { appendFile } = await import('node:fs/promises');
      while (writing) {
        await appendFile(file, 'x');
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    try {
      assertError(await adopt(T('alpha'), { path: file, kind: 'other' }), 409, 'conflict');
    } finally {
      writing = false;
      await writer;
    }
    assert.equal(readdirSync(join(svc.dataDir, 'blobs')).length, before);
    assert.deepEqual(tmpEntries(), []);
    assert.ok(statSync(file).mode & 0o200, 'the file is still writable by its owner');
    rmSync(file);
  });

  test('kind=image of bytes that are no image: 400 and the file stays', async () => {
    const file = join(dirs('alpha').stage, 'fake.jpg');
    writeFileSync(file, 'nope');
    assertError(await adopt(T('alpha'), { path: file, kind: 'image' }), 400, 'bad_request');
    assert.equal(existsSync(file), true);
    assert.deepEqual(tmpEntries(), []);
  });

  test('a blob link across volumes: 422 cross_device, the file left in place', async (t) => {
    // The blob store on another volume (a tmpfs) than the studio's stage folder.
    await withFolderOnTmpfs(t, 'blobs', async (s, dataDir, elsewhere) => {
      const token = s.studio('xdev', ['assets']);
      const file = join(dataDir, 'studios', 'xdev', 'stage', 'big.bin');
      writeFileSync(file, randomBytes(1000));
      assertError(await client(s.port, token).post('/assets:adopt', { path: file, kind: 'other' }), 422, 'cross_device');
      assert.equal(existsSync(file), true);
      assert.equal(statSync(file).mode & 0o777, 0o644);
      assert.deepEqual(readdirSync(join(elsewhere, '.tmp')), []);
    });
  });

  test('a stage folder that is itself a symlink: 422 outside_roots', async () => {
    svc.cli(['studio', 'add', 'linked']);
    const token = svc.token('linked', ['assets']);
    const moved = tempDir();
    writeFileSync(join(moved, 'm.bin'), randomBytes(100));
    rmSync(dirs('linked').stage, { recursive: true });
    symlinkSync(moved, dirs('linked').stage);
    assertError(await adopt(token, { path: join(dirs('linked').stage, 'm.bin'), kind: 'other' }), 422, 'outside_roots');
    assertError(await adopt(token, { path: join(moved, 'm.bin'), kind: 'other' }), 422, 'outside_roots');
    assert.equal(existsSync(join(moved, 'm.bin')), true);
  });

  describe('attacks and bad input', () => {
    const stage = () => dirs('alpha').stage;
    before(() => {
      const outside = tempDir();
      writeFileSync(join(outside, 'secret.txt'), 'secret');
      mkdirSync(join(stage(), 'folder'), { recursive: true });
      symlinkSync(outside, join(stage(), 'link-dir'));
      symlinkSync(join(outside, 'secret.txt'), join(stage(), 'link-file'));
      execFileSync('mkfifo', [join(stage(), 'fifo')]);
      writeFileSync(join(dirs('beta').stage, 'betas.txt'), 'beta');
    });
    const rows: [string, () => unknown, number, string][] = [
      ['a relative path', () => ({ path: 'stage/x.txt', kind: 'other' }), 400, 'bad_request'],
      ['no kind', () => ({ path: join(stage(), 'x') }), 400, 'bad_request'],
      ['an unknown member', () => ({ path: join(stage(), 'x'), kind: 'other', mode: 'copy' }), 400, 'bad_request'],
      ['a symlink in the middle of the path', () => ({ path: join(stage(), 'link-dir', 'secret.txt'), kind: 'other' }), 422, 'outside_roots'],
      ['a symlink as the last component', () => ({ path: join(stage(), 'link-file'), kind: 'other' }), 422, 'outside_roots'],
      ['.. segments', () => ({ path: `${stage()}/../../../../etc/passwd`, kind: 'other' }), 422, 'outside_roots'],
      ['.. into another studio\'s stage', () => ({ path: `${stage()}/../../beta/stage/betas.txt`, kind: 'other' }), 422, 'outside_roots'],
      ['/proc/self/environ', () => ({ path: '/proc/self/environ', kind: 'other' }), 422, 'outside_roots'],
      ['/proc/self/root + a stage path', () => ({ path: `/proc/self/root${stage()}/x`, kind: 'other' }), 422, 'outside_roots'],
      ['the blob store', () => ({ path: join(svc.dataDir, 'blobs', blobFiles()[0]!), kind: 'other' }), 422, 'outside_roots'],
      ['a directory', () => ({ path: join(stage(), 'folder'), kind: 'other' }), 422, 'not_a_file'],
      ['a FIFO', () => ({ path: join(stage(), 'fifo'), kind: 'other' }), 422, 'not_a_file'],
      ['a missing file', () => ({ path: join(stage(), 'missing.bin'), kind: 'other' }), 404, 'not_found'],
    ];
    for (const [name, body, status, code] of rows) {
      test(`${name}: ${status} ${code}`, async () => assertError(await adopt(T('alpha'), body()), status, code));
    }
    test('without the capability: 403', async () => {
      assertError(await adopt(T('noAssets'), { path: join(stage(), 'x'), kind: 'other' }), 403, 'capability_required');
    });
  });
});

describe('reclaim over HTTP (with references: assets-reclaim.test.ts)', () => {
  const reclaim = (body: unknown) => client(svc.port, T('alpha')).post('/assets:reclaim', body);
  test('a preview of nothing: never-referenced assets are kept', async () => {
    const r = await reclaim({});
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(Object.keys(r.json).sort(), ['assets', 'bytes', 'items', 'preview']);
    assert.deepEqual(r.json.assets, []);
    assert.deepEqual(r.json.items, []);
    assert.equal(r.json.bytes, 0);
    assert.equal(typeof r.json.preview, 'string');
  });

  test('confirming that preview reclaims nothing and changes nothing', async () => {
    const { json } = await reclaim({});
    const r = await reclaim({ confirm: json.preview });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json, { reclaimed: [], bytes_freed: 0 });
    assert.equal((await getAsset(svc.port, T('alpha'), `/assets/${env.ids!.image}`)).status, 200);
  });

  test('a never-referenced asset named in asset_ids: 409 not_reclaimable with details.assets', async () => {
    const r = await reclaim({ asset_ids: [env.ids!.video, env.ids!.image] });
    assertError(r, 409, 'not_reclaimable', { assets: [env.ids!.image, env.ids!.video].sort() });
  });

  test('an unknown or unreadable id is not_reclaimable too', async () => {
    assertError(await reclaim({ asset_ids: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'] }), 409, 'not_reclaimable', { assets: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'] });
  });

  test('an unknown preview: 409 preview_changed with details.preview the current one', async () => {
    const current = await reclaim({});
    const r = await reclaim({ confirm: 'not-a-preview' });
    assertError(r, 409, 'preview_changed', { preview: current.json.preview, assets: [] });
  });

  runScenarios(() => env, [
    { name: 'reclaim: an id that cannot exist is not_reclaimable', method: 'POST', path: '/assets:reclaim', as: 'alpha', body: { asset_ids: ['x'] }, expectStatus: 409, expectCode: 'not_reclaimable', expectDetails: { assets: ['x'] } },
    { name: 'reclaim: asset_ids must be strings', method: 'POST', path: '/assets:reclaim', as: 'alpha', body: { asset_ids: [1] }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'reclaim: no body', method: 'POST', path: '/assets:reclaim', as: 'alpha', expectStatus: 400, expectCode: 'bad_request' },
    { name: 'reclaim: an empty asset_ids', method: 'POST', path: '/assets:reclaim', as: 'alpha', body: { asset_ids: [] }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'reclaim: unknown member', method: 'POST', path: '/assets:reclaim', as: 'alpha', body: { all: true }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'reclaim: confirm must be a string', method: 'POST', path: '/assets:reclaim', as: 'alpha', body: { confirm: true }, expectStatus: 400, expectCode: 'bad_request' },
    { name: 'reclaim: capability', method: 'POST', path: '/assets:reclaim', as: 'noAssets', body: {}, expectStatus: 403, expectCode: 'capability_required' },
  ]);
});

describe('limits', () => {
  let small: TestService;
  let full: TestService;
  before(async () => {
    [small, full] = await Promise.all([
      startService({ args: ['--upload-limit', '1000'] }),
      startService({ args: ['--disk-headroom', String(2 ** 52)] }),
    ]);
    env.tokens.small = small.studio('small', ['assets']);
    env.tokens.full = full.studio('full', ['assets']);
  });
  after(async () => {
    await Promise.all([small.stop(), full.stop()]);
  });
  const tmpOf = (s: TestService) => readdirSync(join(s.dataDir, 'blobs', '.tmp'));
  const blobsOf = (s: TestService) => readdirSync(join(s.dataDir, 'blobs')).filter((n) => n !== '.tmp');

  test('a body at the upload limit is stored', async () => {
    assert.equal((await upload(small.port, T('small'), randomBytes(1000), 'kind=other')).status, 201);
  });

  test('over the limit by Content-Length: 413 too_large with details.limit, before reading', async () => {
    const r = await upload(small.port, T('small'), randomBytes(1001), 'kind=other');
    assertError(asHttp(r), 413, 'too_large', { limit: 1000 });
    assert.deepEqual(tmpOf(small), []);
  });

  test('over the limit in a chunked body: 413 while streaming, the temp file removed', async () => {
    const before = blobsOf(small).length;
    const r = await uploadChunked(small.port, T('small'), [randomBytes(600), randomBytes(600), randomBytes(600)], 'kind=other');
    assertError(asHttp(r), 413, 'too_large', { limit: 1000 });
    await new Promise((res) => setTimeout(res, 100));
    assert.deepEqual(tmpOf(small), []);
    assert.equal(blobsOf(small).length, before);
  });

  test('not enough disk with headroom (Content-Length): 507 disk_space with needed and free, nothing written', async () => {
    const r = await upload(full.port, T('full'), randomBytes(5000), 'kind=other');
    assertError(asHttp(r), 507, 'disk_space', { needed: 5000 + 2 ** 52 });
    assert.equal(typeof r.json.details.free, 'number');
    assert.ok(r.json.details.free > 0 && r.json.details.free < 2 ** 52);
    assert.deepEqual(tmpOf(full), []);
    assert.deepEqual(blobsOf(full), []);
  });

  test('a refusal before the body is read closes the connection instead of draining the body', async () => {
    // 1 GiB announced, 64 KiB sent: the 507 comes at once, with Connection: close.
    const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: full.port,
          method: 'POST',
          path: '/api/v1/assets?kind=other',
          headers: { Authorization: `Bearer ${T('full')}`, 'Content-Length': String(2 ** 30) },
        },
        (res) => {
          resolve({ status: res.statusCode!, connection: res.headers.connection });
          res.resume();
          req.destroy();
        },
      );
      req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
      req.write(randomBytes(64 * 1024));
    });
    assert.equal(answer.status, 507);
    assert.equal(answer.connection, 'close');
    assert.deepEqual(tmpOf(full), []);
  });

  test('not enough disk with headroom (chunked): 507 before anything is written', async () => {
    const r = await uploadChunked(full.port, T('full'), [randomBytes(5000)], 'kind=other');
    assertError(asHttp(r), 507, 'disk_space', { needed: 2 ** 52 });
    assert.deepEqual(tmpOf(full), []);
    assert.deepEqual(blobsOf(full), []);
  });
});

describe('a library on another volume', () => {
  test('upload and adopt still work, with library_path null and a logged warning', async (t) => {
    await withFolderOnTmpfs(t, 'library', async (s, dataDir) => {
      const token = s.studio('lib', ['assets']);
      const r = await upload(s.port, token, randomBytes(100), 'kind=other&filename=x.bin');
      assert.equal(r.status, 201, r.body.toString());
      assert.equal(r.json.library_path, null);
      const file = join(dataDir, 'studios', 'lib', 'stage', 'y.bin');
      writeFileSync(file, randomBytes(100));
      const adopted = await client(s.port, token).post('/assets:adopt', { path: file, kind: 'other' });
      assert.equal(adopted.status, 201, adopted.text);
      assert.equal(adopted.json.library_path, null);
      assert.equal((await getAsset(s.port, token, `/assets/${adopted.json.id}`)).status, 200);
      assert.match(s.stderr(), /no library file for x\.bin .*another volume/);
    });
  });
});

describe('crash safety', () => {
  test('killed mid-upload and mid-adopt: after a restart no temp file, no row without its file, no orphan blob', async () => {
    const dataDir = tempDir();
    let s = await startService({ dataDir });
    const token = s.studio('crash', ['assets']);
    assert.equal((await upload(s.port, token, randomBytes(1000), 'kind=other')).status, 201);
    // An upload that never ends: wait for its temp file, then kill the process.
    let sending = true;
    async function* endless() {
      while (sending) {
        yield randomBytes(256 * 1024);
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    void uploadChunked(s.port, token, endless(), 'kind=other').catch(() => {});
    const tmp = join(dataDir, 'blobs', '.tmp');
    for (let i = 0; i < 200 && readdirSync(tmp).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(readdirSync(tmp).length, 1, 'the upload is in progress');
    // An adopt in progress at the same moment: a big data file being hashed.
    const dataFile = join(dataDir, 'studios', 'crash', 'data', 'big.bin');
    writeFileSync(dataFile, Buffer.alloc(256 * 1024 * 1024, 7));
    void client(s.port, token).post('/assets:adopt', { path: dataFile, kind: 'other' }).catch(() => {});
    // The adopt links the file into blobs/.tmp first, then hashes it (~150 ms here): kill it then.
    for (let i = 0; i < 1000 && readdirSync(tmp).length < 2; i++) await new Promise((r) => setTimeout(r, 2));
    assert.equal(readdirSync(tmp).length, 2, 'the adopt is in progress');
    s.child.kill('SIGKILL');
    await new Promise((r) => s.child.once('exit', r));
    sending = false;
    // A blob renamed into place whose row was never written (killed between the two).
    writeFileSync(join(dataDir, 'blobs', `${'ab'.repeat(32)}.bin`), 'orphan');

    s = await startService({ dataDir });
    try {
      assert.deepEqual(readdirSync(tmp), [], 'temp files are gone after the restart');
      const blobs = readdirSync(join(dataDir, 'blobs')).filter((n) => n !== '.tmp');
      assert.ok(!blobs.includes(`${'ab'.repeat(32)}.bin`), 'the orphan blob is gone');
      const Database = (await import('better-sqlite3')).default;
      const db = new Database(join(dataDir, 'backlot.db'), { readonly: true });
      const rows = db.prepare('SELECT sha256, ext FROM assets WHERE reclaimed_at IS NULL').all() as { sha256: string; ext: string }[];
      db.close();
      for (const row of rows) assert.ok(existsSync(join(dataDir, 'blobs', row.sha256 + row.ext)), `row ${row.sha256} has its file`);
      assert.equal(blobs.length, rows.length);
      assert.equal(existsSync(dataFile), true, 'the studio\'s data file is untouched');
    } finally {
      await s.stop();
    }
  });
});

/**
 * Runs a service whose data-dir folder `name` lives on /dev/shm (a tmpfs, another volume than
 * the temp dir), placed there by a symlink of the user's; skips where /dev/shm is the same volume.
 */
async function withFolderOnTmpfs(
  t: { skip(message: string): void },
  name: 'blobs' | 'library',
  fn: (s: TestService, dataDir: string, elsewhere: string) => Promise<void>,
): Promise<void> {
  if (statSync('/dev/shm').dev === statSync(tempDir()).dev) return t.skip('/dev/shm is on the temp dir\'s volume');
  const dataDir = tempDir();
  const elsewhere = join('/dev/shm', `backlot-${name}-${process.pid}`);
  mkdirSync(elsewhere, { recursive: true });
  symlinkSync(elsewhere, join(dataDir, name));
  const s = await startService({ dataDir });
  try {
    await fn(s, dataDir, elsewhere);
  } finally {
    await s.stop();
    rmSync(elsewhere, { recursive: true, force: true });
  }
}
