import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PROBE_FORMATS, PROBE_VERSION, ProbeError, normalizeProbe, parseProbeOutput, probeArgs } from '../../service/media';

/**
 * normalizeProbe over ffprobe 5.1 output captured from real files
 * (`-print_format json -show_format -show_streams -show_data_hash SHA256`),
 * trimmed to the members the mapping reads, plus variants for what other
 * versions and other files write.
 */

type Obj = Record<string, unknown>;

const H264_AAC_MP4 = {
  streams: [
    {
      index: 0, codec_name: 'h264', profile: 'High', codec_type: 'video', codec_tag_string: 'avc1',
      width: 320, height: 180, sample_aspect_ratio: '1:1', display_aspect_ratio: '16:9', pix_fmt: 'yuv420p',
      level: 12, field_order: 'progressive', r_frame_rate: '25/1', avg_frame_rate: '25/1', time_base: '1/12800',
      duration: '1.000000', nb_frames: '25',
      extradata_hash: 'SHA256:0014082b6dbaeba5ceae91656a62514b11d329e71ad43269265ed555ec464e09',
      disposition: { attached_pic: 0 },
    },
    {
      index: 1, codec_name: 'aac', profile: 'LC', codec_type: 'audio', codec_tag_string: 'mp4a', sample_rate: '48000',
      channels: 1, channel_layout: 'mono', r_frame_rate: '0/0', avg_frame_rate: '0/0', time_base: '1/48000',
      duration: '1.000000', nb_frames: '48',
      extradata_hash: 'SHA256:643b0e23faf2831be78dddd3de11c0f1b4aac4d4f762554c9bdaab7cc1e9e409',
      disposition: { attached_pic: 0 },
    },
  ],
  format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: '1.000000' },
};

/** An AAC track with cover art (mjpeg, attached_pic) as stream 1. */
const COVER_M4A = {
  streams: [
    {
      index: 0, codec_name: 'aac', codec_type: 'audio', sample_rate: '44100', channels: 1, channel_layout: 'mono',
      time_base: '1/44100', duration: '0.500000', disposition: { attached_pic: 0 },
    },
    {
      index: 1, codec_name: 'mjpeg', profile: 'Baseline', codec_type: 'video', codec_tag_string: '[0][0][0][0]',
      width: 64, height: 36, pix_fmt: 'yuvj444p', level: -99, r_frame_rate: '90000/1', avg_frame_rate: '0/0',
      time_base: '1/90000', duration: '0.500000', disposition: { attached_pic: 1 },
    },
  ],
  format: { format_name: 'mov,mp4,m4a,3gp,3g2,mj2', duration: '0.500000' },
};

const PNG = {
  streams: [
    {
      index: 0, codec_name: 'png', codec_type: 'video', codec_tag_string: '[0][0][0][0]', width: 64, height: 36,
      sample_aspect_ratio: '1:1', display_aspect_ratio: '16:9', pix_fmt: 'rgb24', level: -99, color_range: 'pc',
      r_frame_rate: '25/1', avg_frame_rate: '25/1', time_base: '1/25', disposition: { attached_pic: 0 },
    },
  ],
  format: { format_name: 'png_pipe' },
};

const WAV = {
  streams: [
    {
      index: 0, codec_name: 'pcm_s16le', codec_type: 'audio', codec_tag_string: '[1][0][0][0]', sample_rate: '22050',
      channels: 2, time_base: '1/22050', duration: '0.500000', disposition: { attached_pic: 0 },
    },
  ],
  format: { format_name: 'wav', duration: '0.500000' },
};

/** H264_AAC_MP4 with its video stream changed. */
function withVideo(change: Obj, format?: Obj): unknown {
  const [video, audio] = H264_AAC_MP4.streams;
  return { streams: [{ ...video, ...change }, audio], format: { ...H264_AAC_MP4.format, ...format } };
}

/** A lone video stream (image tests). */
function lone(stream: Obj, formatName: string): unknown {
  return { streams: [{ index: 0, codec_type: 'video', width: 64, height: 36, time_base: '1/25', ...stream }], format: { format_name: formatName } };
}

describe('normalizeProbe: a whole H.264 + AAC MP4', () => {
  test('every field', () => {
    assert.deepEqual(normalizeProbe(H264_AAC_MP4), {
      version: PROBE_VERSION,
      format: 'mov,mp4,m4a,3gp,3g2,mj2',
      duration_s: 1,
      video: {
        index: 0, codec: 'h264', codec_tag: 'avc1', profile: 'High', level: 12, width: 320, height: 180,
        sar: '1:1', dar: '16:9', field_order: 'progressive', pix_fmt: 'yuv420p', time_base: '1/12800',
        frame_rate: '25/1', avg_frame_rate: '25/1', color_range: null, color_space: null, color_transfer: null,
        color_primaries: null, extradata_hash: 'SHA256:0014082b6dbaeba5ceae91656a62514b11d329e71ad43269265ed555ec464e09',
        rotation: 0, duration_s: 1, nb_frames: 25, still: false,
      },
      audio: { index: 1, codec: 'aac', sample_rate: 48000, channels: 1, channel_layout: 'mono', duration_s: 1 },
    });
  });

  test('colour tags when present', () => {
    const v = normalizeProbe(
      withVideo({ color_range: 'tv', color_space: 'bt709', color_transfer: 'bt709', color_primaries: 'bt709' }),
    ).video!;
    assert.deepEqual([v.color_range, v.color_space, v.color_transfer, v.color_primaries], ['tv', 'bt709', 'bt709', 'bt709']);
  });
});

describe('normalizeProbe: rotation (clockwise degrees a player turns the picture)', () => {
  const rows: { name: string; change: Obj; expect: number }[] = [
    { name: 'none', change: {}, expect: 0 },
    { name: 'display matrix -90 (phone held upright)', change: { side_data_list: [{ side_data_type: 'Display Matrix', rotation: -90 }] }, expect: 90 },
    { name: 'display matrix 90', change: { side_data_list: [{ side_data_type: 'Display Matrix', rotation: 90 }] }, expect: 270 },
    { name: 'display matrix 180', change: { side_data_list: [{ side_data_type: 'Display Matrix', rotation: 180 }] }, expect: 180 },
    { name: 'display matrix -180', change: { side_data_list: [{ side_data_type: 'Display Matrix', rotation: -180 }] }, expect: 180 },
    { name: 'display matrix -270', change: { side_data_list: [{ side_data_type: 'Display Matrix', rotation: -270 }] }, expect: 270 },
    { name: 'display matrix 0', change: { side_data_list: [{ side_data_type: 'Display Matrix', rotation: 0 }] }, expect: 0 },
    { name: 'display matrix as a float string', change: { side_data_list: [{ side_data_type: 'Display Matrix', rotation: '-89.98' }] }, expect: 90 },
    { name: 'other side data only', change: { side_data_list: [{ side_data_type: 'Stereo 3D', type: '2D' }] }, expect: 0 },
    { name: 'rotate tag 90 (ffprobe 4)', change: { tags: { rotate: '90' } }, expect: 90 },
    { name: 'rotate tag 270', change: { tags: { rotate: '270' } }, expect: 270 },
    { name: 'rotate tag -90', change: { tags: { rotate: '-90' } }, expect: 270 },
    { name: 'rotate tag 450', change: { tags: { rotate: '450' } }, expect: 90 },
    { name: 'rotate tag that is not a number', change: { tags: { rotate: 'left' } }, expect: 0 },
    {
      name: 'both: the display matrix wins',
      change: { tags: { rotate: '180' }, side_data_list: [{ side_data_type: 'Display Matrix', rotation: -90 }] },
      expect: 90,
    },
  ];
  for (const row of rows) {
    test(row.name, () => assert.equal(normalizeProbe(withVideo(row.change)).video!.rotation, row.expect));
  }
});

describe('normalizeProbe: unknowns become null', () => {
  const rows: { name: string; change: Obj; field: string; expect: unknown }[] = [
    { name: 'level -99', change: { level: -99 }, field: 'level', expect: null },
    { name: 'level absent', change: { level: undefined }, field: 'level', expect: null },
    { name: 'level 40', change: { level: 40 }, field: 'level', expect: 40 },
    { name: 'sar 0:1', change: { sample_aspect_ratio: '0:1' }, field: 'sar', expect: null },
    { name: 'sar N/A', change: { sample_aspect_ratio: 'N/A' }, field: 'sar', expect: null },
    { name: 'sar absent', change: { sample_aspect_ratio: undefined }, field: 'sar', expect: null },
    { name: 'sar 4:3 kept', change: { sample_aspect_ratio: '4:3' }, field: 'sar', expect: '4:3' },
    { name: 'dar 0:1', change: { display_aspect_ratio: '0:1' }, field: 'dar', expect: null },
    { name: 'codec tag [0][0][0][0]', change: { codec_tag_string: '[0][0][0][0]' }, field: 'codec_tag', expect: null },
    { name: 'codec tag of an MPEG-TS stream kept', change: { codec_tag_string: '[27][0][0][0]' }, field: 'codec_tag', expect: '[27][0][0][0]' },
    { name: 'codec tag avc3', change: { codec_tag_string: 'avc3' }, field: 'codec_tag', expect: 'avc3' },
    { name: 'profile absent', change: { profile: undefined }, field: 'profile', expect: null },
    { name: 'profile unknown', change: { profile: 'unknown' }, field: 'profile', expect: null },
    { name: 'field order unknown', change: { field_order: 'unknown' }, field: 'field_order', expect: null },
    { name: 'field order tt', change: { field_order: 'tt' }, field: 'field_order', expect: 'tt' },
    { name: 'pix_fmt absent', change: { pix_fmt: undefined }, field: 'pix_fmt', expect: null },
    { name: 'colour range unknown', change: { color_range: 'unknown' }, field: 'color_range', expect: null },
    { name: 'no extradata', change: { extradata_hash: undefined }, field: 'extradata_hash', expect: null },
    { name: 'nb_frames from a string', change: { nb_frames: '250' }, field: 'nb_frames', expect: 250 },
    { name: 'nb_frames N/A', change: { nb_frames: 'N/A' }, field: 'nb_frames', expect: null },
    { name: 'nb_frames absent', change: { nb_frames: undefined }, field: 'nb_frames', expect: null },
    { name: 'width given as a string', change: { width: '640' }, field: 'width', expect: 640 },
    { name: 'frame rate reduced (one-frame GIF)', change: { r_frame_rate: '100/10' }, field: 'frame_rate', expect: '10/1' },
    { name: 'frame rate 30000/1001 kept', change: { r_frame_rate: '30000/1001' }, field: 'frame_rate', expect: '30000/1001' },
    { name: 'avg frame rate 0/0 kept', change: { avg_frame_rate: '0/0' }, field: 'avg_frame_rate', expect: '0/0' },
    { name: 'avg frame rate absent', change: { avg_frame_rate: undefined }, field: 'avg_frame_rate', expect: '0/0' },
    { name: 'avg frame rate reduced', change: { avg_frame_rate: '50/2' }, field: 'avg_frame_rate', expect: '25/1' },
    { name: 'codec absent', change: { codec_name: undefined }, field: 'codec', expect: 'unknown' },
    { name: 'duration from the stream', change: { duration: '0.960000' }, field: 'duration_s', expect: 0.96 },
    { name: 'duration from the container when the stream has none', change: { duration: undefined }, field: 'duration_s', expect: 1 },
    { name: 'duration N/A falls back to the container', change: { duration: 'N/A' }, field: 'duration_s', expect: 1 },
  ];
  for (const row of rows) {
    test(row.name, () => assert.equal((normalizeProbe(withVideo(row.change)).video as unknown as Obj)[row.field], row.expect));
  }

  test('no duration anywhere is null', () => {
    const probe = normalizeProbe(withVideo({ duration: undefined }, { duration: undefined }));
    assert.equal(probe.duration_s, null);
    assert.equal(probe.video!.duration_s, null);
  });

  test('audio: numbers from strings, a missing channel layout is null, container duration as fallback', () => {
    assert.deepEqual(normalizeProbe(WAV).audio, {
      index: 0, codec: 'pcm_s16le', sample_rate: 22050, channels: 2, channel_layout: null, duration_s: 0.5,
    });
    const noDuration = { ...WAV, streams: [{ ...WAV.streams[0], duration: undefined }] };
    assert.equal(normalizeProbe(noDuration).audio!.duration_s, 0.5);
  });
});

describe('normalizeProbe: which streams', () => {
  test('cover art (attached_pic) is not the video stream', () => {
    const probe = normalizeProbe(COVER_M4A);
    assert.equal(probe.video, null);
    assert.equal(probe.audio!.index, 0);
  });

  test('the first video stream that is not cover art', () => {
    const picture = { ...COVER_M4A.streams[1], index: 0 };
    const [video, audio] = H264_AAC_MP4.streams;
    const probe = normalizeProbe({ streams: [picture, { ...video, index: 1 }, { ...audio, index: 2 }, { ...video, index: 3 }], format: H264_AAC_MP4.format });
    assert.equal(probe.video!.index, 1);
    assert.equal(probe.audio!.index, 2);
  });

  test('audio only: video is null', () => {
    assert.equal(normalizeProbe(WAV).video, null);
  });

  test('neither video nor audio is not an error', () => {
    const probe = normalizeProbe({ streams: [{ index: 0, codec_type: 'subtitle', codec_name: 'subrip' }], format: { format_name: 'srt' } });
    assert.deepEqual(probe, { version: PROBE_VERSION, format: 'srt', duration_s: null, video: null, audio: null });
    assert.equal(normalizeProbe({ format: { format_name: 'tty' } }).video, null);
  });
});

describe('normalizeProbe: still pictures', () => {
  const rows: { name: string; json: unknown; expect: boolean }[] = [
    { name: 'png (png_pipe)', json: PNG, expect: true },
    { name: 'jpeg (jpeg_pipe)', json: lone({ codec_name: 'mjpeg' }, 'jpeg_pipe'), expect: true },
    { name: 'jpeg read by image2 (a name image2 chose by extension)', json: lone({ codec_name: 'mjpeg', duration: '0.040000' }, 'image2'), expect: true },
    { name: 'webp (webp_pipe)', json: lone({ codec_name: 'webp' }, 'webp_pipe'), expect: true },
    { name: 'bmp (bmp_pipe)', json: lone({ codec_name: 'bmp' }, 'bmp_pipe'), expect: true },
    { name: 'tiff (tiff_pipe)', json: lone({ codec_name: 'tiff' }, 'tiff_pipe'), expect: true },
    { name: 'gif with one frame', json: lone({ codec_name: 'gif', nb_frames: '1', duration: '0.100000' }, 'gif'), expect: true },
    { name: 'animated gif (5 frames)', json: lone({ codec_name: 'gif', nb_frames: '5', duration: '1.000000' }, 'gif'), expect: false },
    { name: 'gif with an unknown frame count', json: lone({ codec_name: 'gif' }, 'gif'), expect: false },
    { name: 'mjpeg movie in AVI (5 frames)', json: lone({ codec_name: 'mjpeg', nb_frames: '5' }, 'avi'), expect: false },
    { name: 'mjpeg with one frame in MOV', json: lone({ codec_name: 'mjpeg', nb_frames: '1' }, 'mov,mp4,m4a,3gp,3g2,mj2'), expect: true },
    { name: 'png animation in MOV', json: lone({ codec_name: 'png', nb_frames: '10' }, 'mov,mp4,m4a,3gp,3g2,mj2'), expect: false },
    { name: 'apng (animated)', json: lone({ codec_name: 'apng' }, 'apng'), expect: false },
    { name: 'h264 with one frame is footage', json: lone({ codec_name: 'h264', nb_frames: '1' }, 'mov,mp4,m4a,3gp,3g2,mj2'), expect: false },
    { name: 'h264 video', json: H264_AAC_MP4, expect: false },
    { name: 'marked still_image by the demuxer', json: lone({ codec_name: 'hevc', disposition: { still_image: 1 } }, 'mov,mp4,m4a,3gp,3g2,mj2'), expect: true },
  ];
  for (const row of rows) {
    test(row.name, () => assert.equal(normalizeProbe(row.json).video!.still, row.expect));
  }
});

describe('normalizeProbe: output that is not ffprobe JSON is a ProbeError', () => {
  const bad: { name: string; json: unknown }[] = [
    { name: 'null', json: null },
    { name: 'an array', json: [] },
    { name: 'a string', json: '{}' },
    { name: 'no format', json: { streams: [] } },
    { name: 'format not an object', json: { format: 'mp4', streams: [] } },
    { name: 'streams not a list', json: { format: {}, streams: {} } },
    { name: 'a stream that is not an object', json: { format: {}, streams: [1] } },
  ];
  for (const row of bad) {
    test(row.name, () => assert.throws(() => normalizeProbe(row.json), ProbeError));
  }

  test('parseProbeOutput: bad JSON text', () => {
    assert.throws(() => parseProbeOutput('{"format": '), (err: unknown) => err instanceof ProbeError && /JSON/.test(err.message));
    assert.throws(() => parseProbeOutput(''), ProbeError);
    assert.equal(parseProbeOutput(JSON.stringify(PNG)).video!.still, true);
  });
});

describe('probeArgs', () => {
  test('the file is file: + its absolute path, last, after -pattern_type none and the demuxers and protocol it may use', () => {
    const args = probeArgs('-i.mp4');
    assert.equal(args.at(-1), `file:${process.cwd()}/-i.mp4`);
    assert.deepEqual(args.slice(0, -1), [
      '-v', 'error', '-hide_banner', '-protocol_whitelist', 'file', '-format_whitelist', PROBE_FORMATS.join(','), '-pattern_type', 'none', '-print_format', 'json',
      '-show_format', '-show_streams', '-show_data_hash', 'SHA256',
    ]);
  });

  test('no demuxer that opens other files by what a file says', () => {
    for (const name of ['hls', 'dash', 'concat', 'image2pipe', 'webm_dash_manifest', 'lavfi', 'tee']) assert.ok(!(PROBE_FORMATS as readonly string[]).includes(name), name);
  });
});
