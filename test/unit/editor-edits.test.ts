import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  clampGroupShift,
  clampMove,
  nearestFit,
  overlaps,
  rebaseTracks,
  removeSpans,
  rippleInsert,
  roomAround,
  shuttle,
  splitSpan,
  trimClip,
  type Span,
} from '../../renderer/editor/frames';

/**
 * The editor page's edits of whole tracks, in frames (renderer/editor/frames.ts):
 * moves stop at a neighbour's edge (never an overlap the service would refuse),
 * insert ripples, split, ripple delete and lift, the nearest fit on another
 * track, group moves, and the J/K/L shuttle. Tables of input → expected output.
 */

const c = (start: number, length: number, inF = 0): Span => ({ start, in: inF, length });
/** A track: [0,50) [50,100) gap [150,200). */
const TRACK = [c(0, 50), c(50, 50, 10), c(150, 50)];

describe('room and moves that stop at a neighbour', () => {
  test('the room around each clip', () => {
    assert.deepEqual(roomAround(TRACK, 0), { min: 0, max: 50 });
    assert.deepEqual(roomAround(TRACK, 1), { min: 50, max: 150 });
    assert.deepEqual(roomAround(TRACK, 2), { min: 100, max: Infinity });
  });

  const rows: [string, number, number, number][] = [
    ['into the next clip: stops at its start', 1, 120, 100],
    ['into the previous clip: stops at its end', 1, 20, 50],
    ['within the gap: where asked', 1, 80, 80],
    ['before frame 0: at 0', 0, -30, 0],
    ['between two abutting clips: cannot move at all', 0, 10, 0],
    ['the last clip: any later frame', 2, 5000, 5000],
    ['the last clip into the one before: stops at its end', 2, 60, 100],
  ];
  for (const [name, index, wanted, expected] of rows) {
    test(name, () => {
      const at = clampMove(TRACK, index, wanted);
      assert.equal(at, expected);
      const moved = TRACK.map((x, i) => (i === index ? { ...x, start: at } : x));
      assert.equal(overlaps(moved), false);
    });
  }

  test('a trim stops at the neighbours\' edges too', () => {
    const base = { in: 10, pxPerFrame: 1, targets: [], thresholdPx: 0, snapping: false };
    assert.equal(trimClip({ ...base, start: 50, length: 50, edge: 'end', deltaPx: 500, bounds: roomAround(TRACK, 1) }).length, 100);
    assert.equal(trimClip({ ...base, start: 50, length: 50, edge: 'start', deltaPx: -500, bounds: roomAround(TRACK, 1) }).start, 50);
    assert.equal(trimClip({ ...base, start: 150, in: 100, length: 50, edge: 'start', deltaPx: -500, bounds: roomAround(TRACK, 2) }).start, 100);
  });
});

describe('group moves', () => {
  const tracks = { V1: TRACK, V2: [c(0, 30), c(120, 30)] };
  const rows: [string, string[], number, number][] = [
    ['two clips of one track move as one, stopped by the clip outside', ['V1:1'], 70, 50],
    ['abutting selected clips move together; frame 0 stops them', ['V1:0', 'V1:1'], -10, 0],
    ['the tightest room of any track wins', ['V1:1', 'V2:0'], 100, 50],
    ['the group moves back until the first hits its neighbour', ['V1:2', 'V2:1'], -100, -50],
    ['nothing selected: no move', [], 40, 0],
  ];
  for (const [name, keys, wanted, expected] of rows) {
    test(name, () => assert.equal(clampGroupShift(tracks, new Set(keys), wanted), expected));
  }
});

describe('another track: the nearest place a clip fits', () => {
  const rows: [string, number, number, number][] = [
    ['a free spot: where asked', 110, 30, 110],
    ['overlapping the gap\'s end: pulled back into it', 130, 30, 120],
    ['too long for the gap: after the last clip, or before the first when nearer', 60, 60, 200],
    ['inside the first clip: the nearest gap edge', 10, 20, 100],
  ];
  for (const [name, wanted, length, expected] of rows) {
    test(name, () => assert.equal(nearestFit(TRACK, wanted, length), expected));
  }
  test('an empty track: where asked, never before 0', () => {
    assert.equal(nearestFit([], 42, 10), 42);
    assert.equal(nearestFit([], -5, 10), 0);
  });
});

describe('insert and ripple', () => {
  test('at a cut: the clips from there on move later by the length', () => {
    const r = rippleInsert(TRACK, 50, 25);
    assert.equal(r.at, 50);
    assert.deepEqual(r.clips.map((x) => x.start), [0, 75, 175]);
  });
  test('inside a clip: at its nearer edge', () => {
    assert.equal(rippleInsert(TRACK, 60, 10).at, 50);
    assert.equal(rippleInsert(TRACK, 90, 10).at, 100);
    assert.deepEqual(rippleInsert(TRACK, 90, 10).clips.map((x) => x.start), [0, 50, 160]);
  });
  test('in a gap: nothing before it moves', () => {
    assert.deepEqual(rippleInsert(TRACK, 120, 10).clips.map((x) => x.start), [0, 50, 160]);
  });
});

describe('split', () => {
  test('at a frame inside: two clips, the second\'s in moved on', () => {
    assert.deepEqual(splitSpan(c(50, 50, 10), 70), [c(50, 20, 10), c(70, 30, 30)]);
  });
  test('a still keeps in', () => {
    assert.deepEqual(splitSpan(c(0, 50), 10, true), [c(0, 10), c(10, 40)]);
  });
  test('at either edge or outside: nothing', () => {
    for (const at of [50, 100, 20, 130]) assert.equal(splitSpan(c(50, 50, 10), at), null);
  });
});

describe('ripple delete and lift', () => {
  test('lift leaves the others where they were', () => {
    assert.deepEqual(removeSpans(TRACK, new Set([1]), false).map((x) => x.start), [0, 150]);
  });
  test('ripple closes the room it leaves, and keeps the gaps', () => {
    assert.deepEqual(removeSpans(TRACK, new Set([1]), true).map((x) => x.start), [0, 100]);
    assert.deepEqual(removeSpans(TRACK, new Set([0]), true).map((x) => x.start), [0, 100]);
    assert.deepEqual(removeSpans(TRACK, new Set([0, 2]), true).map((x) => x.start), [0]);
  });
  test('never an overlap', () => {
    for (const set of [[0], [1], [2], [0, 1], [1, 2], [0, 2]]) assert.equal(overlaps(removeSpans(TRACK, new Set(set), true)), false);
  });
});

describe('the J/K/L shuttle', () => {
  const rows: [number, 'j' | 'k' | 'l', number][] = [
    [0, 'l', 1], [1, 'l', 2], [2, 'l', 4], [4, 'l', 8], [8, 'l', 8],
    [0, 'j', -1], [-1, 'j', -2], [-8, 'j', -8],
    [4, 'j', 2], [1, 'j', 0], [-2, 'l', -1], [-1, 'l', 0],
    [8, 'k', 0], [-2, 'k', 0],
  ];
  for (const [from, key, to] of rows) test(`${from}× then ${key.toUpperCase()}: ${to}×`, () => assert.equal(shuttle(from, key), to));
});

describe('undo and redo on top of a change made elsewhere (rebase)', () => {
  const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  test('nothing changed elsewhere: the edit is undone exactly', () => {
    assert.deepEqual(rebaseTracks({ V1: [2] }, { V1: [2] }, { V1: [1] }, same), { tracks: { V1: [1] }, conflict: null });
  });
  test('another track changed elsewhere: undone on top of it, their change kept', () => {
    assert.deepEqual(rebaseTracks({ V1: [2], A1: [9] }, { V1: [2] }, { V1: [1] }, same), { tracks: { V1: [1], A1: [9] }, conflict: null });
  });
  test('the same track changed elsewhere: refused, naming the track', () => {
    assert.deepEqual(rebaseTracks({ V1: [3] }, { V1: [2] }, { V1: [1] }, same), { tracks: null, conflict: 'V1' });
  });
  test('already as the edit wants: nothing to do; an emptied track goes', () => {
    assert.deepEqual(rebaseTracks({ V1: [1] }, { V1: [2] }, { V1: [1] }, same), { tracks: { V1: [1] }, conflict: null });
    assert.deepEqual(rebaseTracks({ V1: [1], V2: [5] }, { V1: [1], V2: [5] }, { V1: [1, 5] }, same), { tracks: { V1: [1, 5] }, conflict: null });
  });
});
