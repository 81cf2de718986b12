import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { upload } from './helpers/assets';
import { send } from './helpers/http';
import { makeVideo, requireFfmpeg } from './helpers/media';
import { startService, tempDir, type TestService } from './helpers/service';

/**
 * A media file is probed (and so exported) as itself only (docs/security.md,
 * Inputs: ffmpeg and ffprobe). ffmpeg recognises an HLS playlist or an ffconcat script by
 * its text whatever the file's name, and then reads the files it names
 * beside it: uploaded as a video, such a file naming studio alpha's blob
 * (`<sha256>.mp4`, beside it in the blob store) was probed as alpha's video,
 * and its clip planned and exported. Now it cannot be probed: the plan
 * refuses the clip (422 invalid_timeline, "could not be probed").
 */

const TARGET = { fps: 25, width: 320, height: 180 };
let svc: TestService;
let dir: string;
let alpha: string;
let beta: string;
let alphaVideo: { id: string; sha256: string };

before(async () => {
  requireFfmpeg();
  dir = tempDir('backlot-probe-refs-');
  svc = await startService();
  alpha = svc.studio('alpha', ['timeline', 'assets']);
  beta = svc.studio('beta', ['timeline', 'assets']);
  const video = makeVideo(join(dir, 'secret.mp4'), { width: 320, height: 180, fps: 25, seconds: 1 });
  alphaVideo = await uploaded(alpha, readFileSync(video), 'kind=video&filename=secret.mp4');
});
after(async () => {
  await svc.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function uploaded(token: string, bytes: Buffer, query: string): Promise<{ id: string; sha256: string }> {
  const r = await upload(svc.port, token, bytes, query);
  assert.equal(r.status, 201, r.body.toString());
  return r.json;
}

for (const [name, text, filename] of [
  ['an HLS playlist', (n: string) => `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n${n}\n#EXT-X-ENDLIST\n`, 'clip.m3u8'],
  ['an HLS playlist named .mp4', (n: string) => `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n${n}\n#EXT-X-ENDLIST\n`, 'clip.mp4'],
  ['an ffconcat script', (n: string) => `ffconcat version 1.0\nfile ${n}\n`, 'clip.mp4'],
] as const) {
  test(`${name} naming another studio's blob is not probed as that video: its clip is refused`, async () => {
    const asset = await uploaded(beta, Buffer.from(`${text(`${alphaVideo.sha256}.mp4`)}# ${name}\n`), `kind=video&filename=${filename}`);
    const seq = await send(svc.port, { method: 'POST', path: '/api/v1/timeline', token: beta, body: { name: 'refs', target: TARGET, clips: [{ asset_id: asset.id, duration: 1 }] } });
    assert.equal(seq.status, 201, seq.text);
    const plan = await send(svc.port, { path: `/api/v1/timeline/${seq.json.id}:plan`, token: beta });
    assert.equal(plan.status, 422, plan.text);
    assert.equal(plan.json.code, 'invalid_timeline');
    assert.equal(plan.json.details.clips.length, 1);
    assert.match(plan.json.details.clips[0].reason, /could not be probed/);
  });
}

test("alpha's own video still plans (the probe takes real media)", async () => {
  const seq = await send(svc.port, { method: 'POST', path: '/api/v1/timeline', token: alpha, body: { name: 'own', target: TARGET, clips: [{ asset_id: alphaVideo.id }] } });
  assert.equal(seq.status, 201, seq.text);
  const plan = await send(svc.port, { path: `/api/v1/timeline/${seq.json.id}:plan`, token: alpha });
  assert.equal(plan.status, 200, plan.text);
});
