import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { send, type HttpResponse } from './http';
import { ROOT, startService, tempDir, type TestService } from './service';
import { openSse, type SseMessage } from './sse';

/**
 * The launcher's side of the service for black-box tests: a client
 * holding a launcher credential (minted with `bin/backlot launcher-token`),
 * waits on jobs and studio states, and a builder of small fixture studios in
 * temp folders with a tiny node server and a step tool.
 */

export const SKETCHPAD = join(ROOT, 'examples', 'studios', 'sketchpad');
export const CLIPMAKER = join(ROOT, 'examples', 'studios', 'clipmaker');
export const FINISHED = ['succeeded', 'failed', 'cancelled'];

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class LauncherClient {
  constructor(
    readonly port: number,
    readonly cred: string,
  ) {}

  /** A call under /api/v1 with the launcher credential (or `token`, null for none). */
  call(method: string, path: string, body?: unknown, token: string | null = this.cred, headers?: Record<string, string>): Promise<HttpResponse> {
    return send(this.port, { method, path: `/api/v1${path}`, token, body, headers });
  }
  get(path: string): Promise<HttpResponse> {
    return this.call('GET', path);
  }
  post(path: string, body?: unknown): Promise<HttpResponse> {
    return this.call('POST', path, body);
  }

  async job(id: string): Promise<any> {
    const r = await this.get(`/launcher/jobs/${id}`);
    assert.equal(r.status, 200, r.text);
    return r.json;
  }

  async waitJob(id: string, ms = 30_000): Promise<any> {
    const deadline = Date.now() + ms;
    for (;;) {
      const job = await this.job(id);
      if (FINISHED.includes(job.state)) return job;
      if (Date.now() > deadline) throw new Error(`job ${id} did not finish: ${JSON.stringify(job)}`);
      await sleep(50);
    }
  }

  /** The studio, or null (404). */
  async studio(id: string): Promise<any> {
    const r = await this.get(`/launcher/studios/${id}`);
    if (r.status === 404) return null;
    assert.equal(r.status, 200, r.text);
    return r.json;
  }

  /** Waits until the studio is in one of `states`; fails naming the last state seen. */
  async waitState(id: string, states: string | string[], ms = 30_000): Promise<any> {
    const want = Array.isArray(states) ? states : [states];
    const deadline = Date.now() + ms;
    let s: any;
    for (;;) {
      s = await this.studio(id);
      if (s && want.includes(s.state)) return s;
      if (Date.now() > deadline) throw new Error(`studio ${id} not ${want.join('/')}: ${JSON.stringify(s)}`);
      await sleep(50);
    }
  }

  /** Jobs of a studio, newest first. */
  async jobsOf(studio: string): Promise<any[]> {
    const r = await this.get(`/launcher/jobs?studio=${studio}&limit=100`);
    assert.equal(r.status, 200, r.text);
    return r.json.items;
  }

  /** POST :install (or :link) and wait until the studio is no longer installing. */
  async install(source: string, link = false): Promise<{ res: HttpResponse; studio: any }> {
    const res = await this.post(`/launcher/studios:${link ? 'link' : 'install'}`, { source });
    if (res.status !== 202) return { res, studio: null };
    const studio = await this.waitState(res.json.studio_id, ['installed', 'failed']);
    return { res, studio };
  }

  /** Installs and asserts it ended `installed`. */
  async installOk(source: string, link = false): Promise<any> {
    const { res, studio } = await this.install(source, link);
    assert.equal(res.status, 202, res.text);
    assert.equal(studio.state, 'installed', JSON.stringify(studio));
    return studio;
  }

  /** Starts and waits for `running`. */
  async startOk(id: string): Promise<any> {
    const r = await this.post(`/launcher/studios/${id}:start`);
    assert.equal(r.status, 200, r.text);
    return this.waitState(id, 'running');
  }

  async stopOk(id: string): Promise<void> {
    const r = await this.post(`/launcher/studios/${id}:stop`);
    assert.equal(r.status, 204, r.text);
  }

  async uninstall(id: string, purge = false): Promise<any> {
    const r = await this.post(`/launcher/studios/${id}:uninstall`, { confirm: true, purge });
    assert.equal(r.status, 202, r.text);
    const job = await this.waitJob(r.json.id);
    assert.equal(job.state, 'succeeded', JSON.stringify(job));
    return job;
  }

  /** A finished job's whole log (`step` and `line` events up to `end`). */
  async log(jobId: string): Promise<SseMessage[]> {
    const sse = await openSse(this.port, `/launcher/jobs/${jobId}/logs`, this.cred);
    try {
      assert.equal(sse.status, 200, sse.text());
      await sse.waitFor((m) => m.event === 'end', 1, 30_000);
      return sse.events;
    } finally {
      sse.close();
    }
  }

  /** The text of a log's `line` events. */
  async logText(jobId: string): Promise<string[]> {
    return (await this.log(jobId)).filter((m) => m.event === 'line').map((m) => JSON.parse(m.data).text as string);
  }

  /** A studio's own output so far (never ends: waits for a line matching `until`). */
  async studioLog(id: string, until: (text: string) => boolean, ms = 15_000): Promise<string[]> {
    const sse = await openSse(this.port, `/launcher/studios/${id}/logs`, this.cred);
    try {
      assert.equal(sse.status, 200, sse.text());
      await sse.waitFor((m) => m.event === 'line' && until(JSON.parse(m.data).text), 1, ms);
      return sse.events.filter((m) => m.event === 'line').map((m) => JSON.parse(m.data).text as string);
    } finally {
      sse.close();
    }
  }
}

export interface LauncherService {
  svc: TestService;
  l: LauncherClient;
}

export async function startLauncher(options: Parameters<typeof startService>[0] = {}): Promise<LauncherService> {
  const svc = await startService(options);
  const r = svc.cli(['launcher-token']);
  assert.equal(r.code, 0, r.stderr);
  return { svc, l: new LauncherClient(svc.port, r.stdout.trim()) };
}

/**
 * The fixture studio's server: `--port N`; GET / answers "<id> <version>"
 * (read from backlot.json at start), /env the environment as JSON, /pid its
 * pid, /exit exits with code 3. Manifest env FIXTURE_MODE (words joined by
 * commas): `child` spawns a long-lived child in its group first, `never`
 * answers 503 always (never ready). Prints "server pid N" (and "child pid N").
 */
const SERVER_JS = `'use strict';
const http = require('node:http');
const { spawn } = require('node:child_process');
const m = JSON.parse(require('node:fs').readFileSync(__dirname + '/backlot.json', 'utf8'));
const port = Number(process.argv[process.argv.indexOf('--port') + 1]);
const mode = process.env.FIXTURE_MODE || '';
console.log('server pid ' + process.pid);
if (mode.includes('child')) {
  const c = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' });
  console.log('child pid ' + c.pid);
}
http.createServer((req, res) => {
  if (mode.includes('never')) { res.writeHead(503); return res.end('not yet'); }
  if (req.url === '/exit') { console.log('exiting on purpose'); res.end('bye'); return setTimeout(() => process.exit(3), 50); }
  if (req.url === '/env') { res.setHeader('Content-Type', 'application/json'); return res.end(JSON.stringify(process.env)); }
  if (req.url === '/pid') return res.end(String(process.pid));
  res.end(m.id + ' ' + m.version + ' ' + (process.env.FIXTURE_TAG || ''));
}).listen(port, '127.0.0.1', () => console.log('listening on ' + port));
`;

/**
 * The steps' tool: "node tool.js print A B" prints each word on a line;
 * "env" prints the environment as one JSON line; "fail N" prints and exits N;
 * "touch FILE" creates FILE (relative to the working folder);
 * "sleep MS" spawns a sleeping child, prints "pids LEADER CHILD" and a marker
 * file "partial.txt", then sleeps.
 */
const TOOL_JS = `'use strict';
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const [cmd, ...args] = process.argv.slice(2);
if (cmd === 'print') for (const a of args) console.log(a);
else if (cmd === 'env') console.log('ENV ' + JSON.stringify(process.env));
else if (cmd === 'fail') { console.log('about to fail'); console.error('failing on stderr'); process.exit(Number(args[0])); }
else if (cmd === 'touch') fs.writeFileSync(args[0], 'ran');
else if (cmd === 'sleep') {
  const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, ' + Number(args[0]) + ')'], { stdio: 'ignore' });
  fs.writeFileSync('partial.txt', 'half made');
  console.log('pids ' + process.pid + ' ' + c.pid);
  setTimeout(() => {}, Number(args[0]));
} else { console.error('unknown ' + cmd); process.exit(2); }
`;

let fixtureCount = 0;
/** Temp folders of fixtures, removed when the test process exits. */
const fixtureDirs: string[] = [];
process.once('exit', () => {
  for (const dir of fixtureDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Writes a studio folder in a fresh temp dir: backlot.json (defaults below,
 * overridden member by member; `manifest` may also be raw text), server.js,
 * tool.js and `files`. Returns the folder.
 */
export function fixture(manifest: Record<string, unknown> | string, files: Record<string, string | Buffer> = {}, parent?: string): string {
  const root = parent ?? tempDir('backlot-fixture-');
  if (!parent) fixtureDirs.push(root);
  const dir = join(root, `studio-${++fixtureCount}`);
  mkdirSync(dir, { recursive: true });
  const text =
    typeof manifest === 'string'
      ? manifest
      : JSON.stringify({ name: 'Fixture', version: '1.0.0', capabilities: ['kv'], start: { run: 'node server.js --port {port}' }, ...manifest }, null, 2);
  const all: Record<string, string | Buffer> = { 'backlot.json': text, 'server.js': SERVER_JS, 'tool.js': TOOL_JS, ...files };
  for (const [name, content] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return dir;
}

/** Rewrites a fixture's manifest (the same defaults as `fixture`). */
export function rewriteManifest(dir: string, manifest: Record<string, unknown>): void {
  writeFileSync(
    join(dir, 'backlot.json'),
    JSON.stringify({ name: 'Fixture', version: '1.0.0', capabilities: ['kv'], start: { run: 'node server.js --port {port}' }, ...manifest }, null, 2),
  );
}

/** GET on a running studio's own port (not through the proxy). */
export function studioGet(port: number, path: string): Promise<HttpResponse> {
  return send(port, { path });
}

/** Pids printed as "<label> pid N" or "pids A B" in some lines. */
export function pidsIn(lines: string[]): number[] {
  const out: number[] = [];
  for (const line of lines) {
    const m = /^(?:\w+ pid (\d+)|pids (\d+) (\d+))$/.exec(line.trim());
    if (m) out.push(...[m[1], m[2], m[3]].filter(Boolean).map(Number));
  }
  return out;
}
