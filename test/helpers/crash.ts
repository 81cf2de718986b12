import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { rawRequest, upload, makePng } from './assets';
import { descendants, stillAlive, type Proc } from './crash-procs';
import { send, type HttpResponse } from './http';
import { CLIPMAKER, LauncherClient, SKETCHPAD, sleep } from './launcher';
import { rng, type Rng } from './prng';
import { startService, tempDir, type TestService } from './service';
import { realAsset } from './timeline';

/**
 * The crash harness of issue 17 item 1, shared by test/crash.test.ts (a few
 * rounds) and `npm run bench -- crash` (many). One data dir; each round
 * starts the real `bin/backlot serve` on it, lets clients write everything
 * the service keeps (KV, records, sessions, gallery items, timeline
 * revisions, uploads, adoptions, job logs) while an export, a studio install
 * or uninstall and a running studio may be under way, then SIGKILLs the
 * service at a seeded random moment. Before the next start the database must
 * pass `PRAGMA integrity_check`; after it:
 *
 * - every write that got a 2xx reads back with its etag (or, when a later
 *   write of the same thing was in flight at the kill, with that one's body:
 *   an unanswered write may be there or not, but whole);
 * - every process of the killed run (found in /proc before the kill) is gone;
 * - no runner job is queued or running; every failed one has a reason;
 * - no studio is left installing or uninstalling;
 * - no temporary or partial file: blobs/.tmp is empty, no `*.tmp`,
 *   `app.next`, `app.old`; a `.part` only where decisions §10 keeps it (the
 *   app folder of a failed install, for the next attempt to resume);
 * - the blob store matches the asset rows both ways (no row without its
 *   file, no blob, thumbnail or library link without its row).
 */

export interface CrashOptions {
  seed: number;
  rounds: number;
  /** Client lanes writing at once (default 6). */
  lanes?: number;
  /** Older ledger entries re-read after each restart besides the round's own (default 200); the last round reads all. */
  sample?: number;
  log?: (line: string) => void;
}

export interface CrashReport {
  seed: number;
  rounds: number;
  /** 2xx writes the clients got. */
  acknowledged: number;
  /** Reads of acknowledged writes after a restart (one per entry per check). */
  checked: number;
  /** Acknowledged writes missing or changed after a restart: must be empty. */
  lost: string[];
  /** Any other broken promise (integrity, leftovers, live processes, stuck jobs): must be empty. */
  problems: string[];
  killedMidExport: number;
  killedMidStudioJob: number;
  /** Processes of a killed run that were alive at its kill (all of them ended by the next start). */
  processesEnded: number;
  ms: number;
}

type Kind = 'kv' | 'record' | 'session' | 'timeline' | 'item' | 'asset' | 'log';

/** One acknowledged thing: what reading it back must give, and a write of it that may have landed unanswered. */
interface Entry {
  kind: Kind;
  path: string;
  /** The etag (kv, record, session), revision (timeline), sha256 (asset) or line count (log). */
  etag: string;
  body: unknown;
  pending: { etag?: string; body: unknown } | null;
  round: number;
}

const COLLECTION = 'notes';
const STUDIO = 'crash';
const CAPS = ['kv', 'records', 'timeline', 'gallery', 'assets', 'jobs'];
const SMALL_TARGET = { sample_rate: 48000, fps: 25, width: 320, height: 180 };

export async function runCrashRounds(o: CrashOptions): Promise<CrashReport> {
  const began = Date.now();
  const log = o.log ?? (() => undefined);
  const dataDir = tempDir('backlot-crash-');
  const report: CrashReport = {
    seed: o.seed, rounds: 0, acknowledged: 0, checked: 0, lost: [], problems: [],
    killedMidExport: 0, killedMidStudioJob: 0, processesEnded: 0, ms: 0,
  };
  const ledger = new Map<string, Entry>();
  const r = rng(o.seed);
  let svc: TestService | null = null;
  try {
    svc = await start(dataDir);
    svc.cli(['studio', 'add', STUDIO, '--quota-records', '1000000', '--quota-kv-bytes', String(2 ** 40)]);
    const token = svc.token(STUDIO, CAPS);
    const cred = svc.cli(['launcher-token']).stdout.trim();
    const stage = join(dataDir, 'studios', STUDIO, 'stage');
    // The export's sequence: a real 3 s clip rendered small, a second or two of ffmpeg.
    const clip = await realAsset(svc.port, token, 'video', 3);
    const seqRes = await api(svc.port, token, 'POST', '/timeline', {
      name: 'crash export', target: SMALL_TARGET, tracks: { V1: [{ asset_id: clip.id, start: 0, in: 0, duration: 3 }] },
    });
    if (seqRes.status !== 201) throw new Error(`sequence: ${seqRes.text}`);
    const sequence = seqRes.json.id as string;
    await new LauncherClient(svc.port, cred).installOk(SKETCHPAD);

    log(`setup ${Date.now() - began} ms`);
    for (let round = 1; round <= o.rounds; round++) {
      const t0 = Date.now();
      const l = new LauncherClient(svc.port, cred);
      const run = { stopped: false, acked: 0 };
      const lanes = Array.from({ length: o.lanes ?? 6 }, (_, lane) =>
        runLane({ port: svc!.port, token, stage, lane, round, r: rng(o.seed * 1000 + round * 16 + lane), ledger, run }).catch((err: Error) => {
          report.problems.push(`round ${round}: lane ${lane}: ${err.message}`);
        }),
      );
      // The round's long-running work, each by chance: an export, a studio install or uninstall, a studio start.
      const exportJob = r.chance(0.5) ? await startExport(svc.port, token, sequence) : null;
      const studioJob = r.chance(0.4) ? await studioOp(l) : null;
      if (r.chance(0.4)) await l.post('/launcher/studios/sketchpad:start');
      await sleep(100 + r.int(1500));
      const pids = descendants(svc.child.pid!);
      const midExport = exportJob !== null && (await jobState(l, exportJob)) === 'running';
      const midStudio = studioJob !== null && (await jobState(l, studioJob)) === 'running';
      svc.child.kill('SIGKILL');
      await svc.stop();
      run.stopped = true;
      await Promise.all(lanes);
      report.acknowledged += run.acked;
      if (midExport) report.killedMidExport++;
      if (midStudio) report.killedMidStudioJob++;
      report.processesEnded += pids.length;

      const t1 = Date.now();
      const integrity = integrityCheck(dataDir);
      if (integrity !== 'ok') report.problems.push(`round ${round}: integrity_check: ${integrity}`);
      svc = await start(dataDir);
      const t2 = Date.now();
      report.rounds = round;
      const last = round === o.rounds;
      await checkProcesses(pids, round, report);
      await checkLedger(svc.port, token, dataDir, ledger, round, last ? Infinity : (o.sample ?? 200), r, report);
      checkJobs(dataDir, round, report, exportJob);
      await checkStudios(new LauncherClient(svc.port, cred), round, report);
      await checkFiles(dataDir, round, report);
      log(`round ${round} (${t1 - t0} ms writing, ${t2 - t1} ms restart, ${Date.now() - t2} ms checks): ${run.acked} acknowledged, ${pids.length} processes killed${midExport ? ', mid-export' : ''}${midStudio ? ', mid-studio-job' : ''}; ${report.checked} checked so far, ${report.lost.length} lost, ${report.problems.length} problems`);
    }
  } finally {
    if (svc) await svc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  report.ms = Date.now() - began;
  return report;
}

function start(dataDir: string): Promise<TestService> {
  return startService({ dataDir, keepDataDir: true, args: ['--read-workers', '1'] });
}

function api(port: number, token: string, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResponse> {
  const h = method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json', ...headers } : headers;
  return send(port, { method, path: `/api/v1${path}`, token, body, headers: h });
}

async function startExport(port: number, token: string, sequence: string): Promise<string | null> {
  const res = await api(port, token, 'POST', `/timeline/${sequence}:export`, {});
  if (res.status !== 202) throw new Error(`export: ${res.status} ${res.text}`);
  return res.json.id as string;
}

/** Installs clipmaker (the heavy example: a step, a download) when it is not installed, else uninstalls it. */
async function studioOp(l: LauncherClient): Promise<string | null> {
  const s = await l.studio('clipmaker');
  const res = s?.installed
    ? await l.post('/launcher/studios/clipmaker:uninstall', { confirm: true })
    : await l.post('/launcher/studios:install', { source: CLIPMAKER });
  return res.status === 202 ? (res.json.id as string) : null;
}

async function jobState(l: LauncherClient, id: string): Promise<string> {
  try {
    return (await l.job(id)).state;
  } catch {
    return 'unknown';
  }
}

interface Lane {
  port: number;
  token: string;
  stage: string;
  lane: number;
  round: number;
  r: Rng;
  ledger: Map<string, Entry>;
  run: { stopped: boolean; acked: number };
}

/** One client writing until the kill: every request either answered (2xx goes in the ledger) or cut by the kill. */
async function runLane(x: Lane): Promise<void> {
  let seq = 0;
  let logJob: string | null = null;
  const mine = (kind: Kind) => [...x.ledger.values()].filter((e) => e.kind === kind && (e.body as any)?.lane === x.lane);
  const pad = () => 'x'.repeat(x.r.int(3000));
  /** Sends a write; `expect` statuses count as acknowledged and go to `onAck`. */
  const write = async (entry: Entry | null, pendingBody: unknown, send: () => Promise<HttpResponse>, onAck: (res: HttpResponse) => void) => {
    if (entry) entry.pending = { body: pendingBody };
    const res = await send();
    if (res.status < 200 || res.status > 299) throw new Error(`unexpected ${res.status}: ${res.text.slice(0, 300)}`);
    if (entry) entry.pending = null;
    x.run.acked++;
    onAck(res);
  };
  const put = (key: string, e: Omit<Entry, 'pending' | 'round'>) => x.ledger.set(key, { ...e, pending: null, round: x.round });
  try {
    while (!x.run.stopped) {
      seq++;
      const op = x.r.int(9);
      const body = { lane: x.lane, round: x.round, seq, pad: pad() };
      if (op === 0) {
        const key = `L${x.lane}-k${x.r.int(8)}`;
        const path = `/kv/crash/${key}`;
        const entry = x.ledger.get(`kv:${path}`) ?? null;
        await write(entry, body, () => api(x.port, x.token, 'PUT', path, body), (res) =>
          put(`kv:${path}`, { kind: 'kv', path, etag: res.json.etag, body }),
        );
      } else if (op === 1) {
        const existing = x.r.chance(0.5) ? x.r.pick([null, ...mine('record')]) : null;
        if (existing) {
          const next = { ...(existing.body as object), seq, round: x.round };
          await write(existing, next, () => api(x.port, x.token, 'PATCH', existing.path, { seq, round: x.round }, { 'If-Match': `"${existing.etag}"` }), (res) =>
            put(`record:${existing.path}`, { kind: 'record', path: existing.path, etag: res.json.etag, body: next }),
          );
        } else {
          await write(null, body, () => api(x.port, x.token, 'POST', `/records/${COLLECTION}`, body), (res) => {
            const path = `/records/${COLLECTION}/${res.json.id}`;
            put(`record:${path}`, { kind: 'record', path, etag: res.json.etag, body });
          });
        }
      } else if (op === 2) {
        const existing = x.r.chance(0.5) ? x.r.pick([null, ...mine('session')]) : null;
        if (existing) {
          const state = { lane: x.lane, seq };
          await write(existing, state, () => api(x.port, x.token, 'PATCH', existing.path, { state }, { 'If-Match': `"${existing.etag}"` }), (res) =>
            put(`session:${existing.path}`, { kind: 'session', path: existing.path, etag: res.json.etag, body: res.json.state }),
          );
        } else {
          const state = { lane: x.lane, seq };
          await write(null, state, () => api(x.port, x.token, 'POST', '/sessions', { name: `L${x.lane}-${x.round}-${seq}`, state }), (res) => {
            const path = `/sessions/${res.json.id}`;
            put(`session:${path}`, { kind: 'session', path, etag: res.json.etag, body: res.json.state });
          });
        }
      } else if (op === 3) {
        const existing = x.r.chance(0.6) ? x.r.pick([null, ...mine('timeline')]) : null;
        const name = `L${x.lane} r${x.round} s${seq}`;
        if (existing) {
          await write(existing, { lane: x.lane, name }, () => api(x.port, x.token, 'PATCH', existing.path, { name }, { 'If-Match': `"${existing.etag}"` }), (res) =>
            put(`timeline:${existing.path}`, { kind: 'timeline', path: existing.path, etag: String(res.json.revision), body: { lane: x.lane, name } }),
          );
        } else {
          await write(null, null, () => api(x.port, x.token, 'POST', '/timeline', { name, target: SMALL_TARGET }), (res) => {
            const path = `/timeline/${res.json.id}`;
            put(`timeline:${path}`, { kind: 'timeline', path, etag: String(res.json.revision), body: { lane: x.lane, name } });
          });
        }
      } else if (op === 4 || op === 5) {
        // An upload (some images, whose thumbnails are then made) or an adoption from the stage folder.
        const image = op === 4 && x.r.chance(0.3);
        const bytes = image ? await makePng(16 + x.r.int(64), 16, x.r.int(1e9)) : randomBytes(1024 + x.r.int(64 * 1024));
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        let path = '';
        const ack = (res: HttpResponse) => {
          path = `/assets/${res.json.id}`;
          put(`asset:${path}`, { kind: 'asset', path, etag: sha256, body: { lane: x.lane } });
        };
        if (op === 4) {
          await write(null, null, async () => asHttp(await upload(x.port, x.token, bytes, image ? 'kind=image' : 'kind=other', image ? 'image/png' : 'application/octet-stream')), ack);
          // The thumbnail is made on its first read: a temp file renamed into thumbs/.
          if (image) await rawRequest(x.port, { path: `/api/v1${path}/thumb`, token: x.token });
        } else {
          const file = join(x.stage, `L${x.lane}-${x.round}-${seq}.bin`);
          writeFileSync(file, bytes);
          await write(null, null, () => api(x.port, x.token, 'POST', '/assets:adopt', { path: file, kind: 'other' }), ack);
        }
      } else if (op === 6) {
        const assets = mine('asset');
        if (assets.length === 0) continue;
        const existing = x.r.chance(0.4) ? x.r.pick([null, ...mine('item')]) : null;
        const title = `L${x.lane} r${x.round} s${seq}`;
        if (existing) {
          await write(existing, { lane: x.lane, title }, () => api(x.port, x.token, 'PATCH', existing.path, { title }), (res) =>
            put(`item:${existing.path}`, { kind: 'item', path: existing.path, etag: res.json.updated_at, body: { lane: x.lane, title } }),
          );
        } else {
          const asset = x.r.pick(assets).path.slice('/assets/'.length);
          await write(null, null, () => api(x.port, x.token, 'POST', '/gallery/items', { asset_id: asset, title, params: { seq } }), (res) => {
            const path = `/gallery/items/${res.json.id}`;
            put(`item:${path}`, { kind: 'item', path, etag: res.json.updated_at, body: { lane: x.lane, title } });
          });
        }
      } else {
        // Job log lines: one task job per lane and round; each 204 adds lines that must all be in its log.
        if (logJob === null) {
          const res = await api(x.port, x.token, 'POST', '/jobs', { title: `lane ${x.lane} round ${x.round}` });
          if (res.status !== 201) throw new Error(`job create: ${res.status} ${res.text}`);
          logJob = res.json.id as string;
          put(`log:${logJob}`, { kind: 'log', path: `/jobs/${logJob}`, etag: '0', body: { lane: x.lane, lines: [] } });
        }
        const entry = x.ledger.get(`log:${logJob}`)!;
        const lines = Array.from({ length: 1 + x.r.int(5) }, (_, i) => `L${x.lane} s${seq} #${i} ${pad().slice(0, 200)}`);
        const all = [...((entry.body as any).lines as string[]), ...lines];
        await write(entry, { lane: x.lane, lines: all }, () => api(x.port, x.token, 'POST', `/jobs/${logJob}/logs`, { lines }), () =>
          put(`log:${logJob}`, { kind: 'log', path: entry.path, etag: String(all.length), body: { lane: x.lane, lines: all } }),
        );
      }
    }
  } catch (err) {
    // The kill cuts the lane's request short; anything else before it is a broken promise of its own.
    if (!x.run.stopped && !isCut(err)) throw err;
  }
}

function isCut(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === 'ECONNRESET' || code === 'ECONNREFUSED' || code === 'EPIPE' || /socket hang up/.test(String(err));
}

function asHttp(r: { status: number; headers: any; body: Buffer; json: any }): HttpResponse {
  return { status: r.status, headers: r.headers, text: r.body.toString(), json: r.json };
}

function integrityCheck(dataDir: string): string {
  const db = new Database(join(dataDir, 'backlot.db'));
  try {
    return (db.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

async function checkProcesses(pids: Proc[], round: number, report: CrashReport): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (pids.some(stillAlive) && Date.now() < deadline) await sleep(50);
  for (const p of pids.filter(stillAlive)) report.problems.push(`round ${round}: ${p.comm} (pid ${p.pid}, group ${p.pgid}) of the killed run is still alive after the restart`);
}

/** Reads back the round's entries and a sample of older ones (all of them with `sample` Infinity). */
async function checkLedger(port: number, token: string, dataDir: string, ledger: Map<string, Entry>, round: number, sample: number, r: Rng, report: CrashReport): Promise<void> {
  const all = [...ledger.entries()];
  const own = all.filter(([, e]) => e.round === round || e.pending !== null);
  const older = all.filter(([, e]) => e.round !== round && e.pending === null);
  const picked = sample >= older.length ? older : Array.from({ length: sample }, () => older[r.int(older.length)]!);
  for (const [key, e] of [...own, ...picked]) {
    const verdict = await readBack(port, token, dataDir, e);
    report.checked++;
    if (verdict === 'acked') {
      e.pending = null;
    } else if (verdict === 'pending') {
      // The unanswered write landed whole: it is the state from now on.
      e.pending = null;
    } else {
      report.lost.push(`round ${round}: ${key}: ${verdict}`);
      ledger.delete(key);
    }
  }
}

/** 'acked' (as acknowledged), 'pending' (the unanswered later write, whole; the entry is updated), else what is wrong. */
async function readBack(port: number, token: string, dataDir: string, e: Entry): Promise<string> {
  const same = (a: unknown, b: unknown) => canon(a) === canon(b);
  if (e.kind === 'asset') {
    const res = await rawRequest(port, { path: `/api/v1${e.path}`, token });
    if (res.status !== 200) return `GET ${res.status}`;
    const sha = createHash('sha256').update(res.body).digest('hex');
    return res.headers.etag === `"${e.etag}"` && sha === e.etag ? 'acked' : `etag ${res.headers.etag}, bytes ${sha}`;
  }
  if (e.kind === 'log') {
    const file = join(dataDir, 'jobs', `${e.path.slice('/jobs/'.length)}.log`);
    const texts: string[] = [];
    for (const line of (existsSync(file) ? readFileSync(file, 'utf8') : '').split('\n')) {
      if (line === '') continue;
      let rec: any;
      try {
        rec = JSON.parse(line);
      } catch {
        return `a torn record in the log: ${line.slice(0, 80)}`;
      }
      if (typeof rec.text === 'string') texts.push(rec.text);
    }
    const acked = (e.body as any).lines as string[];
    if (!same(texts.slice(0, acked.length), acked)) return `log holds ${texts.length} lines, ${acked.length} acknowledged`;
    if (texts.length === acked.length) return 'acked';
    const pending = (e.pending?.body as any)?.lines as string[] | undefined;
    if (pending && same(texts, pending)) {
      e.body = e.pending!.body;
      e.etag = String(pending.length);
      return 'pending';
    }
    return `log holds ${texts.length - acked.length} lines past the acknowledged ones that no write sent whole`;
  }
  const res = await api(port, token, 'GET', e.path);
  if (res.status !== 200) return `GET ${res.status}: ${res.text.slice(0, 200)}`;
  const j = res.json;
  const now =
    e.kind === 'kv' ? { etag: j.etag, body: j.value }
    : e.kind === 'record' ? { etag: j.etag, body: Object.fromEntries(Object.entries(j).filter(([k]) => !['id', 'created_at', 'updated_at', 'etag'].includes(k))) }
    : e.kind === 'session' ? { etag: j.etag, body: j.state }
    : e.kind === 'timeline' ? { etag: String(j.revision), body: { lane: (e.body as any).lane, name: j.name } }
    : { etag: j.updated_at, body: { lane: (e.body as any).lane, title: j.title } };
  if (e.kind !== 'item' && res.headers.etag !== `"${now.etag}"`) return `ETag header ${res.headers.etag} but body etag ${now.etag}`;
  if (now.etag === e.etag && same(now.body, e.body)) return 'acked';
  if (e.pending && same(now.body, e.pending.body)) {
    e.etag = now.etag;
    e.body = now.body;
    return 'pending';
  }
  return `etag ${now.etag} (acknowledged ${e.etag}), body ${JSON.stringify(now.body).slice(0, 120)}`;
}

/** JSON with object keys sorted, so that key order never decides equality. */
function canon(v: unknown): string {
  return JSON.stringify(v, (_k, value) =>
    value && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1))) : value,
  );
}

/** Runner jobs (every kind but task): none queued or running, each failed one with a reason; the round's export ended. */
function checkJobs(dataDir: string, round: number, report: CrashReport, exportJob: string | null): void {
  const db = new Database(join(dataDir, 'backlot.db'), { readonly: true });
  try {
    const rows = db.prepare("SELECT id, kind, state, last_error FROM jobs WHERE kind <> 'task'").all() as { id: string; kind: string; state: string; last_error: string | null }[];
    for (const j of rows) {
      if (j.state === 'queued' || j.state === 'running') report.problems.push(`round ${round}: ${j.kind} job ${j.id} is still ${j.state} after the restart`);
      if (j.state === 'failed' && !j.last_error) report.problems.push(`round ${round}: ${j.kind} job ${j.id} failed without a reason`);
    }
    if (exportJob && !rows.some((j) => j.id === exportJob)) report.problems.push(`round ${round}: export job ${exportJob} is gone`);
  } finally {
    db.close();
  }
}

async function checkStudios(l: LauncherClient, round: number, report: CrashReport): Promise<void> {
  const res = await l.get('/launcher/studios?limit=100');
  for (const s of res.json.items as any[]) {
    if (['installing', 'uninstalling', 'starting', 'running', 'stopping'].includes(s.state)) {
      report.problems.push(`round ${round}: studio ${s.id} is ${s.state} after the restart`);
    }
  }
}

/** Leftover files and the blob store against the asset rows; polled for up to 15 s (a recovery may finish after listening). */
async function checkFiles(dataDir: string, round: number, report: CrashReport): Promise<void> {
  const deadline = Date.now() + 15_000;
  let found = fileProblems(dataDir);
  while (found.length > 0 && Date.now() < deadline) {
    await sleep(200);
    found = fileProblems(dataDir);
  }
  for (const p of found) report.problems.push(`round ${round}: ${p}`);
}

export function fileProblems(dataDir: string): string[] {
  const out: string[] = [];
  const db = new Database(join(dataDir, 'backlot.db'), { readonly: true });
  let live: { sha256: string; ext: string }[];
  let links: Set<string>;
  let failedApps: Set<string>;
  try {
    live = db.prepare('SELECT sha256, ext FROM assets WHERE reclaimed_at IS NULL').all() as { sha256: string; ext: string }[];
    links = new Set(
      (db.prepare('SELECT a.library_path AS p FROM asset_access a JOIN assets s ON s.id = a.asset_id WHERE a.library_path IS NOT NULL AND s.reclaimed_at IS NULL').all() as { p: string }[]).map((row) => row.p),
    );
    failedApps = new Set((db.prepare("SELECT app_dir FROM installed_studios WHERE state = 'failed'").all() as { app_dir: string }[]).map((row) => row.app_dir));
  } finally {
    db.close();
  }
  const names = new Set(live.map((a) => a.sha256 + a.ext));
  const shas = new Set(live.map((a) => a.sha256));
  const blobs = join(dataDir, 'blobs');
  for (const name of readdirSync(blobs)) {
    if (name === '.tmp') continue;
    if (!names.has(name)) out.push(`blobs/${name} has no asset row`);
  }
  for (const name of names) if (!existsSync(join(blobs, name))) out.push(`the asset row of ${name} has no file`);
  for (const name of readdirSync(join(blobs, '.tmp'))) out.push(`blobs/.tmp/${name} left over`);
  for (const name of readdirSync(join(dataDir, 'thumbs'))) if (!shas.has(name.slice(0, 64))) out.push(`thumbs/${name} has no asset row`);
  for (const file of walk(join(dataDir, 'library'))) if (!links.has(file)) out.push(`${relative(dataDir, file)}: a library link no asset row names`);
  for (const file of links) if (!existsSync(file)) out.push(`${relative(dataDir, file)}: a library link of a row is missing`);
  for (const file of walk(dataDir, true)) {
    const name = file.slice(file.lastIndexOf('/') + 1);
    const rel = relative(dataDir, file);
    if ((/\.tmp$/.test(name) && rel !== 'blobs/.tmp') || name === 'app.next' || name === 'app.old') out.push(`${rel}: a temporary file or folder left over`);
    if (/\.part$/.test(name) && ![...failedApps].some((app) => file.startsWith(`${app}/`))) out.push(`${rel}: a partial download outside a failed install's app folder`);
  }
  return out;
}

/** Files under `dir` (with `dirs`, folders too); missing folder: nothing. */
function walk(dir: string, dirs = false): string[] {
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) {
      if (dirs) out.push(path);
      out.push(...walk(path, dirs));
    } else out.push(path);
  }
  return out;
}

