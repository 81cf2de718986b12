import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { getAsset, upload } from './helpers/assets';
import { ffmpeg, makeVideo, requireFfmpeg } from './helpers/media';
import { assertError } from './helpers/scenario';
import { send } from './helpers/http';
import { startService, tempDir, type TestService } from './helpers/service';
import { asHttp } from './helpers/assets';

/**
 * Thumbnails of video and sound (docs/api.md §Thumbnails), with the real
 * ffmpeg: a video's is one of its frames, a sound's is its whole waveform with
 * an x axis from 0 to the file's end and no margin; both are 320 px WebP, made
 * once per sha256 and cached (a second request runs no ffmpeg: the cache file
 * and the log say so), and fill the asset's `duration_s` when no hint was given.
 */

let svc: TestService;
let dir: string;
let token: string;
let cred: string;

/** The asset's row as the studio sees it: the upload of the same bytes answers it (200). */
async function assetRow(file: string, type: string): Promise<any> {
  const res = await upload(svc.port, token, readFileSync(file), 'kind=other', type);
  assert.equal(res.status, 200, res.body.toString());
  return res.json;
}

const made = (sha: string) => svc.stderr().split('\n').filter((l) => l.includes('thumbnail made') && l.includes(sha));

async function uploadFile(file: string, query: string, type: string): Promise<any> {
  const res = await upload(svc.port, token, readFileSync(file), query, type);
  assert.equal(res.status, 201, res.body.toString());
  return res.json;
}

/** Columns (of 320) that have any painted pixel: alpha above a small threshold. */
async function paintedColumns(webp: Buffer): Promise<boolean[]> {
  const { data, info } = await sharp(webp).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const columns: boolean[] = [];
  for (let x = 0; x < info.width; x++) {
    let painted = false;
    for (let y = 0; y < info.height && !painted; y++) painted = data[(y * info.width + x) * info.channels + 3]! > 24;
    columns.push(painted);
  }
  return columns;
}

before(async () => {
  requireFfmpeg();
  dir = tempDir('backlot-mthumbs-');
  svc = await startService();
  token = svc.studio('alpha', ['assets']);
  cred = svc.cli(['launcher-token']).stdout.trim();
});

after(async () => {
  await svc?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('video: a poster frame', () => {
  test('320 px WebP of a frame, aspect kept; made once and cached (the cache file is not written again); duration_s filled in', async () => {
    const file = makeVideo(join(dir, 'clip.mp4'), { width: 640, height: 360, seconds: 2 });
    const asset = await uploadFile(file, 'kind=video&filename=clip.mp4', 'video/mp4');
    assert.equal(asset.duration_s, null);
    const first = await getAsset(svc.port, token, `/assets/${asset.id}/thumb`);
    assert.equal(first.status, 200, first.body.toString());
    assert.equal(first.headers['content-type'], 'image/webp');
    const meta = await sharp(first.body).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height], ['webp', 320, 180]);
    // A frame of testsrc: many colours, not a black or empty picture.
    const stats = await sharp(first.body).stats();
    assert.ok(stats.channels.slice(0, 3).some((c) => c.stdev > 30), 'a picture, not a flat colour');
    const cached = join(svc.dataDir, 'thumbs', `${asset.sha256}-320.webp`);
    const mtime = statSync(cached).mtimeMs;
    const second = await getAsset(svc.port, token, `/assets/${asset.id}/thumb`);
    assert.equal(second.status, 200);
    assert.deepEqual(second.body, first.body);
    const launcher = await getAsset(svc.port, cred, `/launcher/assets/${asset.id}/thumb`);
    assert.equal(launcher.status, 200);
    assert.deepEqual(launcher.body, first.body);
    assert.equal(statSync(cached).mtimeMs, mtime, 'the cached file is served, not made again');
    assert.equal(made(asset.sha256).length, 1, svc.stderr());
    const row = await assetRow(file, 'video/mp4');
    assert.ok(Math.abs(row.duration_s - 2) < 0.1, `duration_s ${row.duration_s}`);
  });

  test('concurrent first requests make it once', async () => {
    const file = makeVideo(join(dir, 'burst.mp4'), { width: 320, height: 240, seconds: 1, crf: 30 });
    const asset = await uploadFile(file, 'kind=video', 'video/mp4');
    const answers = await Promise.all(Array.from({ length: 6 }, () => getAsset(svc.port, token, `/assets/${asset.id}/thumb`)));
    for (const a of answers) assert.equal(a.status, 200);
    for (const a of answers) assert.deepEqual(a.body, answers[0]!.body);
    assert.deepEqual([(await sharp(answers[0]!.body).metadata()).height], [240]);
    assert.equal(made(asset.sha256).length, 1, svc.stderr());
  });

  test("a playlist naming another blob, uploaded as video, gets no thumbnail (501): the file it names is never read", async () => {
    const other = svc.studio('other', ['assets']);
    const secret = makeVideo(join(dir, 'secret.mp4'), { width: 160, height: 90, seconds: 1 });
    const stored = await upload(svc.port, other, readFileSync(secret), 'kind=video', 'video/mp4');
    assert.equal(stored.status, 201);
    const playlist = ['#EXTM3U', '#EXT-X-TARGETDURATION:1', '#EXTINF:1,', `${stored.json.sha256}.mp4`, '#EXT-X-ENDLIST', ''].join('\n');
    const res = await upload(svc.port, token, Buffer.from(playlist), 'kind=video&filename=list.mp4', 'video/mp4');
    assert.equal(res.status, 201);
    assertError(asHttp(await getAsset(svc.port, token, `/assets/${res.json.id}/thumb`)), 501, 'unsupported');
    assert.equal(existsSync(join(svc.dataDir, 'thumbs', `${res.json.sha256}-320.webp`)), false);
  });

  test('bytes ffmpeg cannot read: 501 unsupported, and no cache file', async () => {
    const res = await upload(svc.port, token, Buffer.from('not really a video, just text'), 'kind=video', 'video/mp4');
    assert.equal(res.status, 201);
    assertError(asHttp(await getAsset(svc.port, token, `/assets/${res.json.id}/thumb`)), 501, 'unsupported');
    assert.equal(existsSync(join(svc.dataDir, 'thumbs', `${res.json.sha256}-320.webp`)), false);
  });
});

describe('sound: the waveform of the whole file', () => {
  test('x spans 0..duration with no margin: a file silent for its first half is painted only in its right half', async () => {
    const file = join(dir, 'half.wav');
    ffmpeg(['-f', 'lavfi', '-i', "aevalsrc='if(lt(t,2),0,0.9*sin(2*PI*440*t))':s=48000:d=4", '-c:a', 'pcm_s16le', file]);
    const asset = await uploadFile(file, 'kind=audio&filename=half.wav', 'audio/wav');
    const res = await getAsset(svc.port, token, `/assets/${asset.id}/thumb`);
    assert.equal(res.status, 200, res.body.toString());
    assert.equal(res.headers['content-type'], 'image/webp');
    const meta = await sharp(res.body).metadata();
    assert.deepEqual([meta.format, meta.width, meta.height, meta.hasAlpha], ['webp', 320, 80, true]);
    const columns = await paintedColumns(res.body);
    const painted = columns.map((p, x) => (p ? x : -1)).filter((x) => x >= 0);
    // The tone starts at 2 s of 4: x = 160 of 320, give or take a column of scaling.
    assert.ok(painted.length > 0, 'something is drawn');
    assert.ok(Math.abs(painted[0]! - 160) <= 2, `first painted column ${painted[0]}`);
    assert.ok(painted[painted.length - 1]! >= 318, `last painted column ${painted[painted.length - 1]}`);
    assert.equal(columns.slice(0, 158).filter(Boolean).length, 0, 'the silent half is empty');
    assert.ok(columns.slice(162).every(Boolean), 'the loud half is painted to the right edge');
    const again = await getAsset(svc.port, token, `/assets/${asset.id}/thumb`);
    assert.deepEqual(again.body, res.body);
    assert.equal(made(asset.sha256).length, 1);
    assert.ok(Math.abs((await assetRow(file, 'audio/wav')).duration_s - 4) < 0.05);
  });

  test("a studio's duration_s hint is kept", async () => {
    const file = join(dir, 'hinted.wav');
    ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=300:sample_rate=22050', '-t', '1', '-c:a', 'pcm_s16le', file]);
    const asset = await uploadFile(file, 'kind=audio&duration_s=7.5', 'audio/wav');
    assert.equal((await getAsset(svc.port, token, `/assets/${asset.id}/thumb`)).status, 200);
    assert.equal((await assetRow(file, 'audio/wav')).duration_s, 7.5);
  });

  test('GET /launcher/assets/{id}/info: the record with the measured length and the file name; 404 unknown; 401 for a studio token', async () => {
    const file = join(dir, 'info.wav');
    ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=500:sample_rate=16000', '-t', '3', '-c:a', 'pcm_s16le', file]);
    const asset = await uploadFile(file, 'kind=audio&filename=My%20take.wav', 'audio/wav');
    const path = `/api/v1/launcher/assets/${asset.id}/info`;
    const before = await send(svc.port, { path, token: cred });
    assert.equal(before.status, 200, before.text);
    assert.deepEqual([before.json.id, before.json.kind, before.json.filename, before.json.duration_s], [asset.id, 'audio', 'My take.wav', null]);
    assert.equal((await getAsset(svc.port, cred, `/launcher/assets/${asset.id}/thumb`)).status, 200);
    const after = await send(svc.port, { path, token: cred });
    assert.ok(Math.abs(after.json.duration_s - 3) < 0.05, `duration_s ${after.json.duration_s}`);
    assertError(await send(svc.port, { path: '/api/v1/launcher/assets/01ARZ3NDEKTSV4RRFFQ69G5FAV/info', token: cred }), 404, 'not_found');
    assertError(await send(svc.port, { path, token }), 401, 'unauthenticated');
    assertError(await send(svc.port, { path }), 401, 'unauthenticated');
    assertError(await send(svc.port, { path, token: cred, headers: { Origin: 'http://evil.example' } }), 403, 'bad_origin');
  });

  test('an `other` asset still has no thumbnail: 501', async () => {
    const res = await upload(svc.port, token, Buffer.from('plain bytes'), 'kind=other');
    assertError(asHttp(await getAsset(svc.port, token, `/assets/${res.json.id}/thumb`)), 501, 'unsupported');
  });
});
