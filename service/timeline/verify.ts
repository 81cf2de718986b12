import type { MediaProbe } from '../media/types';
import type { ExpectedOutput } from './render';
import { parseRate, rateLabel, sameRate } from './snap';

/**
 * What an export's ffmpeg run tells, and whether its file is what was asked
 * for (interface §Export job: the output becomes an asset only once it
 * "probes against the target"). Pure.
 */

/**
 * One line of ffmpeg's `-progress` output → milliseconds rendered, or null
 * for lines that carry none. `out_time_us` is the position in the output
 * (ffmpeg also writes `out_time_ms`, which despite its name is microseconds
 * too); `progress=end` is the last line of a finished run.
 */
export function progressMs(line: string, totalMs: number): number | null {
  if (line === 'progress=end') return totalMs;
  const m = /^out_time_us=(-?\d+)$/.exec(line);
  if (!m) return null;
  const ms = Math.floor(Number(m[1]) / 1000);
  if (!Number.isFinite(ms) || ms < 0) return 0;
  return Math.min(ms, totalMs);
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
