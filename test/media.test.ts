import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PROBE_VERSION, ProbeError, probeMedia, toolPath, type MediaProbe, type VideoStreamInfo } from '../service/media';
import { ApiError } from '../service/core/errors';
import { makeAudio, makeImage, makeVideo, requireFfmpeg, setTrackRotation } from './helpers/media';
import { tempDir } from './helpers/service';

/**
 * probeMedia on files the real ffmpeg makes (test/helpers/media.ts). Fails,
 * never skips, when ffmpeg or ffprobe is missing (CI installs them).
 */

let dir = '';
const at = (name: string) => path.join(dir, name);
/** The reference clip: 320x180, 25 fps, 1 s, High, yuv420p, with AAC. */
let base: MediaProbe;

before(async () => {
  requireFfmpeg();
  dir = tempDir('backlot-media-');
  makeVideo(at('base.mp4'), { profile: 'high', audio: true });
  base = await probeMedia(at('base.mp4'));
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The fields the timeline plan compares (everything but where and how long). */
function comparable(v: VideoStreamInfo): Omit<VideoStreamInfo, 'duration_s' | 'nb_frames'> {
  const { duration_s: _d, nb_frames: _n, ...rest } = v;
  return rest;
}

describe('probeMedia: a known clip', () => {
  test('every video field', () => {
    const v = base.video!;
    assert.match(v.extradata_hash ?? '', /^SHA256:[0-9a-f]{64}$/);
    assert.deepEqual({ ...v, extradata_hash: 'checked' }, {
      index: 0, codec: 'h264', codec_tag: 'avc1', profile: 'High',
      level: 12, // what x264 picks for 320x180 at 25 fps
      width: 320, height: 180, sar: '1:1', dar: '16:9', field_order: 'progressive', pix_fmt: 'yuv420p',
      time_base: '1/12800', frame_rate: '25/1', avg_frame_rate: '25/1',
      color_range: null, color_space: null, color_transfer: null, color_primaries: null,
      extradata_hash: 'checked', rotation: 0, duration_s: 1, nb_frames: 25, still: false,
    });
  });

  test('container and audio', () => {
    assert.equal(base.version, PROBE_VERSION);
    assert.equal(base.format, 'mov,mp4,m4a,3gp,3g2,mj2');
    assert.ok(base.duration_s! >= 1 && base.duration_s! < 1.1, `duration ${base.duration_s}`);
    const a = base.audio!;
    assert.deepEqual({ ...a, duration_s: 0 }, { index: 1, codec: 'aac', sample_rate: 48000, channels: 1, channel_layout: 'mono', duration_s: 0 });
    assert.ok(a.duration_s! >= 1 && a.duration_s! < 1.1, `audio duration ${a.duration_s}`);
  });
});

describe('probeMedia: identical settings probe identically (the plan\'s copy case)', () => {
  test('same options, another run: every field equal, extradata hash included', async () => {
    makeVideo(at('again.mp4'), { profile: 'high', audio: true });
    assert.deepEqual(await probeMedia(at('again.mp4')), base);
  });

  test('same options, another length: only duration and frame count differ', async () => {
    const longer = (await probeMedia(makeVideo(at('longer.mp4'), { profile: 'high', audio: true, seconds: 2 }))).video!;
    assert.deepEqual(comparable(longer), comparable(base.video!));
    assert.equal(longer.duration_s, 2);
    assert.equal(longer.nb_frames, 50);
  });
});

describe('probeMedia: each setting changes its field', () => {
  const rows: { name: string; options: Parameters<typeof makeVideo>[1]; expect: Partial<VideoStreamInfo>; sameExtradata?: boolean }[] = [
    { name: 'profile main', options: { profile: 'main' }, expect: { profile: 'Main' } },
    { name: 'profile baseline', options: { profile: 'baseline' }, expect: { profile: 'Constrained Baseline' } },
    { name: 'pix_fmt yuv444p', options: { pixFmt: 'yuv444p', profile: undefined }, expect: { pix_fmt: 'yuv444p', profile: 'High 4:4:4 Predictive' } },
    { name: 'size', options: { width: 160, height: 90 }, expect: { width: 160, height: 90, level: 11 } },
    { name: 'frame rate 30000/1001', options: { fps: '30000/1001' }, expect: { frame_rate: '30000/1001', avg_frame_rate: '30000/1001', time_base: '1/30000', level: 13 } },
    // ffmpeg still writes the avcC box for avc3, so only the tag tells them apart.
    { name: 'avc3 tag', options: { tag: 'avc3' }, expect: { codec_tag: 'avc3' }, sameExtradata: true },
    { name: 'rotation 90', options: { rotate: 90 }, expect: { rotation: 90 }, sameExtradata: true },
    { name: 'rotation 180', options: { rotate: 180 }, expect: { rotation: 180 }, sameExtradata: true },
    { name: 'rotation 270', options: { rotate: 270 }, expect: { rotation: 270 }, sameExtradata: true },
    { name: 'mpeg4', options: { codec: 'mpeg4', profile: undefined }, expect: { codec: 'mpeg4', codec_tag: 'mp4v', profile: 'Simple Profile', level: 1, field_order: null } },
  ];
  for (const row of rows) {
    test(row.name, async () => {
      const file = makeVideo(at(`${row.name.replace(/\W+/g, '-')}.mp4`), { profile: 'high', ...row.options });
      const v = (await probeMedia(file)).video!;
      const expected = { ...comparable(base.video!), ...row.expect };
      const { extradata_hash: hash, ...rest } = comparable(v);
      const { extradata_hash: baseHash, ...restExpected } = expected;
      assert.deepEqual(rest, restExpected);
      if (row.sameExtradata) assert.equal(hash, baseHash);
      else assert.notEqual(hash, baseHash, 'parameter sets should differ');
    });
  }

  test('rotation 90 is the clockwise turn ffmpeg applies to show the picture', () => {
    const upright = makeVideo(at('upright.mp4'), { profile: 'high', seconds: 0.2 });
    const turned = at('turned.mp4');
    copyFileSync(upright, turned);
    setTrackRotation(turned, 90);
    const frame = (args: string[]) =>
      execFileSync(toolPath('ffmpeg')!, ['-v', 'error', '-nostdin', ...args, '-frames:v', '1', '-f', 'framemd5', '-'], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .at(-1)!
        .split(',')
        .at(-1)!;
    const shown = frame(['-i', turned]);
    assert.equal(shown, frame(['-i', upright, '-vf', 'transpose=clock']));
    assert.notEqual(shown, frame(['-i', upright, '-vf', 'transpose=cclock']));
  });

  test('HEVC (libx265) when this ffmpeg has it', async (t) => {
    const encoders = execFileSync(toolPath('ffmpeg')!, ['-hide_banner', '-encoders'], { encoding: 'utf8' });
    if (!/\blibx265\b/.test(encoders)) return t.skip('this ffmpeg has no libx265');
    const hev1 = (await probeMedia(makeVideo(at('hevc.mp4'), { codec: 'libx265' }))).video!;
    const hvc1 = (await probeMedia(makeVideo(at('hvc1.mp4'), { codec: 'libx265', tag: 'hvc1' }))).video!;
    assert.deepEqual([hev1.codec, hev1.codec_tag, hev1.profile], ['hevc', 'hev1', 'Main']);
    assert.equal(hvc1.codec_tag, 'hvc1');
    // hvcC marks its parameter-set arrays complete for hvc1 (none in-band), not for hev1.
    assert.notEqual(hvc1.extradata_hash, hev1.extradata_hash);
    assert.deepEqual(comparable((await probeMedia(makeVideo(at('hevc-again.mp4'), { codec: 'libx265', seconds: 2 }))).video!), comparable(hev1));
  });
});

describe('probeMedia: pictures and sound', () => {
  for (const ext of ['png', 'jpg', 'gif', 'webp', 'bmp', 'tiff']) {
    test(`a ${ext} image is still`, async () => {
      const probe = await probeMedia(makeImage(at(`picture.${ext}`), { width: 64, height: 36 }));
      assert.equal(probe.video!.still, true);
      assert.deepEqual([probe.video!.width, probe.video!.height, probe.audio], [64, 36, null]);
    });
  }

  test('an animated gif is not still', async () => {
    const { ffmpeg } = await import('./helpers/media');
    ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x36:rate=5', '-t', '1', at('anim.gif')]);
    const v = (await probeMedia(at('anim.gif'))).video!;
    assert.deepEqual([v.still, v.nb_frames], [false, 5]);
  });

  test('a video is not still', () => assert.equal(base.video!.still, false));

  test('audio only (wav): video is null', async () => {
    const probe = await probeMedia(makeAudio(at('tone.wav'), { seconds: 0.5, sampleRate: 22050, channels: 2 }));
    assert.equal(probe.video, null);
    assert.deepEqual(probe.audio, { index: 0, codec: 'pcm_s16le', sample_rate: 22050, channels: 2, channel_layout: null, duration_s: 0.5 });
  });

  test('audio with cover art (m4a): the picture is not the video stream', async () => {
    const probe = await probeMedia(makeAudio(at('covered.m4a'), { seconds: 0.5, cover: at('picture.png') }));
    assert.equal(probe.video, null);
    assert.equal(probe.audio!.codec, 'aac');
  });
});

describe('probeMedia: failures', () => {
  test('a file that is not media is a ProbeError with ffprobe\'s reason', async () => {
    writeFileSync(at('notes.txt'), 'just some words, not a movie\n');
    await assert.rejects(probeMedia(at('notes.txt')), (err: unknown) => {
      assert.ok(err instanceof ProbeError);
      assert.equal(err.message, 'ffprobe could not read the file: Invalid data found when processing input');
      return true;
    });
  });

  test('a zero-length or cut MP4 is a ProbeError with ffprobe\'s reason, without the demuxer\'s memory address', async () => {
    writeFileSync(at('empty.mp4'), Buffer.alloc(0));
    // The first bytes of a file whose index (moov) comes last: the index is cut off.
    writeFileSync(at('cut.mp4'), readFileSync(at('base.mp4')).subarray(0, 2000));
    for (const name of ['empty.mp4', 'cut.mp4']) {
      await assert.rejects(probeMedia(at(name)), (err: unknown) => {
        assert.ok(err instanceof ProbeError);
        assert.equal(err.message, 'ffprobe could not read the file: moov atom not found', name);
        return true;
      });
    }
  });

  test('a missing file is a ProbeError', async () => {
    await assert.rejects(probeMedia(at('nowhere.mp4')), /ffprobe could not read the file: No such file or directory/);
  });

  test('without ffprobe: 501 unsupported with details.tool, before anything runs', async () => {
    const env = { ...process.env, BACKLOT_FFPROBE: at('no-such-ffprobe') };
    await assert.rejects(probeMedia(at('base.mp4'), { env }), (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.deepEqual([err.status, err.code, err.details], [501, 'unsupported', { tool: 'ffprobe' }]);
      return true;
    });
  });

  test('a name Node cannot pass (a NUL byte) is a ProbeError', async () => {
    await assert.rejects(probeMedia(at('a\0b.mp4')), (err: unknown) => err instanceof ProbeError && /Could not start ffprobe/.test(err.message));
  });

  test('a cancelled probe is a ProbeError', async () => {
    await assert.rejects(probeMedia(at('base.mp4'), { signal: AbortSignal.abort() }), /cancelled/);
  });
});

describe('probeMedia: file names are never options, protocols or patterns', () => {
  const names = [
    '-i.mp4',
    '-version',
    'with spaces and \'single\' "double" quotes.mp4',
    'ünïcødé 日本語 🎬.mp4',
    'concat:base.mp4',
    '$(touch pwned).mp4',
  ];
  for (const name of names) {
    test(JSON.stringify(name), async () => {
      copyFileSync(at('base.mp4'), at(name));
      assert.deepEqual(await probeMedia(at(name)), base);
    });
  }

  test('a relative name starting with - is resolved against the working directory', async () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      assert.deepEqual(await probeMedia('-i.mp4'), base);
    } finally {
      process.chdir(cwd);
    }
  });

  test('% and glob characters in an image name are not a sequence', async () => {
    for (const name of ['frame-%d.png', 'frame-%03d.jpg', 'shot*.png', 'shot[1].png']) {
      copyFileSync(at(name.endsWith('.jpg') ? 'picture.jpg' : 'picture.png'), at(name));
      const probe = await probeMedia(at(name));
      assert.equal(probe.video!.still, true, name);
    }
  });
});
