import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  decimalOf,
  frameRate,
  isSupportedFps,
  parseRate,
  rateLabel,
  rateText,
  sameRate,
  sampleRate,
  snap,
  toSeconds,
  toUnits,
  type Rate,
} from '../../service/timeline/snap';
import { propSeed, rng } from '../helpers/prng';

/**
 * Exact time arithmetic of sequences (docs/api.md "Snapping"): rates as
 * reduced fractions, seconds read as the decimal they were written as, one
 * round-half-up to whole units, and back.
 */

const r = (num: number | bigint, den: number | bigint = 1): Rate => ({ num: BigInt(num), den: BigInt(den) });
const NTSC30 = r(30000, 1001);
const NTSC24 = r(24000, 1001);
const NTSC60 = r(60000, 1001);

describe('frameRate: fps → reduced units per second', () => {
  const rows: [fps: number, num: bigint, den: bigint][] = [
    [30, 30n, 1n],
    [25, 25n, 1n],
    [24, 24n, 1n],
    [1, 1n, 1n],
    [240, 240n, 1n],
    [29.97, 30000n, 1001n],
    [23.976, 24000n, 1001n],
    [59.94, 60000n, 1001n],
    [119.88, 120000n, 1001n],
    [47.952, 48000n, 1001n],
    [29.97002997, 30000n, 1001n],
    [23.976023976, 24000n, 1001n],
    // The common shorthand: within 0.005 of an NTSC rate is that rate; further is a plain decimal.
    [23.98, 24000n, 1001n],
    [59.94, 60000n, 1001n],
    [23.99, 2399n, 100n],
    [29.98, 1499n, 50n],
    [12.5, 25n, 2n],
    [7.5, 15n, 2n],
    [0.5, 1n, 2n],
    [0.001, 1n, 1000n],
    [0.0004, 1n, 2500n],
  ];
  for (const [fps, num, den] of rows) {
    test(`${fps} → ${num}/${den}`, () => {
      assert.deepEqual(frameRate(fps), { num, den });
    });
  }
  for (const bad of [0, -1, -29.97, Number.NaN, Number.POSITIVE_INFINITY]) {
    test(`${bad} is a RangeError`, () => {
      assert.throws(() => frameRate(bad), RangeError);
    });
  }
  test('a rate is never zero, whatever positive fps is given', () => {
    for (const fps of [1e-4, 4e-4, 4.9e-4, 1e-9, 5e-324]) assert.ok(frameRate(fps).num > 0n, String(fps));
  });
});

describe('isSupportedFps', () => {
  const rows: [fps: number, ok: boolean][] = [
    [30, true],
    [1, true],
    [240, true],
    [29.97, true],
    [23.976, true],
    [59.94, true],
    [29.97002997, true],
    [12.5, true],
    [7.5, true],
    [0.123, true],
    [0.001, true],
    [0.1234, false],
    [12.3456, false],
    [0.0625, false],
    [12.125, true],
    [0.0004, false],
    [1e-9, false],
    [1 / 3, false],
    [0, false],
    [-30, false],
    [Number.NaN, false],
    [Number.POSITIVE_INFINITY, false],
  ];
  for (const [fps, ok] of rows) {
    test(`${fps} → ${ok}`, () => {
      assert.equal(isSupportedFps(fps), ok);
    });
  }
  test('every supported fps has a positive rate', () => {
    for (const [fps, ok] of rows) if (ok) assert.ok(frameRate(fps).num > 0n, String(fps));
  });
});

describe('decimalOf: the exact fraction a number is written as', () => {
  const rows: [value: number, num: bigint, den: bigint][] = [
    [0, 0n, 1n],
    [-0, 0n, 1n],
    [1, 1n, 1n],
    [123, 123n, 1n],
    [360000, 360000n, 1n],
    [0.1, 1n, 10n],
    [0.2, 1n, 5n],
    [1.25, 5n, 4n],
    [0.05005, 1001n, 20000n],
    [1e-7, 1n, 10_000_000n],
    [2.5e-7, 1n, 4_000_000n],
    [1.5e21, 1_500_000_000_000_000_000_000n, 1n],
    [1e21, 1_000_000_000_000_000_000_000n, 1n],
    [2 ** 53, 9007199254740992n, 1n],
    [0.3333333333333333, 3333333333333333n, 10_000_000_000_000_000n],
  ];
  for (const [value, num, den] of rows) {
    test(`${String(value)} → ${num}/${den}`, () => {
      assert.deepEqual(decimalOf(value), { num, den });
    });
  }
  for (const bad of [-1, -1e-7, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
    test(`${bad} is a RangeError`, () => {
      assert.throws(() => decimalOf(bad), RangeError);
    });
  }
});

describe('toUnits / toSeconds / snap tables', () => {
  // [seconds, rate, units, snapped seconds]
  const rows: [label: string, seconds: number, rate: Rate, units: number, snapped: number][] = [
    // 30 fps
    ['30 fps: 0', 0, r(30), 0, 0],
    ['30 fps: one frame', 1 / 30, r(30), 1, 1 / 30],
    ['30 fps: 1 s', 1, r(30), 30, 1],
    ['30 fps: 0.05 s is 1.5 frames, rounds up', 0.05, r(30), 2, 2 / 30],
    ['30 fps: 0.15 s is 4.5 frames, rounds up', 0.15, r(30), 5, 5 / 30],
    ['30 fps: 0.049 s rounds down', 0.049, r(30), 1, 1 / 30],
    ['30 fps: 1/60 as written is a hair under half a frame', 1 / 60, r(30), 0, 0],
    ['30 fps: 0.1 s is 3 frames exactly', 0.1, r(30), 3, 0.1],
    ['30 fps: 100 h', 360000, r(30), 10_800_000, 360000],
    // 25 fps
    ['25 fps: 0.02 s is half a frame, rounds up', 0.02, r(25), 1, 0.04],
    ['25 fps: 0.06 s is 1.5 frames, rounds up', 0.06, r(25), 2, 0.08],
    ['25 fps: 0.1 s is 2.5 frames, rounds up', 0.1, r(25), 3, 0.12],
    ['25 fps: 0.0199 s rounds down', 0.0199, r(25), 0, 0],
    ['25 fps: 1.23 s', 1.23, r(25), 31, 1.24],
    // 29.97 fps
    ['29.97: one frame is 1001/30000 s', 1001 / 30000, NTSC30, 1, 0.03336666666666667],
    ['29.97: 1.5 frames (0.05005 s) rounds up', 0.05005, NTSC30, 2, 2002 / 30000],
    ['29.97: 1 s is 29.97 frames', 1, NTSC30, 30, 1.001],
    ['29.97: 1001 s is 30000 frames exactly', 1001, NTSC30, 30000, 1001],
    ['29.97: 0.1 s', 0.1, NTSC30, 3, 0.1001],
    // 23.976 fps
    ['23.976: one frame is 1001/24000 s', 1001 / 24000, NTSC24, 1, 1001 / 24000],
    ['23.976: 1.5 frames (0.0625625 s) rounds up', 0.0625625, NTSC24, 2, 2002 / 24000],
    ['23.976: 3 frames', 0.125125, NTSC24, 3, 0.125125],
    ['23.976: 1 s', 1, NTSC24, 24, 1.001],
    // 59.94 fps
    ['59.94: 1 s', 1, NTSC60, 60, 1.001],
    // 12.5 fps
    ['12.5 fps: 0.04 s is half a frame, rounds up', 0.04, r(25, 2), 1, 0.08],
    // 48000 Hz
    ['48 kHz: one sample', 1 / 48000, r(48000), 1, 1 / 48000],
    ['48 kHz: 1.5 samples (1/32000 s) rounds up', 1 / 32000, r(48000), 2, 2 / 48000],
    ['48 kHz: 1/96000 as written (0.000010416666666666666) is a hair under half a sample', 1 / 96000, r(48000), 0, 0],
    ['48 kHz: 0.5 s', 0.5, r(48000), 24000, 0.5],
    ['48 kHz: 1001/30000 s (one NTSC frame) is 1601.6 samples', 1001 / 30000, r(48000), 1602, 1602 / 48000],
    ['48 kHz: 100 h', 360000, r(48000), 17_280_000_000, 360000],
    // 44100 Hz
    ['44.1 kHz: 0.005 s is 220.5 samples, rounds up', 0.005, r(44100), 221, 221 / 44100],
    ['44.1 kHz: 1 s', 1, r(44100), 44100, 1],
    ['44.1 kHz: 0.1 s', 0.1, r(44100), 4410, 0.1],
    ['44.1 kHz: one NTSC frame is 1471.47 samples', 1001 / 30000, r(44100), 1471, 1471 / 44100],
  ];
  for (const [label, seconds, rate, units, snapped] of rows) {
    test(label, () => {
      assert.equal(toUnits(seconds, rate), units, 'toUnits');
      assert.equal(toSeconds(units, rate), snapped, 'toSeconds');
      assert.equal(snap(seconds, rate), snapped, 'snap');
    });
  }

});

describe('properties (seeded; BACKLOT_PROP_SEED replays)', () => {
  const rates: [string, Rate][] = [
    ['30 fps', frameRate(30)],
    ['25 fps', frameRate(25)],
    ['29.97 fps', frameRate(29.97)],
    ['23.976 fps', frameRate(23.976)],
    ['59.94 fps', frameRate(59.94)],
    ['12.5 fps', frameRate(12.5)],
    ['240 fps', frameRate(240)],
    ['48000 Hz', sampleRate(48000)],
    ['44100 Hz', sampleRate(44100)],
    ['8000 Hz', sampleRate(8000)],
    ['192000 Hz', sampleRate(192000)],
  ];
  const seed = propSeed();
  const MAX_SECONDS = 360_000;

  /** A time as a client would write it: up to 100 h, with 0..9 decimals. */
  const someSeconds = (g: ReturnType<typeof rng>) => {
    const pick = g.int(4);
    if (pick === 0) return g.int(MAX_SECONDS + 1);
    if (pick === 1) return Number((g.next() * 10).toFixed(g.int(10)));
    return Math.min(MAX_SECONDS, Number((g.next() * MAX_SECONDS).toFixed(g.int(10))));
  };

  for (const [name, rate] of rates) {
    test(`${name}: toUnits(toSeconds(u)) === u up to 100 h of units (seed ${seed})`, () => {
      const g = rng(seed);
      const maxUnits = Number((BigInt(MAX_SECONDS) * rate.num) / rate.den);
      const edges = [0, 1, 2, maxUnits - 1, maxUnits];
      for (let i = 0; i < 3000; i++) {
        const u = i < edges.length ? edges[i]! : g.int(maxUnits + 1);
        assert.equal(toUnits(toSeconds(u, rate), rate), u, `u=${u}`);
      }
    });

    test(`${name}: snap is idempotent and moves a time by at most half a unit (seed ${seed})`, () => {
      const g = rng(seed ^ 0x5eed);
      for (let i = 0; i < 3000; i++) {
        const s = someSeconds(g);
        const once = snap(s, rate);
        assert.equal(snap(once, rate), once, `s=${s}`);
        // Exactly: |u/rate - s| <= 1/(2 rate)  ⇔  2 |u × rate.den × s.den - s.num × rate.num| <= rate.num × s.den
        const u = BigInt(toUnits(s, rate));
        const d = decimalOf(s);
        const diff = u * rate.den * d.den - d.num * rate.num;
        const abs = diff < 0n ? -diff : diff;
        assert.ok(2n * abs <= rate.num * d.den, `s=${s} moved by more than half a unit to ${u} units`);
        // Halves round up: when exactly half a unit away, the later unit is chosen.
        if (2n * abs === rate.num * d.den) assert.ok(diff > 0n, `s=${s}: a half rounded down`);
        // And the shown seconds are the double nearest the units: within a relative hair of the exact value.
        const exact = Number(u * rate.den) / Number(rate.num);
        assert.equal(once, exact);
      }
    });
  }

  test(`exact halves round up at every rate (seed ${seed})`, () => {
    const g = rng(seed ^ 0xa1f);
    for (const [name, rate] of rates) {
      // (2u + 1) / (2 rate) has a finite decimal when 2 × rate.num divides (2u + 1) × rate.den × 10^k: pick u with
      // 2u + 1 a multiple of the odd part of rate.num not shared with 10.
      let odd = rate.num;
      while (odd % 2n === 0n) odd /= 2n;
      while (odd % 5n === 0n) odd /= 5n;
      let checked = 0;
      for (let i = 0; i < 50; i++) {
        const k = BigInt(g.int(1000));
        const twiceUPlusOne = odd * (2n * k + 1n);
        const seconds = Number(twiceUPlusOne * rate.den) / Number(2n * rate.num);
        const d = decimalOf(seconds);
        // Only the cases where the double is the exact half (its shortest decimal is the exact fraction).
        if (d.num * 2n * rate.num !== twiceUPlusOne * rate.den * d.den) continue;
        assert.equal(toUnits(seconds, rate), Number((twiceUPlusOne + 1n) / 2n), `${name}: ${seconds} s`);
        checked += 1;
      }
      assert.ok(checked >= 25, `${name}: only ${checked} exact halves were checked`);
    }
  });
});

describe('parseRate', () => {
  const rows: [text: string | null | undefined, expected: Rate | null][] = [
    ['30000/1001', r(30000, 1001)],
    ['30/1', r(30)],
    ['60/2', r(30)],
    ['50/2', r(25)],
    ['25', r(25)],
    [' 25/1 ', r(25)],
    ['24000/1001', r(24000, 1001)],
    ['0/0', null],
    ['0/1', null],
    ['30/0', null],
    ['', null],
    [null, null],
    [undefined, null],
    ['abc', null],
    ['-30/1', null],
    ['30/-1', null],
    ['29.97', null],
    ['30/1/1', null],
  ];
  for (const [text, expected] of rows) {
    test(`${JSON.stringify(text)} → ${expected ? rateText(expected) : 'null'}`, () => {
      assert.deepEqual(parseRate(text), expected);
    });
  }
});

describe('sameRate, rateText, rateLabel, sampleRate', () => {
  test('sameRate compares values, reduced or not', () => {
    assert.equal(sameRate(r(30), r(60, 2)), true);
    assert.equal(sameRate(r(30000, 1001), frameRate(29.97)), true);
    assert.equal(sameRate(parseRate('30000/1001')!, frameRate(29.97)), true);
    assert.equal(sameRate(r(30), frameRate(29.97)), false);
    assert.equal(sameRate(r(2997, 100), frameRate(29.97)), false);
    assert.equal(sameRate(r(25), r(50)), false);
  });

  const labels: [Rate, string][] = [
    [r(30), '30'],
    [r(25), '25'],
    [r(60, 2), '30'],
    [r(30000, 1001), '29.97'],
    [r(24000, 1001), '23.976'],
    [r(60000, 1001), '59.94'],
    [r(25, 2), '12.5'],
    [r(1, 3), '0.333'],
  ];
  for (const [rate, label] of labels) {
    test(`rateLabel ${rateText(rate)} → ${label}`, () => {
      assert.equal(rateLabel(rate), label);
    });
  }

  test('rateText is ffmpeg’s num/den', () => {
    assert.equal(rateText(frameRate(29.97)), '30000/1001');
    assert.equal(rateText(frameRate(30)), '30/1');
  });

  test('sampleRate takes positive integers only', () => {
    assert.deepEqual(sampleRate(44100), r(44100));
    for (const bad of [0, -48000, 44100.5, Number.NaN]) assert.throws(() => sampleRate(bad), RangeError, String(bad));
  });
});
