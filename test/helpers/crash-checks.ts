import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { rawRequest } from './assets';
import { stillAlive, type Proc } from './crash-procs';
import { send, type HttpResponse } from './http';
import { sleep, type LauncherClient } from './launcher';
import type { Rng } from './prng';

/** The checks after each restart of the crash harness (test/helpers/crash.ts says what each must show). */

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

export type Kind = 'kv' | 'record' | 'session' | 'timeline' | 'item' | 'asset' | 'log';

/** One acknowledged thing: what reading it back must give, and a write of it that may have landed unanswered. */
export interface Entry {
  kind: Kind;
  path: string;
  /** The etag (kv, record, session), revision (timeline), sha256 (asset) or line count (log). */
  etag: string;
  body: unknown;
  pending: { etag?: string; body: unknown } | null;
  round: number;
}

export function api(port: number, token: string, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResponse> {
  const h = method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json', ...headers } : headers;
  return send(port, { method, path: `/api/v1${path}`, token, body, headers: h });
}

export function integrityCheck(dataDir: string): string {
  const db = new Database(join(dataDir, 'backlot.db'));
  try {
    return (db.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check).join('; ');
  } finally {
    db.close();
  }
}

export async function checkProcesses(pids: Proc[], round: number, report: CrashReport): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (pids.some(stillAlive) && Date.now() < deadline) await sleep(50);
  for (const p of pids.filter(stillAlive)) report.problems.push(`round ${round}: ${p.comm} (pid ${p.pid}, group ${p.pgid}) of the killed run is still alive after the restart`);
}

/** Reads back the round's entries and a sample of older ones (all of them with `sample` Infinity). */
export async function checkLedger(port: number, token: string, dataDir: string, ledger: Map<string, Entry>, round: number, sample: number, r: Rng, report: CrashReport): Promise<void> {
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
export function checkJobs(dataDir: string, round: number, report: CrashReport, exportJob: string | null): void {
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

export async function checkStudios(l: LauncherClient, round: number, report: CrashReport): Promise<void> {
  const res = await l.get('/launcher/studios?limit=100');
  for (const s of res.json.items as any[]) {
    if (['installing', 'uninstalling', 'starting', 'running', 'stopping'].includes(s.state)) {
      report.problems.push(`round ${round}: studio ${s.id} is ${s.state} after the restart`);
    }
  }
}

/** Leftover files and the blob store against the asset rows; polled for up to 15 s (a recovery may finish after listening). */
export async function checkFiles(dataDir: string, round: number, report: CrashReport): Promise<void> {
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

