import { execFileSync } from 'node:child_process';
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { toolPath } from '../service/media';
import { ENCODE } from '../service/timeline/render';
import { cpuSeconds, startServer, type ChildServer } from './harness';
import { backlot, BACKLOT, httpClient, ROOT, table, type Client } from './common';
import {
  catInto,
  childCpuSeconds,
  concatList,
  endChildren,
  ensureClips,
  handConformArgs,
  handCopyArgs,
  hashThenSync,
  outputProblem,
  probeOutput,
  readEvents,
  removeFile,
  runFfmpeg,
  secs,
  type SseStream,
} from './export-media';

/**
 * Export (see bench/README.md): a sequence of ten 30 s 1080p30 clips with
 * sound, exported by the service on the copy path (preset auto) and the
 * conform path (preset h264), each timed from the POST to the job's
 * `succeeded` event, against the equivalent hand-written ffmpeg commands run
 * in the same bench on the same files, and `cat` of the same bytes as the
 * disk's floor. The service's own time beyond ffmpeg is read from the job's
 * log timestamps.
 */

const CLIPS = Number(process.env.BACKLOT_BENCH_CLIPS ?? 10);
const CLIP_SECONDS = Number(process.env.BACKLOT_BENCH_CLIP_SECONDS ?? 30);
const REPEAT = Number(process.env.BACKLOT_BENCH_REPEAT ?? 1);
/** Copy runs take seconds: rounds of (service, hand-written, cat), the order rotating each round. */
const COPY_ROUNDS = 5;
const TARGET = { width: 1920, height: 1080, fps: 30, sampleRate: 48000 };
const TARGETS = { copy: 1.15, conform: 1.1, speedup: 5 };
/**
 * How far an output's length may be from the sequence's. The service cuts each clip's sound to its
 * exact sample count; the natural hand-written concat keeps each clip's last AAC frame whole, so
 * ten clips run about 0.16 s long (reported in the table, not a failure).
 */
const SERVICE_SLACK_S = 0.05;
const HAND_SLACK_S = 1;

interface Run {
  ms: number;
  /** The output's length (ffprobe's format duration), seconds. */
  duration: number;
  /** CPU seconds of the ffmpeg (and ffprobe) children. */
  childCpu: number;
}
interface ServiceRun extends Run {
  phases: Phases;
  /** The service's own CPU (the Node process, children apart). */
  serverCpu: number;
  bytes: number;
}
interface HandRun extends Run {
  bytes: number;
  /** The service's durability step, timed on this output after the run (not in `ms`). */
  hashMs: number;
  syncMs: number;
}
type Phases = Record<(typeof PHASES)[number][0], number>;
const PHASES = [
  ['request', 'POST to job row (request, cached probes, plan)'],
  ['start', 'job row to ffmpeg started (graph and list written)'],
  ['ffmpeg', 'ffmpeg (first log line to its final stats line)'],
  ['probe', 'ffprobe of the output and the check'],
  ['durable', 'sha256 + fsync of the output, rename and rows'],
  ['finish', 'job marked succeeded'],
  ['event', 'the job event reaching the client'],
] as const;

export async function runExportBench(): Promise<void> {
  for (const [name, v] of [['CLIPS', CLIPS], ['CLIP_SECONDS', CLIP_SECONDS], ['REPEAT', REPEAT]] as const) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`BACKLOT_BENCH_${name} must be a whole number >= 1.`);
  }
  const ffmpeg = toolPath('ffmpeg');
  const ffprobe = toolPath('ffprobe');
  if (!ffmpeg || !ffprobe) throw new Error('ffmpeg and ffprobe are needed (on PATH, or BACKLOT_FFMPEG / BACKLOT_FFPROBE).');
  // The service (a child, inheriting this environment) runs the very binaries the hand-written commands run.
  process.env.BACKLOT_FFMPEG = ffmpeg;
  process.env.BACKLOT_FFPROBE = ffprobe;
  const seconds = CLIPS * CLIP_SECONDS;
  // Ctrl-C: the ffmpeg children run in their own sessions, so end them; their runs then fail and cleanup follows.
  process.once('SIGINT', endChildren).once('SIGTERM', endChildren);
  const files = await ensureClips(ffmpeg, ROOT, { count: CLIPS, seconds: CLIP_SECONDS, ...TARGET });
  const inputBytes = files.reduce((sum, f) => sum + statSync(f).size, 0);

  const dataDir = mkdtempSync(join(tmpdir(), 'backlot-bench-'));
  const work = mkdtempSync(join(tmpdir(), 'backlot-bench-export-'));
  let service: ChildServer | undefined;
  let events: SseStream | undefined;
  try {
    backlot('studio', 'add', 'bench', '--data-dir', dataDir);
    const token = backlot('token', 'create', '--studio', 'bench', '--caps', 'assets,timeline,jobs', '--data-dir', dataDir).trim();
    service = await startServer('backlot serve', [BACKLOT, 'serve', '--port', '0', '--data-dir', dataDir]);
    const svc = service;
    const api = httpClient(svc.url, token, new Agent({ keepAlive: true, maxSockets: 4 }));

    const timelineId = await makeSequence(api, dataDir, files);
    // Plan twice: the first probes every clip (cold), the second reads the probe cache, as every export below does.
    const cold = await timed(() => ok(api('GET', `/timeline/${timelineId}:plan?preset=auto`), 200));
    const plan = JSON.parse(cold.value) as { path: string; clips: { reason: string | null }[] };
    if (plan.path !== 'copy') throw new Error(`the plan is ${plan.path}, not copy: ${plan.clips.map((c) => c.reason).join(' | ')}`);
    const warm = await timed(() => ok(api('GET', `/timeline/${timelineId}:plan?preset=auto`), 200));

    const jobs = await watchJobs(svc.url, token);
    events = jobs.stream;
    console.log(
      `export: ${CLIPS} clips of ${CLIP_SECONDS} s (${TARGET.width}x${TARGET.height} H.264 ${TARGET.fps} fps + AAC stereo, ` +
        `${(inputBytes / 1e6).toFixed(0)} MB in all); plan path copy (cold plan ${cold.ms.toFixed(0)} ms, ` +
        `warm ${warm.ms.toFixed(0)} ms: the exports below read cached probes). Inputs are in the page cache; ` +
        `\`sync\` runs before every timed run. x264 ${ENCODE.preset} crf ${ENCODE.crf}, AAC ${ENCODE.audioBitrate} on both sides. ` +
        `Load average before: ${load()}.\n`,
    );

    const serviceExport = async (preset: 'auto' | 'h264', path: 'copy' | 'conform'): Promise<ServiceRun> => {
      execFileSync('sync');
      const cpu0 = cpuSeconds(svc.pid) ?? NaN;
      const child0 = childCpuSeconds(svc.pid) ?? NaN;
      const postedAt = Date.now();
      const t0 = performance.now();
      const res = await api('POST', `/timeline/${timelineId}:export`, JSON.stringify({ preset, filename: `bench-${path}` }));
      if (res.status !== 202) throw new Error(`POST :export (${preset}) answered ${res.status}: ${res.text}`);
      const { job, at } = await jobs.finished((JSON.parse(res.text) as { id: string }).id);
      const ms = at - t0;
      if (job.state !== 'succeeded') throw new Error(`the service's ${path} export ended ${job.state}: ${job.last_error}`);
      const serverCpu = (cpuSeconds(svc.pid) ?? NaN) - cpu0;
      const childCpu = (childCpuSeconds(svc.pid) ?? NaN) - child0;
      const phases = await logPhases(svc.url, token, job, postedAt, ms);
      // Checked as a studio would read it: through the API.
      const assetUrl = `${svc.url}/api/v1/assets/${job.data!.asset_id}`;
      const facts = await probeOutput(ffprobe, assetUrl, `Authorization: Bearer ${token}\r\n`);
      checkOutput(`service ${path} export`, facts, seconds, SERVICE_SLACK_S);
      return { ms, childCpu, serverCpu, phases, bytes: facts.bytes, duration: facts.duration };
    };
    const handExport = async (args: string[], out: string, what: string): Promise<HandRun> => {
      execFileSync('sync');
      const child0 = childCpuSeconds(process.pid) ?? NaN;
      const t0 = performance.now();
      await runFfmpeg(ffmpeg, args);
      const ms = performance.now() - t0;
      const childCpu = (childCpuSeconds(process.pid) ?? NaN) - child0;
      const facts = await probeOutput(ffprobe, out);
      checkOutput(what, facts, seconds, HAND_SLACK_S);
      const bytes = statSync(out).size;
      const durable = await hashThenSync(out);
      removeFile(out);
      return { ms, childCpu, bytes, duration: facts.duration, ...durable };
    };
    const catRun = async (): Promise<HandRun> => {
      const out = join(work, 'cat.out');
      execFileSync('sync');
      const t0 = performance.now();
      await catInto(files, out);
      const ms = performance.now() - t0;
      const bytes = statSync(out).size;
      if (bytes !== inputBytes) throw new Error(`cat wrote ${bytes} bytes, not ${inputBytes}`);
      const durable = await hashThenSync(out);
      removeFile(out);
      return { ms, childCpu: NaN, bytes, duration: NaN, ...durable };
    };

    // Copy: service, hand-written and cat in rotating order.
    const listFile = join(work, 'list.ffconcat');
    writeFileSync(listFile, concatList(files));
    const copyOut = join(work, 'hand-copy.mp4');
    const copyArgs = handCopyArgs(files, listFile, copyOut, ENCODE.audioBitrate, TARGET.sampleRate);
    const copy = { service: [] as ServiceRun[], hand: [] as HandRun[], cat: [] as HandRun[] };
    for (let round = 0; round < COPY_ROUNDS; round++) {
      const steps = [
        async () => copy.service.push(await serviceExport('auto', 'copy')),
        async () => copy.hand.push(await handExport(copyArgs, copyOut, 'hand-written copy')),
        async () => copy.cat.push(await catRun()),
      ];
      for (let i = 0; i < steps.length; i++) await steps[(i + round) % steps.length]!();
      console.log(
        `copy round ${round + 1}/${COPY_ROUNDS}: service ${secs(copy.service[round]!.ms)} s, ` +
          `hand-written ${secs(copy.hand[round]!.ms)} s, cat ${secs(copy.cat[round]!.ms)} s`,
      );
    }

    // Conform: long runs, once each by default (BACKLOT_BENCH_REPEAT), the order alternating.
    const conformOut = join(work, 'hand-conform.mp4');
    const conformArgs = handConformArgs(files, conformOut, TARGET, ENCODE);
    const conform = { service: [] as ServiceRun[], hand: [] as HandRun[] };
    for (let round = 0; round < REPEAT; round++) {
      const steps = [
        async () => conform.service.push(await serviceExport('h264', 'conform')),
        async () => conform.hand.push(await handExport(conformArgs, conformOut, 'hand-written conform')),
      ];
      console.log(`conform round ${round + 1}/${REPEAT}: two encodes of ${seconds} s of 1080p (minutes each on 2 cores) ...`);
      for (let i = 0; i < steps.length; i++) await steps[(i + round) % steps.length]!();
      console.log(
        `conform round ${round + 1}/${REPEAT}: service ${secs(conform.service[round]!.ms)} s, hand-written ${secs(conform.hand[round]!.ms)} s`,
      );
    }

    console.log(`load average after: ${load()} (other work on the machine moves every wall-clock figure; child CPU s much less)`);
    report({ copy, conform, seconds });
  } finally {
    process.off('SIGINT', endChildren).off('SIGTERM', endChildren);
    events?.close();
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

/** Adopts the clips from the stage folder (hardlinks: docs/api.md "Adopt `POST /assets:adopt`") and lays them end to end on V1. */
async function makeSequence(api: Client, dataDir: string, files: string[]): Promise<string> {
  const stage = join(dataDir, 'studios', 'bench', 'stage');
  mkdirSync(stage, { recursive: true });
  const ids: string[] = [];
  for (const file of files) {
    const staged = join(stage, basename(file));
    try {
      linkSync(file, staged);
    } catch {
      copyFileSync(file, staged); // another volume: the service then reads a copy of the same bytes
    }
    const body = { path: staged, kind: 'video', filename: basename(file), width: TARGET.width, height: TARGET.height, duration_s: CLIP_SECONDS, fps: TARGET.fps };
    ids.push((JSON.parse(await ok(api('POST', '/assets:adopt', JSON.stringify(body)), 201, 200)) as { id: string }).id);
  }
  const sequence = {
    name: 'bench export',
    target: { fps: TARGET.fps, width: TARGET.width, height: TARGET.height, sample_rate: TARGET.sampleRate },
    clips: ids.map((asset_id) => ({ asset_id, duration: CLIP_SECONDS })),
  };
  return (JSON.parse(await ok(api('POST', '/timeline', JSON.stringify(sequence)), 201)) as { id: string }).id;
}

interface Job {
  id: string;
  state: string;
  last_error: string | null;
  created_at: string;
  finished_at: string | null;
  data: { asset_id: string; item_id: string } | null;
}

/** The studio's job events, kept open for the whole bench: each job's terminal state and when it arrived. */
async function watchJobs(base: string, token: string) {
  const done = new Map<string, { job: Job; at: number }>();
  const waiting = new Map<string, (d: { job: Job; at: number }) => void>();
  let closed = false;
  const stream = await readEvents(`${base}/api/v1/events`, token, (event, data) => {
    if (event !== 'job') return;
    const job = JSON.parse(data) as Job;
    if (!['succeeded', 'failed', 'cancelled'].includes(job.state)) return;
    const d = { job, at: performance.now() };
    done.set(job.id, d);
    waiting.get(job.id)?.(d);
  });
  const failOnClose = new Set<(err: Error) => void>();
  void stream.ended.then(() => {
    closed = true;
    for (const fail of failOnClose) fail(new Error('the event stream closed'));
  });
  return {
    stream,
    finished(id: string): Promise<{ job: Job; at: number }> {
      const seen = done.get(id);
      if (seen) return Promise.resolve(seen);
      if (closed) return Promise.reject(new Error('the event stream closed'));
      return new Promise((resolve, reject) => {
        failOnClose.add(reject);
        waiting.set(id, (d) => {
          failOnClose.delete(reject);
          resolve(d);
        });
      });
    },
  };
}

/** The job's phases from its log's timestamps (ms resolution): see PHASES. */
async function logPhases(base: string, token: string, job: Job, postedAt: number, totalMs: number): Promise<Phases> {
  const lines: { text: string; at: number }[] = [];
  const stream = await readEvents(`${base}/api/v1/jobs/${job.id}/logs`, token, (event, data) => {
    if (event !== 'line') return;
    const line = JSON.parse(data) as { text: string; at: string };
    lines.push({ text: line.text, at: Date.parse(line.at) });
  });
  await stream.ended;
  const checked = lines.findIndex((l) => l.text.startsWith('checked:'));
  const adopted = lines.find((l) => l.text.startsWith('adopted as asset'));
  if (checked < 1 || !adopted || !job.finished_at) throw new Error(`job ${job.id}'s log lacks the checked/adopted lines`);
  const created = Date.parse(job.created_at);
  const finished = Date.parse(job.finished_at);
  // The line before "checked:" is ffmpeg's last stderr line: its final stats, written after the trailer (faststart).
  const ffmpegEnd = lines[checked - 1]!.at;
  return {
    request: created - postedAt,
    start: lines[0]!.at - created,
    ffmpeg: ffmpegEnd - lines[0]!.at,
    probe: lines[checked]!.at - ffmpegEnd,
    durable: adopted.at - lines[checked]!.at,
    finish: finished - adopted.at,
    event: totalMs - (finished - postedAt),
  };
}

function checkOutput(what: string, o: Awaited<ReturnType<typeof probeOutput>>, seconds: number, slack: number): void {
  const problem = outputProblem(o, seconds, slack, `${TARGET.width}x${TARGET.height}`, TARGET.sampleRate);
  if (problem) throw new Error(`${what}: the output is wrong (${problem})`);
}

function report(r: {
  copy: { service: ServiceRun[]; hand: HandRun[]; cat: HandRun[] };
  conform: { service: ServiceRun[]; hand: HandRun[] };
  seconds: number;
}): void {
  const m = (runs: Run[]) => median(runs.map((x) => x.ms));
  const cpu = (runs: Run[]) => (runs.some((x) => Number.isNaN(x.childCpu)) ? '' : median(runs.map((x) => x.childCpu)).toFixed(1));
  const len = (runs: Run[]) => median(runs.map((x) => x.duration)).toFixed(2);
  const all = (runs: Run[]) => runs.map((x) => secs(x.ms)).join(' ');
  const cat = m(r.copy.cat);
  const copyRatio = m(r.copy.service) / m(r.copy.hand);
  const conformRatio = m(r.conform.service) / m(r.conform.hand);
  const speedup = m(r.conform.service) / m(r.copy.service);
  const verdict = (met: boolean) => (met ? 'met' : 'not met');
  const x = (v: number) => `${v.toFixed(2)}x`;
  console.log(`\nexport of ${r.seconds} s (seconds from POST to the job's succeeded event; hand-written: ffmpeg's run; median)`);
  // CPU vs hand-written: the service's children (ffmpeg, and ffprobe of the output) plus its own Node CPU,
  // over the hand-written ffmpeg's: the work done, which the machine's other load moves far less than time.
  const cpuRatio = (svc: ServiceRun[], hand: Run[]) =>
    x((median(svc.map((s) => s.childCpu)) + median(svc.map((s) => s.serverCpu))) / median(hand.map((h) => h.childCpu)));
  const row = (name: string, runs: Run[], vsHand = ['', '', '', '']) =>
    [name, secs(m(runs)), all(runs), cpu(runs), len(runs), ...vsHand, x(m(runs) / cat)];
  console.log(
    table(
      ['variant', 'median s', 'runs', 'child CPU s', 'output s', 'vs hand-written', 'CPU vs hand', 'target', 'result', 'vs cat'],
      [
        row('service copy (preset auto)', r.copy.service, [x(copyRatio), cpuRatio(r.copy.service, r.copy.hand), `<= ${TARGETS.copy}`, verdict(copyRatio <= TARGETS.copy)]),
        row('hand-written copy', r.copy.hand),
        [`cat of the ${CLIPS} clips`, secs(cat), all(r.copy.cat), '', '', '', '', '', '', ''],
        row('service conform (preset h264)', r.conform.service, [x(conformRatio), cpuRatio(r.conform.service, r.conform.hand), `<= ${TARGETS.conform}`, verdict(conformRatio <= TARGETS.conform)]),
        row('hand-written conform', r.conform.hand),
        ['copy vs conform (service)', '', '', '', '', `${speedup.toFixed(0)}x faster`, '', `>= ${TARGETS.speedup}x`, verdict(speedup >= TARGETS.speedup), ''],
      ],
    ),
  );

  const phase = (runs: ServiceRun[], key: keyof Phases) => String(Math.round(median(runs.map((s) => s.phases[key]))) || 0);
  console.log('\nwhere the service export spends its time (ms, median; from the job log timestamps, ms resolution)');
  console.log(
    table(
      ['phase', 'copy', 'conform'],
      [
        ...PHASES.map(([key, label]) => [label, phase(r.copy.service, key), phase(r.conform.service, key)]),
        ['total', m(r.copy.service).toFixed(0), m(r.conform.service).toFixed(0)],
        ['service (Node) CPU s', med(r.copy.service, (s) => s.serverCpu, 2), med(r.conform.service, (s) => s.serverCpu, 2)],
      ],
    ),
  );
  console.log('\nthe durability step: the service\'s (from its log), and the same timed by the bench on the other outputs after their runs (ms, median; not in their times above)');
  console.log(
    table(
      ['output', 'MB', 'sha256', 'fsync'],
      [
        ['service copy', med(r.copy.service, (s) => s.bytes / 1e6, 0), phase(r.copy.service, 'durable'), '(together)'],
        ['service conform', med(r.conform.service, (s) => s.bytes / 1e6, 0), phase(r.conform.service, 'durable'), '(together)'],
        ['hand-written copy', med(r.copy.hand, (h) => h.bytes / 1e6, 0), med(r.copy.hand, (h) => h.hashMs, 0), med(r.copy.hand, (h) => h.syncMs, 0)],
        ['cat', med(r.copy.cat, (h) => h.bytes / 1e6, 0), med(r.copy.cat, (h) => h.hashMs, 0), med(r.copy.cat, (h) => h.syncMs, 0)],
        ['hand-written conform', med(r.conform.hand, (h) => h.bytes / 1e6, 0), med(r.conform.hand, (h) => h.hashMs, 0), med(r.conform.hand, (h) => h.syncMs, 0)],
      ],
    ),
  );
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t0 };
}

async function ok(res: Promise<{ status: number; text: string }>, ...statuses: number[]): Promise<string> {
  const r = await res;
  if (!statuses.includes(r.status)) throw new Error(`answered ${r.status}: ${r.text}`);
  return r.text;
}

const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const med = <T>(xs: T[], f: (x: T) => number, digits: number) => median(xs.map(f)).toFixed(digits);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
