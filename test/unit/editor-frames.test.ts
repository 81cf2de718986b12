import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  deltaFrames,
  frameRate,
  framesToSeconds,
  moveClip,
  parseTime,
  secondsToFrames,
  tickStep,
  timecode,
  trimClip,
  ZOOMS,
  type SnapTarget,
} from '../../renderer/editor/frames';
import { frameRate as serviceRate, toUnits } from '../../service/timeline/snap';
import { propSeed, rng } from '../helpers/prng';

/**
 * The editor surface's frame arithmetic (renderer/editor/frames.ts): drags and
 * trims are computed in whole frames, so a clip dropped at another's edge
 * lands on the same frame at every zoom (renderer/README.md "Editor surface"), and the
 * seconds it sends are read by the service as exactly those frames.
 */

const R30 = frameRate(30);
const NTSC = frameRate(29.97);
const edge = (frame: number): SnapTarget => ({ frame, kind: 'edge' });

describe('rates and seconds', () => {
  test('the service\'s rates: whole, NTSC as n×1000/1001, decimals', () => {
    assert.deepEqual(frameRate(30), { num: 30, den: 1 });
    assert.deepEqual(frameRate(29.97), { num: 30000, den: 1001 });
    assert.deepEqual(frameRate(23.976), { num: 24000, den: 1001 });
    assert.deepEqual(frameRate(59.94), { num: 60000, den: 1001 });
    assert.deepEqual(frameRate(12.5), { num: 12500, den: 1000 });
  });

  const seed = propSeed();
  test(`frames → seconds → frames is the identity, and the service reads the seconds as the same frames (seed ${seed})`, () => {
    const rand = rng(seed).next;
    for (const fps of [24, 25, 30, 60, 29.97, 23.976, 59.94, 12.5]) {
      const rate = frameRate(fps);
      const service = serviceRate(fps);
      for (let i = 0; i < 300; i++) {
        const frames = Math.floor(rand() * 10_000_000);
        const seconds = framesToSeconds(frames, rate);
        assert.equal(secondsToFrames(seconds, rate), frames, `${fps} fps, ${frames}`);
        assert.equal(toUnits(seconds, service), frames, `the service reads ${seconds} s at ${fps} fps as ${frames} frames`);
      }
    }
  });
});

describe('timecode', () => {
  const table: [number, number, string][] = [
    [0, 30, '00:00:00:00'],
    [29, 30, '00:00:00:29'],
    [30, 30, '00:00:01:00'],
    [30 * 3600 + 30 * 62 + 12, 30, '01:01:02:12'],
    [25 * 60, 25, '00:01:00:00'],
    [30, 29.97, '00:00:01:00'], // non-drop-frame: 30 frames per timecode second
    [-5, 30, '-00:00:00:05'],
  ];
  for (const [frames, fps, text] of table) {
    test(`${frames} frames at ${fps} fps → ${text}`, () => assert.equal(timecode(frames, frameRate(fps)), text));
  }

  test('parseTime reads what timecode writes, and plain frame counts', () => {
    for (const frames of [0, 1, 29, 30, 1799, 108_000, 3_000_000]) assert.equal(parseTime(timecode(frames, R30), R30), frames);
    assert.equal(parseTime('48', R30), 48);
    assert.equal(parseTime(' 01:02:12 ', R30), (60 + 2) * 30 + 12);
    assert.equal(parseTime('02:12', R30), 2 * 30 + 12);
    assert.equal(parseTime('00:00:01;05', NTSC), 35);
  });

  test('parseTime refuses what is not a time', () => {
    for (const bad of ['', 'abc', '00:00:00:30', '00:60:00:00', '1.5s', '-3', '00:00:61:00', '1:2:3:4:5']) assert.equal(parseTime(bad, R30), null, bad);
  });
});

describe('moving a clip: the same frame at every zoom', () => {
  // A clip at 0 is dragged so that its end meets another clip; the clip is long enough and
  // the targets far enough apart that only the aimed edge is within 8 px even at the widest
  // zoom (1 px = 1000 frames).
  const NEXT = 1_000_000;
  const LONG = 20_000;
  const targets = [edge(100), edge(160), { frame: 0, kind: 'zero' as const }];

  test('dropped within a few pixels of the next clip, it abuts it exactly (gap 0) at every zoom', () => {
    for (const px of ZOOMS) {
      for (const offPx of [-3, -0.4, 0, 0.4, 3]) {
        const deltaPx = (NEXT - LONG) * px + offPx;
        const r = moveClip({ start: 0, length: LONG, deltaPx, pxPerFrame: px, targets: [edge(NEXT), edge(3 * NEXT)], thresholdPx: 8, snapping: true });
        assert.equal(r.frame + LONG, NEXT, `at ${px} px/frame, ${offPx} px off: the end lands on ${r.frame + LONG}`);
        assert.deepEqual(r.target, edge(NEXT));
      }
    }
  });

  test('without a target near, the result is the pointer\'s own whole frame, the same at every zoom', () => {
    for (const px of ZOOMS) {
      const r = moveClip({ start: 10, length: 5, deltaPx: 37 * px, pxPerFrame: px, targets: [], thresholdPx: 8, snapping: true });
      assert.equal(r.frame, 47);
      assert.ok(Number.isInteger(r.frame));
      assert.equal(r.target, null);
    }
  });

  const seed = propSeed();
  test(`any pointer offset gives a whole frame; snapping off keeps the pointer's frame (seed ${seed})`, () => {
    const rand = rng(seed).next;
    for (let i = 0; i < 2000; i++) {
      const px = ZOOMS[Math.floor(rand() * ZOOMS.length)]!;
      const deltaPx = (rand() - 0.3) * 2000;
      const on = moveClip({ start: 50, length: 20, deltaPx, pxPerFrame: px, targets, thresholdPx: 8, snapping: true });
      const off = moveClip({ start: 50, length: 20, deltaPx, pxPerFrame: px, targets, thresholdPx: 8, snapping: false });
      assert.ok(Number.isInteger(on.frame) && on.frame >= 0);
      assert.equal(off.frame, Math.max(0, 50 + deltaFrames(deltaPx, px)));
      assert.equal(off.target, null);
      // Snapped: an edge sits exactly on the target, within the threshold of where the pointer put it.
      if (on.target) {
        assert.ok(on.frame === on.target.frame || on.frame + 20 === on.target.frame);
        assert.ok(Math.abs(on.frame - off.frame) * px <= 8 + 1e-9);
      }
    }
  });

  test('the playhead one frame from a clip edge: dropping at the edge snaps to the edge', () => {
    const withPlayhead: SnapTarget[] = [edge(100), { frame: 101, kind: 'playhead' }];
    const r = moveClip({ start: 0, length: 40, deltaPx: 60 * 2 + 0.6, pxPerFrame: 2, targets: withPlayhead, thresholdPx: 8, snapping: true });
    assert.equal(r.frame + 40, 100);
    assert.equal(r.target?.kind, 'edge');
    // Equally near both: the clip edge wins the tie.
    const tie = moveClip({ start: 20, length: 10, deltaPx: 0, pxPerFrame: 1, targets: [{ frame: 32, kind: 'playhead' }, edge(28)], thresholdPx: 8, snapping: true });
    assert.deepEqual(tie, { frame: 18, target: edge(28) });
  });

  test('never before frame 0', () => {
    assert.equal(moveClip({ start: 5, length: 10, deltaPx: -1000, pxPerFrame: 1, targets: [], thresholdPx: 8, snapping: true }).frame, 0);
  });
});

describe('trimming either end', () => {
  const base = { start: 30, in: 15, length: 60, pxPerFrame: 4, targets: [edge(20), edge(100)], thresholdPx: 8, snapping: true };

  test('the start edge moves start and in together; the end stays', () => {
    const r = trimClip({ ...base, edge: 'start', deltaPx: 10 * 4 });
    assert.deepEqual(r, { start: 40, in: 25, length: 50, target: null });
  });

  test('the start edge stops at in 0 (the source\'s first frame) and at one frame from the end', () => {
    assert.deepEqual(trimClip({ ...base, snapping: false, edge: 'start', deltaPx: -1000 }), { start: 15, in: 0, length: 75, target: null });
    assert.deepEqual(trimClip({ ...base, edge: 'start', deltaPx: 1000 }), { start: 89, in: 74, length: 1, target: null });
  });

  test('a still keeps in 0 and its start may move earlier', () => {
    const r = trimClip({ ...base, in: 0, still: true, snapping: false, edge: 'start', deltaPx: -20 * 4 });
    assert.deepEqual(r, { start: 10, in: 0, length: 80, target: null });
  });

  test('the end edge changes the length only, at least one frame, and snaps to an edge at every zoom', () => {
    assert.deepEqual(trimClip({ ...base, edge: 'end', deltaPx: -1000 }), { start: 30, in: 15, length: 1, target: null });
    const far = 1_000_000;
    for (const px of ZOOMS) {
      for (const offPx of [-2, 0, 2]) {
        const r = trimClip({ ...base, targets: [edge(far), edge(3 * far)], pxPerFrame: px, edge: 'end', deltaPx: (far - 90) * px + offPx });
        assert.deepEqual(r, { start: 30, in: 15, length: far - 30, target: edge(far) }, `at ${px} px/frame, ${offPx} px off`);
      }
    }
  });
});

describe('ruler ticks', () => {
  test('labels at least 90 px apart, on whole frames or whole seconds', () => {
    for (const px of ZOOMS) {
      const step = tickStep(px, R30);
      assert.ok(Number.isInteger(step) && step >= 1);
      assert.ok(step * px >= 90 || step === 36000 * 30, `${px}: ${step}`);
      if (step >= 30) assert.equal(step % 30, 0);
    }
    assert.equal(tickStep(16, R30), 10);
    assert.equal(tickStep(100, R30), 1);
  });
});
