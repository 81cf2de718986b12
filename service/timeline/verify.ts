import type { MediaProbe } from '../media/types';
import type { ExpectedOutput } from './render';
import { parseRate, rateLabel, sameRate, type Rate } from './snap';

/**
 * What an export's ffmpeg run tells, and whether its file is what was asked
 * for (the output becomes an asset only once it probes against the
 * target: docs/api.md "Export `POST /timeline/{id}:export`"). Pure.
 */

/**
 * An export's progress after one line of ffmpeg's `-progress` output, in
 * milliseconds of the output's timeline (its picture starts at 0), from the
 * progress shown so far: never less, never more than `totalMs`.
 *
 * The position is the picture ffmpeg has handed to the output: its `frame=N`
 * count (one video stream, at the target's rate on both paths: encoded with
 * `-r`, or copied from sources at that rate) times the frame's length, rounded
 * down. ffmpeg's `out_time_us` is not read: under `-copyts` (the copy path)
 * ffmpeg counts it from wherever the output was when it first reported (its
 * first time above zero), not from the output's start, so a fast copy's
 * out_time ends seconds short of the total. `progress=end` (the last line of a
 * finished run) is the total.
 */
export function progressAfter(shown: number, line: string, totalMs: number, fps: Rate): number {
  const total = Math.max(0, totalMs);
  const floor = Math.min(Math.max(0, shown), total);
  if (line === 'progress=end') return total;
  const m = /^frame=(\d{1,15})$/.exec(line);
  if (!m || fps.num <= 0n) return floor;
  // frames × den / num seconds, in whole milliseconds rounded down (exact, whatever the rate).
  const ms = (BigInt(m[1]!) * fps.den * 1000n) / fps.num;
  return ms >= BigInt(total) ? total : Math.max(floor, Number(ms));
}

/** Whether a line is part of ffmpeg's `-progress` blocks, `key=value` (kept out of the job's log; `speed= 27x` has a space). */
export function isProgressLine(line: string): boolean {
  return /^[a-z][a-z_0-9]*=/.test(line);
}

/**
 * Every way the probed output differs from what the plan asked for, as
 * sentences; empty when it matches. Lengths may differ by less than one
 * frame (a sound track's last AAC frame, a container's rounding).
 */
export function outputProblems(probe: MediaProbe, expect: ExpectedOutput): string[] {
  const problems: string[] = [];
  // One frame less the rounding of ffprobe's six decimals (and of doubles): a picture one
  // whole frame short must count as one frame off at every rate.
  const frame = Number(expect.fps.den) / Number(expect.fps.num) - 1e-5;
  const video = probe.video;
  if (!video) {
    problems.push('it has no video stream');
  } else {
    if (video.codec !== expect.videoCodec) problems.push(`its video codec is ${video.codec}, not ${expect.videoCodec}`);
    if (video.width !== expect.width || video.height !== expect.height) {
      problems.push(`its frame size is ${video.width}x${video.height}, not ${expect.width}x${expect.height}`);
    }
    const rate = parseRate(video.frame_rate);
    if (!rate || !sameRate(rate, expect.fps)) {
      problems.push(`its frame rate is ${rate ? rateLabel(rate) : 'unknown'} fps, not ${rateLabel(expect.fps)} fps`);
    }
    const length = video.duration_s;
    if (length === null || Math.abs(length - expect.videoSeconds) >= frame) {
      problems.push(`its picture lasts ${seconds(length)}, not ${seconds(expect.videoSeconds)}`);
    }
  }
  const audio = probe.audio;
  if (!audio) {
    problems.push('it has no sound stream');
  } else {
    if (audio.codec !== 'aac') problems.push(`its sound codec is ${audio.codec}, not aac`);
    if (audio.sample_rate !== expect.sampleRate) problems.push(`its sound is at ${audio.sample_rate} Hz, not ${expect.sampleRate} Hz`);
    if (audio.duration_s === null || Math.abs(audio.duration_s - expect.seconds) >= frame) {
      problems.push(`its sound lasts ${seconds(audio.duration_s)}, not ${seconds(expect.seconds)}`);
    }
  }
  if (probe.duration_s === null || Math.abs(probe.duration_s - expect.seconds) >= frame) {
    problems.push(`it lasts ${seconds(probe.duration_s)}, not ${seconds(expect.seconds)}`);
  }
  return problems;
}

function seconds(value: number | null): string {
  return value === null ? 'an unknown time' : `${Math.round(value * 1000) / 1000} s`;
}
