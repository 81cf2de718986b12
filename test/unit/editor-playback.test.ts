import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { frameRate } from '../../renderer/editor/frames';
import { frameAfter, segmentAt, segments, soundTracks, sourceTime, videoOrder } from '../../renderer/editor/playback';
import { laneItems, visibleFrames, waveformCrop } from '../../renderer/editor/visible';

/**
 * The editor's pure playback and drawing rules (renderer/editor/playback.ts,
 * visible.ts): what plays at each frame (the top video track wins, gaps are
 * black, sound tracks on their own), the player's clock, which clips the
 * timeline draws for a scroll position, and the waveform's crop.
 */

const r25 = frameRate(25);
const clip = (asset_id: string, start: number, duration: number, inS = 0) => ({ asset_id, start, in: inS, duration });
const brief = (list: ReturnType<typeof segments>) => list.map((s) => [s.from, s.to, s.clip ? `${s.clip.track}:${s.clip.index}@${s.clip.at}` : 'gap']);

describe('playback: what plays when', () => {
  const tracks = {
    V1: [clip('a', 0, 2), clip('b', 2, 2, 1)],
    V2: [clip('t', 1, 0.4)],
    A1: [clip('s', 0, 5)],
    A2: [clip('m', 3, 1)],
  };

  test('video tracks top first, sound tracks in order, other names ignored', () => {
    assert.deepEqual(videoOrder({ ...tracks, V10: [], X1: [] } as never), ['V2', 'V1']);
    assert.deepEqual(soundTracks(tracks), ['A1', 'A2']);
  });

  test('the picture: V2 covers V1 where it has a clip; the clip below resumes at its own offset; past the clips is a gap', () => {
    assert.deepEqual(brief(segments(tracks, r25, 'picture', 0, 125)), [
      [0, 25, 'V1:0@0'],
      [25, 35, 'V2:0@0'],
      [35, 50, 'V1:0@1.4'],
      [50, 100, 'V1:1@1'],
      [100, 125, 'gap'],
    ]);
  });

  test('from the middle of a clip and to an out point: the first segment starts at the playhead, the source offset follows', () => {
    assert.deepEqual(brief(segments(tracks, r25, 'picture', 60, 80)), [[60, 80, 'V1:1@1.4']]);
    assert.deepEqual(segments(tracks, r25, 'picture', 80, 80), []);
  });

  test('a sound track: its clips and the gaps between them', () => {
    assert.deepEqual(brief(segments(tracks, r25, 'A2', 0, 125)), [[0, 75, 'gap'], [75, 100, 'A2:0@0'], [100, 125, 'gap']]);
    assert.deepEqual(brief(segments(tracks, r25, 'A1', 0, 125)), [[0, 125, 'A1:0@0']]);
  });

  test('adjacent clips of one asset stay two segments (a cut); a clip across a covered stretch is one on each side', () => {
    const same = { V1: [clip('a', 0, 1), clip('a', 1, 1, 1)] };
    assert.deepEqual(brief(segments(same, r25, 'picture', 0, 50)), [[0, 25, 'V1:0@0'], [25, 50, 'V1:1@1']]);
  });

  test('segmentAt finds the segment of a frame (binary search), null past the end; sourceTime is the offset there', () => {
    const list = segments(tracks, r25, 'picture', 0, 125);
    assert.equal(segmentAt(list, 0)!.from, 0);
    assert.equal(segmentAt(list, 49)!.from, 35);
    assert.equal(segmentAt(list, 50)!.clip!.index, 1);
    assert.equal(segmentAt(list, 124)!.clip, null);
    assert.equal(segmentAt(list, 125), null);
    assert.equal(segmentAt([], 0), null);
    assert.equal(sourceTime(segmentAt(list, 60)!, 60, r25), 1.4);
    assert.equal(sourceTime(segmentAt(list, 110)!, 110, r25), null);
  });

  test('the clock: whole frames since the start, at NTSC rates too', () => {
    assert.equal(frameAfter(10, 0, r25), 10);
    assert.equal(frameAfter(10, 39.9, r25), 10);
    assert.equal(frameAfter(10, 40, r25), 11);
    assert.equal(frameAfter(0, 1000, frameRate(29.97)), 29);
    assert.equal(frameAfter(0, 1001, frameRate(29.97)), 30);
    assert.equal(frameAfter(5, -20, r25), 5);
  });
});

describe('visible: what the timeline draws', () => {
  test('the frames in view and half a screen either side (or the margin asked for), past the track names, clamped at 0', () => {
    assert.deepEqual(visibleFrames(0, 1056, 56, 1), { from: 0, to: 1500 });
    assert.deepEqual(visibleFrames(5000, 1056, 56, 2), { from: 2250, to: 3250 });
    assert.deepEqual(visibleFrames(5000, 1056, 56, 2, 1), { from: 2000, to: 3500 });
    assert.deepEqual(visibleFrames(5000, 1056, 56, 0.5, 0), { from: 10000, to: 12000 });
  });

  const many = Array.from({ length: 1000 }, (_, i) => ({ start: i * 50, length: 50 }));

  test('wide clips: only those overlapping the range, in order', () => {
    const items = laneItems(many, { from: 1000, to: 1200 }, 1);
    assert.deepEqual(items, [{ kind: 'clip', index: 20 }, { kind: 'clip', index: 21 }, { kind: 'clip', index: 22 }, { kind: 'clip', index: 23 }]);
    assert.deepEqual(laneItems(many, { from: 60000, to: 70000 }, 1), []);
  });

  test('clips narrower than the minimum: one summary per run; a gap wider than the minimum starts another', () => {
    assert.deepEqual(laneItems(many, { from: 0, to: 50000 }, 0.01, new Set(), 2), [{ kind: 'summary', start: 0, end: 50000, count: 1000, first: 0 }]);
    const gappy = [{ start: 0, length: 10 }, { start: 10, length: 10 }, { start: 1000, length: 10 }, { start: 2000, length: 5000 }];
    assert.deepEqual(laneItems(gappy, { from: 0, to: 10000 }, 0.01, new Set(), 2), [
      { kind: 'summary', start: 0, end: 20, count: 2, first: 0 },
      { kind: 'summary', start: 1000, end: 1010, count: 1, first: 2 },
      { kind: 'clip', index: 3 },
    ]);
  });

  test('kept clips (focused, selected, dragged) are drawn wherever they are, as clips', () => {
    const items = laneItems(many, { from: 1000, to: 1100 }, 1, new Set([3, 21, 900]));
    assert.deepEqual(items, [{ kind: 'clip', index: 3 }, { kind: 'clip', index: 20 }, { kind: 'clip', index: 21 }, { kind: 'clip', index: 900 }]);
  });

  test('the waveform crop: the whole source across the clip\'s in..out, as percentages', () => {
    assert.deepEqual(waveformCrop(0, 5, 5), { size: '100% 100%', position: '0% 0' });
    // 10 s source, clip 2..4 s: the picture is 5 clip-widths, shifted one clip-width left.
    assert.deepEqual(waveformCrop(2, 2, 10), { size: '500% 100%', position: '25% 0' });
    // The last second of a 4 s source.
    assert.deepEqual(waveformCrop(3, 1, 4), { size: '400% 100%', position: '100% 0' });
    assert.equal(waveformCrop(0, 0, 4), null);
    assert.equal(waveformCrop(0, 1, 0), null);
  });
});
