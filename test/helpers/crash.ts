import { createHash, randomBytes } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makePng, rawRequest, upload } from './assets';
import {
  api, checkFiles, checkJobs, checkLedger, checkProcesses, checkStudios, integrityCheck, type CrashReport, type Entry, type Kind,
} from './crash-checks';
import { descendants } from './crash-procs';
import type { HttpResponse } from './http';
import { CLIPMAKER, LauncherClient, SKETCHPAD, sleep } from './launcher';
import { rng, type Rng } from './prng';
import { startService, tempDir, type TestService } from './service';
import { realAsset } from './timeline';

/**
 * The crash harness (docs/reliability.md "Crashes and durability"), shared by test/crash.test.ts (a few
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
 *   `app.next`, `app.old`; a `.part` only where an install keeps it (the
 *   app folder of a failed install, for the next attempt to resume);
 * - the blob store matches the asset rows both ways (no row without its
 *   file, no blob, thumbnail or library link without its row).
 */

export type { CrashReport } from './crash-checks';

export interface CrashOptions {
  seed: number;
  rounds: number;
  /** Client lanes writing at once (default 6). */
  lanes?: number;
  /** Older ledger entries re-read after each restart besides the round's own (default 200); the last round reads all. */
  sample?: number;
  log?: (line: string) => void;
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
