import { execFile, fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { Agent, request, type ClientRequest, type IncomingMessage } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createInterface } from 'node:readline';
import { deflateSync } from 'node:zlib';
import { toolPath } from '../service/media';
import { openAdmin } from '../service/admin';
import { fmt, pct, table } from './common';
import { cpuSeconds } from './harness';
import type { ServiceSample } from './soak-service';
// The tests' seeded PRNG (mulberry32): a seed replays the same traffic in both.
import { rng } from '../test/helpers/prng';

/**
 * Soak (bench/README.md "soak"): mixed traffic at a fixed, open-loop
 * rate against `bin/backlot serve` (run by soak-service.ts, which reports the service's
 * RSS, heap, open descriptors and event-loop delay every second over IPC), for a long
 * time, then a judgement: no error of any kind, and no growth past the bounds after the
 * warm-up. `runSoak` is shared by `npm run bench -- soak` (30 minutes at 200 req/s) and
 * test/soak.test.ts (60 s).
 *
 * Requests are scheduled at exact instants (request i at start + i / rate) whatever the
 * answers do, over a pool of keep-alive connections, and each latency is counted from
 * its scheduled instant: a stall shows as latency, never as a lower rate.
 */

export interface SoakOptions {
  /** Seconds of traffic. */
  seconds: number;
  /** Requests per second (the mixed requests; SSE listeners and exports come on top). */
  rate: number;
  /** Keep-alive connections in the pool. */
  connections: number;
  /** SSE listeners (half `/events`, half job log streams) kept open, one replaced about every second. */
  listeners: number;
  /** One export every this many seconds. */
  exportEvery: number;
  seed: number;
  /** How far behind the schedule the service may fall before requests are refused as errors (default 30 s). */
  maxBehindSeconds?: number;
  /** How long to wait for the last answers, then for the last exports (default 60 s and 90 s). */
  drainSeconds?: number;
  exportWaitSeconds?: number;
  /** Progress lines (one a minute, or per `progressEvery` seconds). */
  log?: (line: string) => void;
  progressEvery?: number;
}

export interface SoakResult {
  options: SoakOptions;
  /** Service samples, `t` = seconds since the traffic started (negative before). */
  samples: (ServiceSample & { t: number })[];
  /** Latencies (ms from the scheduled instant) of the mixed requests, by the second they were scheduled in. */
  latencyBySecond: number[][];
  perOp: Record<string, number[]>;
  sent: number;
  answered: number;
  /** Error kind -> count (any unexpected status, socket error, failed export, broken listener). */
  errors: Map<string, number>;
  /** First few error details, for the report. */
  errorSamples: string[];
  listenersOpened: number;
  listenerEvents: number;
  exports: { started: number; succeeded: number };
  maxInFlight: number;
  /** Open descriptors when idle before the traffic, and after it (connections closed). */
  fdsIdle: number;
  fdsAfter: number;
  exitCode: number | null;
  load: { before: string; after: string };
  /** The service's CPU seconds (user + system, its own process) over the traffic, from /proc. */
  serviceCpu: number | null;
  /** What the service held open after the traffic when more than idle (readlink of /proc/PID/fd). */
  fdsLeft: string[];
}

type Method = 'GET' | 'PUT' | 'POST' | 'PATCH';

interface Answer {
  status: number;
  text: string;
}

const execFileAsync = promisify(execFile);

const WORDS = Array.from({ length: 200 }, (_, i) => `w${i.toString(36)}${'qzxjvk'[i % 6]}`);
const KV_KEYS = 200;
const SESSIONS = 10;
const MAX_LIVE_JOBS = 12;


const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const out = Buffer.alloc(body.length + 8);
  out.writeUInt32BE(data.length, 0);
  body.copy(out, 4);
  out.writeUInt32BE(crc32(body), body.length + 4);
  return out;
}

/** A 16x16 RGB PNG whose pixels spell `n`: every `n` gives other bytes (a new blob). */
export function smallPng(n: number): Buffer {
  const size = 16;
  const raw = Buffer.alloc(size * (size * 3 + 1));
  for (let y = 0; y < size; y++) {
    const row = y * (size * 3 + 1);
    for (let x = 0; x < size * 3; x++) raw[row + 1 + x] = (n >>> ((x + y) % 4) * 8) & 0xff ^ (x * 7 + y * 13);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

interface ServiceChild {
  child: ChildProcess;
  port: number;
  samples: ServiceSample[];
  stderr(): string;
  exited: Promise<number | null>;
}

/** Forks soak-service.ts (the real `serve`) and waits for its ready line. */
function startService(dataDir: string): Promise<ServiceChild> {
  const child = fork(join(__dirname, 'soak-service.js'), ['--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8000)));
  const samples: ServiceSample[] = [];
  child.on('message', (m: { sample?: ServiceSample }) => {
    if (m.sample) samples.push(m.sample);
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the service did not start in 20 s\n${stderr}`));
    }, 20_000);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited with ${code}\n${stderr}`));
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(line);
      if (!m) return;
      clearTimeout(timer);
      resolve({ child, port: Number(m[1]), samples, stderr: () => stderr, exited });
    });
  });
}

/** Requests under /api/v1 over `agent`; resolves with status and text, rejects on a socket error. */
function call(port: number, token: string, agent: Agent | false, method: Method, path: string, body?: unknown, type = 'application/json'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` };
    let payload: Buffer | undefined;
    if (body !== undefined) {
      payload = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
      headers['content-type'] = type;
      headers['content-length'] = String(payload.length);
    }
    const req = request({ host: '127.0.0.1', port, method, path: `/api/v1${path}`, headers, agent, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

interface Listener {
  req: ClientRequest;
  res?: IncomingMessage;
  leaving: boolean;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs the soak; never throws for what the service does (that is counted in `errors`). */
export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const ffmpeg = toolPath('ffmpeg');
  if (!ffmpeg || !toolPath('ffprobe')) throw new Error('ffmpeg and ffprobe are needed for the soak\'s exports (on PATH, or BACKLOT_FFMPEG / BACKLOT_FFPROBE).');
  const log = options.log ?? (() => {});
  const random = rng(options.seed);
  const dataDir = mkdtempSync(join(tmpdir(), 'backlot-soak-'));
  const work = mkdtempSync(join(tmpdir(), 'backlot-soak-media-'));
  const errors = new Map<string, number>();
  const errorSamples: string[] = [];
  const error = (kind: string, detail: string) => {
    const seen = errors.get(kind) ?? 0;
    errors.set(kind, seen + 1);
    // The first two of each kind, at most 20 in all.
    if (seen < 2 && errorSamples.length < 20) errorSamples.push(`${kind}: ${detail.slice(0, 300)}`);
  };
  let service: ServiceChild | undefined;
  const listeners = new Set<Listener>();
  try {
    const video = join(work, 'clip.mp4');
    // The clip is made while the CLI and the service start.
    const clipMade = execFileAsync(ffmpeg, [
      '-hide_banner', '-loglevel', 'error', '-nostdin', '-y',
      '-f', 'lavfi', '-i', 'testsrc=size=320x180:rate=25', '-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000',
      '-map', '0:v', '-map', '1:a', '-t', '2', '-c:v', 'libx264', '-preset', 'superfast', '-crf', '28', '-pix_fmt', 'yuv420p',
      '-c:a', 'aac', '-b:a', '64k', video,
    ], { timeout: 60_000 });
    clipMade.catch(() => {});
    // What `backlot studio add` and `backlot token create` run, without two more Node starts.
    const admin = openAdmin(dataDir);
    let token: string;
    try {
      admin.addStudio({ id: 'soak' });
      token = admin.createToken('soak', ['kv', 'records', 'gallery', 'assets', 'jobs', 'timeline']);
    } finally {
      admin.close();
    }
    service = await startService(dataDir);
    const svc = service;
    const port = svc.port;

    // Seed: the KV keys read and rewritten, the sessions patched, a sequence to export.
    const seedAgent = new Agent({ keepAlive: true, maxSockets: 8 });
    const must = async (method: Method, path: string, body: unknown, status: number[], type?: string) => {
      const a = await call(port, token, seedAgent, method, path, body, type);
      if (!status.includes(a.status)) throw new Error(`seeding: ${method} ${path} answered ${a.status}: ${a.text.slice(0, 300)}`);
      return JSON.parse(a.text || '{}') as Record<string, unknown>;
    };
    for (let i = 0; i < KV_KEYS; i += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, j) => must('PUT', `/kv/soak/k${i + j}`, { n: 0, text: 'x'.repeat(200) }, [200])));
    }
    const sessions: string[] = [];
    const made = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => must('POST', '/sessions', { name: `s${i}`, state: { n: 0 } }, [201])));
    for (const session of made) sessions.push(String(session.id));
    await clipMade;
    const clip = await must('POST', '/assets?kind=video&filename=clip.mp4', readFileSync(video), [201], 'video/mp4');
    const timeline = await must('POST', '/timeline', {
      name: 'soak',
      target: { width: 320, height: 180, fps: 25, sample_rate: 48000 },
      clips: [{ asset_id: clip.id }],
    }, [201]);
    const plan = await must('GET', `/timeline/${String(timeline.id)}:plan?preset=auto`, undefined, [200]);
    const assets: string[] = [];
    const seeded = await Promise.all(Array.from({ length: 20 }, (_, i) => must('POST', `/assets?kind=image&filename=seed${i}.png`, smallPng(1e9 + i), [201], 'image/png')));
    for (const asset of seeded) assets.push(String(asset.id));
    // Start what the service starts on first use (its read workers, each with its own
    // event loop and database handles), so the idle baseline below holds them.
    await must('POST', '/records/notes', { title: 'seed', tag: 't0', n: 0 }, [201]);
    for (let i = 0; i < 4; i++) {
      await Promise.all([
        must('GET', `/records/notes?where=${encodeURIComponent('tag:eq:t0')}&limit=20`, undefined, [200]),
        must('GET', '/gallery/items?q=seed&limit=20', undefined, [200]),
        must('GET', '/gallery/items?limit=20', undefined, [200]),
        must('GET', '/jobs?limit=20', undefined, [200]),
      ]);
    }
    seedAgent.destroy();
    log(`soak: service pid ${svc.child.pid}, data dir ${dataDir}; export plan path ${String(plan.path)}; load average ${load()}`);

    // The idle baseline of descriptors: no client connection open.
    const seen = svc.samples.length;
    const idleUntil = Date.now() + 10_000;
    while (svc.samples.length < seen + 2) {
      if (Date.now() > idleUntil) throw new Error(`the service sent no samples for 10 s\n${svc.stderr()}`);
      await sleep(100);
    }
    const fdsIdle = svc.samples.at(-1)!.fds;
    const loadBefore = load();

    const agent = new Agent({ keepAlive: true, maxSockets: options.connections, maxFreeSockets: options.connections, scheduling: 'fifo' });
    const api = (method: Method, path: string, body?: unknown, type?: string) => call(port, token, agent, method, path, body, type);
    const records: string[] = [];
    const items: string[] = [];
    const jobs: { id: string; step: number; busy: boolean }[] = [];
    const finishedJobs: string[] = [];
    let counter = 0;
    let creating = 0;
    const ring = (list: string[], value: string, max = 1000) => {
      list.push(value);
      if (list.length > max) list.shift();
    };
    const text = (words: number) => Array.from({ length: words }, () => random.pick(WORDS)).join(' ');
    const json = (a: Answer) => JSON.parse(a.text) as Record<string, unknown>;

    /** The mixed operations: [weight, name, run] where run returns the answer and the statuses expected. */
    const ops: [number, string, () => Promise<[Answer, number[]]>][] = [
      [18, 'kv get', async () => [await api('GET', `/kv/soak/k${random.int(KV_KEYS)}`), [200]]],
      [10, 'kv put', async () => [await api('PUT', `/kv/soak/k${random.int(KV_KEYS)}`, { n: ++counter, text: text(20) }), [200]]],
      [8, 'record create', async () => {
        const n = ++counter;
        const a = await api('POST', '/records/notes', { title: text(4), tag: `t${n % 10}`, n, body: text(30) });
        if (a.status === 201) ring(records, String(json(a).id));
        return [a, [201]];
      }],
      [7, 'record query', async () => [await api('GET', `/records/notes?where=${encodeURIComponent(`tag:eq:t${random.int(10)}`)}&limit=20`), [200]]],
      [4, 'record get', async () => {
        if (records.length === 0) return [await api('GET', '/records/notes?limit=5'), [200]];
        return [await api('GET', `/records/notes/${random.pick(records)}`), [200]];
      }],
      [5, 'asset upload', async () => {
        const n = ++counter;
        const a = await api('POST', `/assets?kind=image&filename=s${n}.png`, smallPng(n), 'image/png');
        if (a.status === 201) ring(assets, String(json(a).id), 200);
        return [a, [201]];
      }],
      [3, 'asset get', async () => [await api('GET', `/assets/${random.pick(assets)}`), [200]]],
      [2, 'asset thumb', async () => [await api('GET', `/assets/${random.pick(assets)}/thumb?w=320`), [200]]],
      [5, 'gallery create', async () => {
        const a = await api('POST', '/gallery/items', {
          asset_id: random.pick(assets),
          title: text(3),
          tags: [random.pick(WORDS)],
          session_id: random.pick(sessions),
          params: { prompt: text(6), steps: random.int(50) },
        });
        if (a.status === 201) ring(items, String(json(a).id));
        return [a, [201]];
      }],
      [7, 'gallery search', async () => [await api('GET', `/gallery/items?q=${encodeURIComponent(random.pick(WORDS))}&limit=20`), [200]]],
      [3, 'gallery list', async () => [await api('GET', '/gallery/items?limit=20'), [200]]],
      [6, 'session patch', async () => [await api('PATCH', `/sessions/${random.pick(sessions)}`, { state: { [`k${random.int(20)}`]: text(5), n: ++counter } }, 'application/merge-patch+json'), [200]]],
      [3, 'session get', async () => [await api('GET', `/sessions/${random.pick(sessions)}`), [200]]],
      [12, 'job', async () => {
        const idle = jobs.filter((j) => !j.busy);
        // Creates still in flight count: when answers lag, live jobs must not pile up.
        const live = jobs.length + creating;
        if (idle.length === 0 && live >= MAX_LIVE_JOBS) return [await api('GET', '/jobs?limit=20'), [200]];
        if (live < MAX_LIVE_JOBS && (idle.length === 0 || (live < 4 && random.next() < 0.5))) {
          creating++;
          try {
            const a = await api('POST', '/jobs', { title: `soak ${++counter}`, data: { n: counter } });
            if (a.status === 201) jobs.push({ id: String(json(a).id), step: 0, busy: false });
            return [a, [201]];
          } finally {
            creating--;
          }
        }
        const job = random.pick(idle);
        job.busy = true;
        try {
          if (job.step < 5) {
            const a = await api('POST', `/jobs/${job.id}/logs`, { lines: [text(8), text(8), text(8)] });
            job.step++;
            return [a, [204]];
          }
          if (job.step === 5) {
            const a = await api('PATCH', `/jobs/${job.id}`, { progress_num: 1, progress_den: 2, data: { half: true } }, 'application/merge-patch+json');
            job.step++;
            return [a, [200]];
          }
          const a = await api('PATCH', `/jobs/${job.id}`, { state: 'succeeded', progress_num: 2 }, 'application/merge-patch+json');
          jobs.splice(jobs.indexOf(job), 1);
          ring(finishedJobs, job.id, 50);
          return [a, [200]];
        } finally {
          job.busy = false;
        }
      }],
      [2, 'jobs list', async () => [await api('GET', '/jobs?limit=20'), [200]]],
    ];
    const totalWeight = ops.reduce((s, [w]) => s + w, 0);
    const pickOp = () => {
      let r = random.next() * totalWeight;
      for (const op of ops) if ((r -= op[0]) < 0) return op;
      return ops[0]!;
    };

    // SSE listeners: /events and job log streams, joining and leaving.
    let listenersOpened = 0;
    let listenerEvents = 0;
    let stopping = false;
    const exportJobs = new Map<string, string>(); // job id -> state
    let exportsStarted = 0;
    const onJobEvent = (data: string) => {
      const job = JSON.parse(data) as { id: string; kind: string; state: string; last_error: string | null };
      if (job.kind !== 'export' || !exportJobs.has(job.id)) return;
      exportJobs.set(job.id, job.state);
      if (job.state === 'failed' || job.state === 'cancelled') error('export failed', `${job.id}: ${job.state} ${job.last_error}`);
    };
    const listen = (path: string, watchExports: boolean): Listener => {
      listenersOpened++;
      const req = request({
        host: '127.0.0.1',
        port,
        path: `/api/v1${path}`,
        agent: false,
        setHost: false,
        headers: { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      });
      const l: Listener = { req, leaving: false };
      listeners.add(l);
      const gone = () => listeners.delete(l);
      req.on('error', (err) => {
        gone();
        if (!l.leaving && !stopping) error('listener socket error', `${path}: ${err.message}`);
      });
      req.on('response', (res) => {
        l.res = res;
        if (res.statusCode !== 200) {
          error(`listener status ${res.statusCode}`, path);
          res.resume();
          return;
        }
        let buffer = '';
        let ended = false;
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          buffer += c;
          let at: number;
          while ((at = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1];
            if (!event) continue;
            listenerEvents++;
            if (event === 'end') ended = true;
            if (event === 'job' && watchExports) {
              const data = block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
              onJobEvent(data);
            }
          }
        });
        res.on('close', () => {
          gone();
          // A log stream ends by itself once its job has finished (after `end`); /events never does.
          if (!l.leaving && !stopping && !ended) error('listener closed by the service', path);
        });
      });
      req.end();
      return l;
    };
    const leave = (l: Listener) => {
      l.leaving = true;
      listeners.delete(l);
      l.req.destroy();
    };
    const exportWatch = listen('/events', true);
    const joinOne = () => {
      if (random.next() < 0.5) return listen('/events', false);
      const live = jobs.length > 0 ? random.pick(jobs).id : finishedJobs.length > 0 ? random.pick(finishedJobs) : null;
      return live === null ? listen('/events', false) : listen(`/jobs/${live}/logs`, false);
    };

    // The traffic.
    const latencyBySecond: number[][] = Array.from({ length: Math.ceil(options.seconds) }, () => []);
    const perOp: Record<string, number[]> = {};
    const samplesAtStart = svc.samples.length;
    let sent = 0;
    let answered = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    const total = Math.floor(options.seconds * options.rate);
    const cpuBefore = cpuSeconds(svc.child.pid!);
    const started = performance.now();
    const startedAt = Date.now();
    const pending = new Set<Promise<void>>();
    // A service this far behind has failed the soak; stop piling requests on it.
    const behind = options.maxBehindSeconds ?? 30;
    const maxBacklog = Math.max(100, Math.ceil(options.rate * behind));
    const launch = (index: number) => {
      const scheduled = started + (index * 1000) / options.rate;
      if (inFlight >= maxBacklog) {
        error('client backlog', `more than ${maxBacklog} requests in flight: the service fell ${behind} s behind the schedule`);
        return;
      }
      const [, name, run] = pickOp();
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const p = run().then(
        ([answer, expected]) => {
          const ms = performance.now() - scheduled;
          answered++;
          latencyBySecond[Math.floor((index / options.rate))]!.push(ms);
          (perOp[name] ??= []).push(ms);
          if (!expected.includes(answer.status)) error(`${name} ${answer.status}`, answer.text);
        },
        (err: Error) => error(`${name} socket error`, err.message),
      ).finally(() => {
        inFlight--;
        pending.delete(p);
      });
      pending.add(p);
    };
    let nextExport = 5;
    let nextListenerChange = 1;
    let nextProgress = options.progressEvery ?? 60;
    for (let i = 0; i < options.listeners; i++) joinOne();
    await new Promise<void>((done) => {
      const tick = () => {
        const elapsed = (performance.now() - started) / 1000;
        const due = Math.min(total, Math.floor(elapsed * options.rate) + 1);
        while (sent < due) launch(sent++);
        if (elapsed >= nextListenerChange) {
          nextListenerChange += 0.5 + random.next();
          const open = [...listeners].filter((l) => l !== exportWatch);
          if (open.length > 0 && (open.length >= options.listeners || random.next() < 0.5)) leave(random.pick(open));
          if (open.length <= options.listeners) joinOne();
        }
        if (elapsed >= nextExport) {
          nextExport += options.exportEvery;
          exportsStarted++;
          void api('POST', `/timeline/${String(timeline.id)}:export`, { preset: 'auto', filename: `soak-${exportsStarted}` }).then(
            (a) => {
              if (a.status === 202) exportJobs.set(String(json(a).id), 'running');
              else error(`export ${a.status}`, a.text);
            },
            (err: Error) => error('export socket error', err.message),
          );
        }
        if (elapsed >= nextProgress) {
          nextProgress += options.progressEvery ?? 60;
          const s = svc.samples.at(-1);
          const second = latencyBySecond.slice(Math.max(0, Math.floor(elapsed) - 10), Math.floor(elapsed)).flat().sort((a, b) => a - b);
          log(
            `  ${elapsed.toFixed(0)} s: ${answered} answered, ${[...errors.values()].reduce((a, b) => a + b, 0)} errors, ` +
              `p99 (last 10 s) ${second.length ? fmt(pct(second, 0.99)) : '-'} ms, in flight ${inFlight}, ` +
              (s ? `rss ${mib(s.rss)} MiB, heap ${mib(s.heapUsed)} MiB, fds ${s.fds}, loop p99 ${fmt(s.loopP99)} ms` : ''),
          );
        }
        if (sent >= total) {
          clearInterval(timer);
          done();
        }
      };
      const timer = setInterval(tick, 5);
    });
    const cpuAfter = cpuSeconds(svc.child.pid!);
    const serviceCpu = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
    // Drain: every request answered, every export finished.
    const drainUntil = Date.now() + (options.drainSeconds ?? 60) * 1000;
    while (pending.size > 0 && Date.now() < drainUntil) await Promise.race([...pending, sleep(1000)]);
    if (pending.size > 0) error('unanswered at the end', `${pending.size} requests`);
    // Requests still queued in the agent go no further.
    agent.destroy();
    const exportsUntil = Date.now() + (options.exportWaitSeconds ?? 90) * 1000;
    while ([...exportJobs.values()].some((s) => s === 'running' || s === 'queued') && Date.now() < exportsUntil) await sleep(200);
    const succeeded = [...exportJobs.values()].filter((s) => s === 'succeeded').length;
    if (succeeded !== exportsStarted) error('exports not succeeded', `${succeeded} of ${exportsStarted} (${[...exportJobs.values()].join(', ')})`);
    // The task jobs still running end (the service keeps a live job's log open).
    await Promise.all(
      jobs.map(async (job) => {
        const a = await api('PATCH', `/jobs/${job.id}`, { state: 'succeeded' }, 'application/merge-patch+json').catch((err: Error) => ({ status: 0, text: err.message }));
        if (a.status !== 200) error(`job finish ${a.status}`, a.text);
      }),
    );
    stopping = true;
    for (const l of [...listeners]) leave(l);
    agent.destroy();
    // Every connection closed: the service's descriptors go back to the idle baseline.
    const fdsUntil = Date.now() + 15_000;
    let fdsAfter = -1;
    for (;;) {
      const seenNow = svc.samples.length;
      while (svc.samples.length === seenNow && Date.now() < fdsUntil) await sleep(50);
      fdsAfter = svc.samples.at(-1)!.fds;
      if (fdsAfter <= fdsIdle || Date.now() > fdsUntil) break;
    }
    const fdsLeft = fdsAfter > fdsIdle ? openFiles(svc.child.pid!) : [];
    const loadAfter = load();
    svc.child.kill('SIGTERM');
    const exitCode = await svc.exited;
    if (exitCode !== 0) error('service exit', `code ${exitCode}\n${svc.stderr()}`);
    return {
      options,
      samples: svc.samples.slice(Math.max(0, samplesAtStart - 5)).map((s) => ({ ...s, t: (s.at - startedAt) / 1000 })),
      latencyBySecond,
      perOp,
      sent,
      answered,
      errors,
      errorSamples,
      listenersOpened,
      listenerEvents,
      exports: { started: exportsStarted, succeeded },
      maxInFlight,
      fdsIdle,
      fdsAfter,
      exitCode,
      load: { before: loadBefore, after: loadAfter },
      serviceCpu,
      fdsLeft,
    };
  } finally {
    for (const l of [...listeners]) l.req.destroy();
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

export interface SoakBounds {
  /** Seconds after the traffic starts that are not judged (JIT, caches, SQLite pages filling). */
  warmup: number;
  /** Length of the first and the last window compared, seconds. */
  window: number;
  /** Growth of the mean RSS, last window over first, MiB. */
  rssMiB: number;
  /** Growth of the lowest heapUsed (the floor after collections), last window over first, MiB. */
  heapMiB: number;
  /** p99 latency of the last window at most p99Factor x the first window's + p99SlackMs. */
  p99Factor: number;
  p99SlackMs: number;
}

export interface SoakVerdict {
  failures: string[];
  figures: {
    rate: number;
    first: WindowFigures;
    last: WindowFigures;
    rssGrowthMiB: number;
    heapFloorGrowthMiB: number;
    heapMeanGrowthMiB: number;
  };
}

interface WindowFigures {
  from: number;
  to: number;
  requests: number;
  p50: number;
  p99: number;
  rssMiB: number;
  heapMeanMiB: number;
  heapFloorMiB: number;
  fdsMax: number;
  loopP99: number;
  loopMax: number;
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

function windowFigures(r: SoakResult, from: number, to: number): WindowFigures {
  const lat = r.latencyBySecond.slice(from, to).flat().sort((a, b) => a - b);
  const s = r.samples.filter((x) => x.t >= from && x.t < to);
  const mean = (f: (x: ServiceSample) => number) => (s.length ? s.reduce((a, x) => a + f(x), 0) / s.length : NaN);
  const loops = s.map((x) => x.loopP99).sort((a, b) => a - b);
  return {
    from,
    to,
    requests: lat.length,
    p50: lat.length ? pct(lat, 0.5) : NaN,
    p99: lat.length ? pct(lat, 0.99) : NaN,
    rssMiB: mean((x) => x.rss) / 2 ** 20,
    heapMeanMiB: mean((x) => x.heapUsed) / 2 ** 20,
    heapFloorMiB: s.length ? Math.min(...s.map((x) => x.heapUsed)) / 2 ** 20 : NaN,
    fdsMax: s.length ? Math.max(...s.map((x) => x.fds)) : NaN,
    loopP99: loops.length ? pct(loops, 0.5) : NaN,
    loopMax: s.length ? Math.max(...s.map((x) => x.loopMax)) : NaN,
  };
}

/** The judgement: no error, descriptors back to idle, and growth within the bounds. */
export function judge(r: SoakResult, b: SoakBounds): SoakVerdict {
  const seconds = r.options.seconds;
  const first = windowFigures(r, b.warmup, b.warmup + b.window);
  const last = windowFigures(r, seconds - b.window, seconds);
  const failures: string[] = [];
  const errorCount = [...r.errors.values()].reduce((a, c) => a + c, 0);
  if (errorCount > 0) failures.push(`${errorCount} errors: ${[...r.errors].map(([k, n]) => `${k} x${n}`).join(', ')}\n  ${r.errorSamples.join('\n  ')}`);
  if (r.answered !== r.sent) failures.push(`${r.sent} requests sent, ${r.answered} answered`);
  if (r.fdsAfter > r.fdsIdle) failures.push(`open descriptors after the traffic: ${r.fdsAfter}, idle before it: ${r.fdsIdle}`);
  const rssGrowthMiB = last.rssMiB - first.rssMiB;
  const heapFloorGrowthMiB = last.heapFloorMiB - first.heapFloorMiB;
  const heapMeanGrowthMiB = last.heapMeanMiB - first.heapMeanMiB;
  if (!(rssGrowthMiB <= b.rssMiB)) failures.push(`RSS grew ${rssGrowthMiB.toFixed(1)} MiB (bound ${b.rssMiB})`);
  if (!(heapFloorGrowthMiB <= b.heapMiB)) failures.push(`the heap floor grew ${heapFloorGrowthMiB.toFixed(1)} MiB (bound ${b.heapMiB})`);
  if (!(last.p99 <= first.p99 * b.p99Factor + b.p99SlackMs)) {
    failures.push(`p99 ${fmt(last.p99)} ms in the last window against ${fmt(first.p99)} ms in the first (bound ${b.p99Factor} x + ${b.p99SlackMs} ms)`);
  }
  return {
    failures,
    figures: { rate: r.answered / seconds, first, last, rssGrowthMiB, heapFloorGrowthMiB, heapMeanGrowthMiB },
  };
}

/** What a process's descriptors point at (Linux), for the report when some were left open. */
function openFiles(pid: number): string[] {
  try {
    return readdirSync(`/proc/${pid}/fd`).map((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        return '?';
      }
    });
  } catch {
    return [];
  }
}

function load(): string {
  return loadavg().map((l) => l.toFixed(2)).join(' ');
}

/** Per-window rows of the whole run (the bench's table). */
export function report(r: SoakResult, windowSeconds: number): string {
  const rows: string[][] = [];
  for (let from = 0; from < r.options.seconds; from += windowSeconds) {
    const w = windowFigures(r, from, Math.min(r.options.seconds, from + windowSeconds));
    rows.push([
      `${from}-${w.to}`,
      String(w.requests),
      fmt(w.p50),
      fmt(w.p99),
      w.rssMiB.toFixed(1),
      w.heapMeanMiB.toFixed(1),
      w.heapFloorMiB.toFixed(1),
      String(w.fdsMax),
      fmt(w.loopP99),
      fmt(w.loopMax),
    ]);
  }
  return table(['s', 'answered', 'p50 ms', 'p99 ms', 'rss MiB', 'heap MiB', 'heap floor', 'fds max', 'loop p99', 'loop max'], rows);
}

export function opTable(r: SoakResult): string {
  const rows = Object.entries(r.perOp)
    .sort((a, b) => b[1].length - a[1].length)
    .map(([name, l]) => {
      const s = [...l].sort((a, b) => a - b);
      return [name, String(s.length), fmt(pct(s, 0.5)), fmt(pct(s, 0.99)), fmt(s.at(-1)!)];
    });
  return table(['operation', 'count', 'p50 ms', 'p99 ms', 'max ms'], rows);
}

/** `npm run bench -- soak`: BACKLOT_BENCH_SOAK_SECONDS (1800) at BACKLOT_BENCH_SOAK_RATE (200) req/s. */
export async function runSoakBench(): Promise<void> {
  const seconds = Number(process.env.BACKLOT_BENCH_SOAK_SECONDS ?? 1800);
  const rate = Number(process.env.BACKLOT_BENCH_SOAK_RATE ?? 200);
  if (!(seconds >= 120) || !(rate > 0)) throw new Error('BACKLOT_BENCH_SOAK_SECONDS must be at least 120 and BACKLOT_BENCH_SOAK_RATE positive.');
  const seed = Number(process.env.BACKLOT_BENCH_SEED ?? 17);
  const window = 60;
  const warmup = Math.min(300, Math.floor(seconds / 6 / 60) * 60 || 60);
  console.log(`soak: ${seconds} s at ${rate} req/s, 32 connections, 8 SSE listeners, an export every 60 s, seed ${seed}, warm-up ${warmup} s.`);
  const result = await runSoak({
    seconds,
    rate,
    connections: 32,
    listeners: 8,
    exportEvery: 60,
    seed,
    log: (line) => console.log(line),
    progressEvery: 60,
  });
  const verdict = judge(result, SOAK_BENCH_BOUNDS(warmup, window));
  const f = verdict.figures;
  console.log(`\n${report(result, window)}\n\n${opTable(result)}\n`);
  console.log(
    `sent ${result.sent}, answered ${result.answered} (${f.rate.toFixed(1)} req/s), max in flight ${result.maxInFlight}; ` +
      `SSE listeners opened ${result.listenersOpened} (${result.listenerEvents} events); exports ${result.exports.succeeded}/${result.exports.started}; ` +
      `errors ${[...result.errors.values()].reduce((a, b) => a + b, 0)}; ` +
      `service CPU ${result.serviceCpu === null ? '-' : `${result.serviceCpu.toFixed(0)} s (${((result.serviceCpu / result.answered) * 1000).toFixed(2)} ms per answered request, ffmpeg apart)`}.\n` +
      `Windows ${f.first.from}-${f.first.to} s and ${f.last.from}-${f.last.to} s: RSS ${f.first.rssMiB.toFixed(1)} -> ${f.last.rssMiB.toFixed(1)} MiB ` +
      `(${sign(f.rssGrowthMiB)}), heap floor ${f.first.heapFloorMiB.toFixed(1)} -> ${f.last.heapFloorMiB.toFixed(1)} MiB (${sign(f.heapFloorGrowthMiB)}), ` +
      `heap mean ${sign(f.heapMeanGrowthMiB)}, p99 ${fmt(f.first.p99)} -> ${fmt(f.last.p99)} ms, loop p99 ${fmt(f.first.loopP99)} -> ${fmt(f.last.loopP99)} ms; ` +
      `fds idle ${result.fdsIdle}, after ${result.fdsAfter}; service exit ${result.exitCode}. Load average ${result.load.before} before, ${result.load.after} after.`,
  );
  if (verdict.failures.length > 0) throw new Error(`the soak broke its bounds:\n- ${verdict.failures.join('\n- ')}`);
  console.log('soak: within every bound.');
}

/** The bench's bounds (30 minutes): see bench/README.md "soak" for why these numbers. */
export function SOAK_BENCH_BOUNDS(warmup: number, window: number): SoakBounds {
  return { warmup, window, rssMiB: 64, heapMiB: 16, p99Factor: 2, p99SlackMs: 100 };
}

const sign = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} MiB`;
