import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { accessSync, constants, readFileSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bundledPackage } from '../service/media';
import { upload } from './helpers/assets';
import { downloadAsset, frameDifference, frameGray, loudness, probeFile, rate, videoPackets, waitForJob } from './helpers/export';
import { client, send } from './helpers/http';
import { makeAudio, makeImage, makeVideo, requireFfmpeg } from './helpers/media';
import { startService, tempDir, type TestService } from './helpers/service';
import type { Client } from './helpers/timeline';

/**
 * The conform export through the ffmpeg that comes with Backlot, named
 * explicitly (BACKLOT_FFMPEG), whatever else the machine has: on Linux and
 * Windows x64 that is FFmpeg 4.1 (docs/design.md "The conform graph runs on
 * ffmpeg 4.1"). A packaged app on a machine without ffmpeg exports with it,
 * so its graph must hold only filters 4.1 has and come out frame-exact there:
 * an image crossfaded into a clip (the image's last frames, the blend), a
 * clip crossfaded into the next, an upper track, and two sound tracks summed.
 */

const TARGET = { fps: 25, width: 320, height: 180, sample_rate: 48000 };

/** Backlot's own ffmpeg for this platform, or why there is none. */
function bundledFfmpeg(): { path: string } | { missing: string } {
  const { name, file } = bundledPackage('ffmpeg');
  let dir: string;
  try {
    dir = dirname(require.resolve(`${name}/package.json`));
  } catch {
    return { missing: `Backlot's own ffmpeg (${name}) is not installed: there is no such package for ${process.platform}-${process.arch}` };
  }
  const bin = join(dir, file);
  accessSync(bin, constants.X_OK);
  return { path: bin };
}

const bundled = bundledFfmpeg();
const skip = 'missing' in bundled ? bundled.missing : false;

let svc: TestService;
let dir: string;
let alpha: Client;
let token: string;
const files: Record<string, string> = {};
const ids: Record<string, string> = {};

before(async () => {
  if (skip) return;
  requireFfmpeg();
  dir = tempDir('backlot-export-bundled-');
  const f = (name: string) => (files[name.replace(/\..*$/, '')] = join(dir, name));
  // An image of another shape (fitted, padded), silent clips at the target's rate and at another.
  makeImage(f('square.png'), { width: 181, height: 181 });
  makeVideo(f('one.mp4'), { seconds: 1 });
  makeVideo(f('other.mp4'), { fps: 30, seconds: 1 });
  makeVideo(f('upper.mp4'), { width: 160, height: 120, seconds: 1 });
  makeAudio(f('tone.wav'), { seconds: 1 });
  svc = await startService({ env: { BACKLOT_FFMPEG: (bundled as { path: string }).path } });
  token = svc.studio('alpha', ['timeline', 'assets', 'jobs', 'gallery']);
  alpha = client(svc.port, token);
  const kinds: Record<string, string> = { square: 'image', one: 'video', other: 'video', upper: 'video', tone: 'audio' };
  for (const [name, kind] of Object.entries(kinds)) {
    const res = await upload(svc.port, token, readFileSync(files[name]!), `kind=${kind}&filename=${encodeURIComponent(basename(files[name]!))}`);
    assert.equal(res.status, 201, res.body.toString());
    ids[name] = res.json.id;
  }
});

after(async () => {
  await svc?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('conform export with the ffmpeg that comes with Backlot', () => {
  test('crossfades, an upper track and two sound tracks: H.264 of the sequence’s frames, blended where it fades, the tracks summed', { skip }, async () => {
    const version = execFileSync((bundled as { path: string }).path, ['-hide_banner', '-version'], { encoding: 'utf8' }).split('\n')[0]!;
    const created = await send(svc.port, {
      method: 'POST',
      path: '/api/v1/timeline',
      token,
      body: {
        name: 'bundled',
        target: TARGET,
        tracks: {
          V1: [
            { asset_id: ids.square, start: 0, duration: 1 },
            { asset_id: ids.one, start: 1, transition: { kind: 'crossfade', duration: 0.4 } },
            { asset_id: ids.other, start: 2, transition: { kind: 'crossfade', duration: 0.2 } },
          ],
          V2: [{ asset_id: ids.upper, start: 0.1, duration: 0.6 }],
          // The same tone from 0 and from 0.5 s: in phase (220 whole cycles apart), so the sum is 6 dB louder.
          A1: [{ asset_id: ids.tone, start: 0 }],
          A2: [{ asset_id: ids.tone, start: 0.5 }],
        },
      },
    });
    assert.equal(created.status, 201, created.text);
    const timeline = created.json;
    assert.equal(timeline.duration, 3);
    const plan = await alpha.get(`/timeline/${timeline.id}:plan?preset=h264`);
    assert.equal(plan.json.path, 'conform', plan.text);

    const started = await alpha.post(`/timeline/${timeline.id}:export`, { preset: 'h264' });
    assert.equal(started.status, 202, started.text);
    const job = await waitForJob(alpha, started.json.id, 60_000);
    assert.equal(job.state, 'succeeded', `${version}: ${JSON.stringify(job)}`);
    const file = join(dir, 'out.mp4');
    await downloadAsset(svc.port, token, job.data.asset_id, file);

    const probe = probeFile(file);
    const video = probe.streams.find((s) => s.codec_type === 'video')!;
    assert.equal(video.codec_name, 'h264');
    assert.deepEqual([video.width, video.height, rate(video.r_frame_rate)], [320, 180, 25]);
    const frame = 1 / TARGET.fps;
    assert.ok(Math.abs(Number(video.duration) - 3) <= frame + 1e-6, `video ${video.duration} s for 3 s (${version})`);
    assert.ok(Math.abs(Number(probe.format.duration) - 3) <= frame + 1e-6, `file ${probe.format.duration} s for 3 s`);
    assert.equal(videoPackets(file).length, 75, `75 frames for 3 s at 25 fps (${version})`);

    // Each crossfade: mid-fade the picture is neither clip's own; once it is over, it is the clip's.
    const own = (t: number, source: string, start: number) => frameDifference(frameGray(file, t), frameGray(files[source]!, t - start));
    const [fading, faded] = [own(1.2, 'one', 1), own(1.6, 'one', 1)];
    assert.ok(fading > 2 && fading > 3 * faded, `image into clip: difference from the clip's own picture mid-fade ${fading}, after ${faded}`);
    // The first clip ran on 0.2 s past its 1 s source (held) under the second crossfade.
    const [fading2, faded2] = [own(2.08, 'other', 2), own(2.6, 'other', 2)];
    assert.ok(fading2 > 2 && fading2 > 3 * faded2, `clip into clip: mid-fade ${fading2}, after ${faded2}`);

    // The sound: one tone alone, then both summed at their own levels (amix's division undone).
    const alone = loudness(file, 0.1, 0.4);
    const both = loudness(file, 0.6, 0.9);
    assert.ok(both.mean - alone.mean > 5 && both.mean - alone.mean < 7, `one tone ${alone.mean} dB, both ${both.mean} dB`);
  });
});
