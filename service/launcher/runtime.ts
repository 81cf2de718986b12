import { request } from 'node:http';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { hashToken } from '../core/auth';
import { ApiError } from '../core/errors';
import { endGroup, startGroup, type GroupChild } from '../core/processes';
import type { ProcessLedger } from '../db/process-ledger';
import { withOwnNode, type JobsDomain } from '../jobs';
import type { StudiosStore } from '../studios';
import { runEnv } from './env';
import { commandArgv } from './manifest';
import type { InstalledStudio, LauncherStore } from './store';
import { checkDownloads } from './verify';

/**
 * Running studios (docs/studios.md, "Starting and `ready_path`"): the start
 * command as its own process group (core/processes.ts, the same start and
 * end as every child of the service) with a runtime token minted at start
 * and revoked at stop, `starting` until `ready_path` answers, `running`, and `failed` when the
 * process exits on its own or is not ready in time. Its output goes to the
 * studio's log. Everything a start or stop decides is written to the store
 * first, then announced as a `studio` event on the launcher's channel.
 */

/** A start log grows across runs until this, then starts afresh. */
const STUDIO_LOG_KEEP_BYTES = 8 * 1024 * 1024;
const READY_POLL_MS = 150;

export interface RuntimeDeps {
  store: LauncherStore;
  studios: StudiosStore;
  jobs: JobsDomain;
  ledger: ProcessLedger;
  dataDir: string;
  studioDirs(id: string): { stage_dir: string; data_dir: string };
  servicePort(): number;
  /** Announces a studio's new state (the launcher's `studio` event). */
  announce(s: InstalledStudio): void;
  readyTimeoutMs: number;
  killGraceMs: number;
}

interface Live {
  child: GroupChild;
  pgid: number;
  token: string;
  port: number;
  /** Set by stop(): the exit is expected. */
  stopping: boolean;
  /** Resolves once no process of the group is alive. */
  gone: Promise<void>;
}

export function createRuntime(d: RuntimeDeps) {
  const live = new Map<string, Live>();
  const log = (id: string) => d.jobs.outputLog(`studio-${id}`);

  /** Ports in use by the studios this service runs (and its own). */
  const portsInUse = () => new Set([d.servicePort(), ...[...live.values()].map((l) => l.port)]);

  async function start(id: string): Promise<InstalledStudio> {
    let before: Pick<InstalledStudio, 'state' | 'last_error'> | null = null;
    let reserved = d.store.change(id, (s) => {
      before = { state: s.state, last_error: s.last_error };
      if (!s.installed || s.state === 'installing' || s.state === 'uninstalling') {
        throw new ApiError(409, 'not_installed', `The studio "${id}" is not installed (state ${s.state}); install it first.`, { state: s.state });
      }
      if (s.state === 'starting' || s.state === 'running' || s.state === 'stopping') {
        throw new ApiError(409, 'already_running', `The studio "${id}" is already ${s.state}.`, { state: s.state });
      }
      if (s.manifest.heavy) {
        const other = d.store.all().find((o) => o.id !== id && o.manifest.heavy && (o.state === 'starting' || o.state === 'running' || o.state === 'stopping'));
        if (other) {
          throw new ApiError(409, 'heavy_conflict', `"${other.id}" is a heavy studio and is running; stop it first (one heavy studio at a time).`, { heavy: other.id });
        }
      }
      return { ...s, state: 'starting', last_error: null, port: null, token_hash: null };
    });
    // Announced once its port is known (a refusal below announces nothing: nothing changed).
    let port: number;
    try {
      port = await choosePort(reserved);
      const stale = await checkDownloads(reserved);
      if (stale.length > 0) {
        throw new ApiError(
          409,
          'not_fetched',
          `The studio's download ${stale.map((s) => `"${s.to}"`).join(', ')} is missing or changed since it was verified; update or reinstall the studio.`,
          { downloads: stale.map((s) => s.to) },
        );
      }
    } catch (err) {
      // A refused start leaves the studio as it was (a failed studio stays failed, with its error).
      d.store.change(id, (s) => ({ ...s, ...before! }));
      throw err;
    }
    reserved = d.store.change(id, (s) => ({ ...s, port }));
    d.announce(reserved);
    spawnStudio(reserved, port);
    return d.store.require(id);
  }

  async function choosePort(s: InstalledStudio): Promise<number> {
    const taken = portsInUse();
    const fixed = s.manifest.start.port;
    if (fixed !== undefined) {
      if (taken.has(fixed) || !(await portFree(fixed))) {
        throw new ApiError(409, 'port_conflict', `Port ${fixed}, which the studio's manifest asks for, is in use.`, { port: fixed });
      }
      return fixed;
    }
    for (let i = 0; i < 20; i++) {
      const p = await freePort();
      if (!taken.has(p)) return p;
    }
    throw new ApiError(409, 'port_conflict', 'No free port was found for the studio.', { port: null });
  }

  function spawnStudio(s: InstalledStudio, port: number): void {
    const token = d.studios.createToken(s.id, s.manifest.capabilities);
    const dirs = d.studioDirs(s.id);
    const out = log(s.id);
    out.restartIfOver(STUDIO_LOG_KEEP_BYTES);
    const argv = commandArgv(s.manifest.start.run, port);
    out.step(`start ${s.version} on port ${port}: ${argv.join(' ')}`, out.stats().lines);
    d.store.change(s.id, (row) => ({ ...row, token_hash: hashToken(token) }));
    // A program word `node` is Backlot's own Node (docs/studios.md, "The runtime a studio gets").
    const run = withOwnNode(
      argv,
      runEnv(s.manifest.env, {
        port,
        baseUrl: `http://127.0.0.1:${d.servicePort()}/api/v1`,
        token,
        studioId: s.id,
        stageDir: dirs.stage_dir,
        dataDir: dirs.data_dir,
      }),
    );
    let child: GroupChild;
    try {
      child = startGroup(run.argv[0]!, run.argv.slice(1), { cwd: s.app_dir, env: run.env });
    } catch (err) {
      fail(s.id, `The start command could not run: ${(err as Error).message}`, token);
      return;
    }
    const pgid = child.pid;
    if (pgid === undefined) {
      child.once('error', (err) => fail(s.id, `The start command could not run: ${err.message}`, token));
      return;
    }
    d.ledger.record(pgid, `studio:${s.id}`);
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        try {
          out.lines([line], null);
        } catch {
          // A failing log write (disk full) must not take the service down.
        }
      });
    }
    let exited!: () => void;
    const exitedP = new Promise<void>((r) => (exited = r));
    const entry: Live = { child, pgid, token, port, stopping: false, gone: exitedP.then(() => endGroup(pgid, 1000)).then(() => d.ledger.forget(pgid)) };
    live.set(s.id, entry);
    child.once('exit', (code, signal) => {
      exited();
      if (entry.stopping) return;
      void entry.gone.then(() => {
        live.delete(s.id);
        const how = signal ? `was ended by ${signal}` : `exited with code ${code}`;
        const current = d.store.get(s.id);
        const when = current?.state === 'starting' ? 'before it was ready' : 'while running';
        out.lines([`[backlot] the studio ${how} ${when}`], null);
        fail(s.id, `The studio's process ${how} ${when}; see its log.`, token);
      });
    });
    void waitReady(s, entry);
  }

  async function waitReady(s: InstalledStudio, entry: Live): Promise<void> {
    const path = s.manifest.start.ready_path ?? '/';
    const deadline = Date.now() + d.readyTimeoutMs;
    while (Date.now() < deadline) {
      if (live.get(s.id) !== entry || entry.stopping || entry.child.exitCode !== null || entry.child.signalCode !== null) return;
      if (await answers(entry.port, path, `${s.id}.localhost:${d.servicePort()}`)) {
        if (live.get(s.id) !== entry || entry.stopping) return;
        const row = d.store.change(s.id, (r) => (r.state === 'starting' ? { ...r, state: 'running' } : r));
        d.announce(row);
        log(s.id).lines([`[backlot] ready: ${path} answered on port ${entry.port}`], null);
        return;
      }
      await sleep(READY_POLL_MS);
    }
    if (live.get(s.id) !== entry || entry.stopping) return;
    entry.stopping = true;
    log(s.id).lines([`[backlot] not ready after ${Math.round(d.readyTimeoutMs / 1000)} s: stopping it`], null);
    await endGroup(entry.pgid, d.killGraceMs);
    await entry.gone;
    live.delete(s.id);
    fail(s.id, `The studio did not answer on ${path} within ${Math.round(d.readyTimeoutMs / 1000)} s; see its log.`, entry.token);
  }

  function fail(id: string, message: string, token: string): void {
    d.studios.revokeTokenHash(hashToken(token));
    const row = d.store.get(id);
    if (!row) return;
    d.announce(d.store.change(id, (r) => ({ ...r, state: 'failed', last_error: message, port: null, token_hash: null })));
  }

  /** Ends the studio's process group, revokes its token; 409 `not_running` when it is not running. */
  async function stop(id: string, graceMs = d.killGraceMs): Promise<InstalledStudio | null> {
    const s = d.store.require(id);
    const entry = live.get(id);
    if (!entry || (s.state !== 'starting' && s.state !== 'running')) {
      throw new ApiError(409, 'not_running', `The studio "${id}" is not running (state ${s.state}).`, { state: s.state });
    }
    return end(id, entry, graceMs);
  }

  /**
   * Ends a live studio whatever its state says: an uninstall has already
   * marked it `uninstalling` (a state it keeps), a stop marks it `stopping`
   * and then `installed`. Resolves once none of its group is alive and its
   * token is revoked.
   */
  async function end(id: string, entry: Live, graceMs: number): Promise<InstalledStudio | null> {
    entry.stopping = true;
    const before = d.store.get(id);
    if (before && (before.state === 'starting' || before.state === 'running')) {
      d.announce(d.store.change(id, (r) => ({ ...r, state: 'stopping' })));
    }
    await endGroup(entry.pgid, graceMs);
    await entry.gone;
    if (live.get(id) === entry) live.delete(id);
    d.studios.revokeTokenHash(hashToken(entry.token));
    log(id).lines(['[backlot] stopped'], null);
    if (!d.store.get(id)) return null;
    const row = d.store.change(id, (r) => ({ ...r, state: r.state === 'stopping' ? 'installed' : r.state, port: null, token_hash: null }));
    d.announce(row);
    return row;
  }

  return {
    start,
    stop,
    /** Stops it when it runs, whatever its state (update, uninstall); resolves either way. */
    async stopIfRunning(id: string): Promise<boolean> {
      const entry = live.get(id);
      if (!entry) return false;
      await end(id, entry, d.killGraceMs);
      return true;
    },
    isRunning: (id: string) => live.has(id),
    /** The port and runtime token of a running studio (the proxy, `/_backlot`). */
    target(id: string): { port: number; token: string; ready: boolean } | null {
      const entry = live.get(id);
      if (!entry || entry.stopping) return null;
      return { port: entry.port, token: entry.token, ready: d.store.get(id)?.state === 'running' };
    },
    logStream: (id: string, after: number) => log(id).stream(after),
    /** Service stop: every studio stops (shorter grace), side by side. */
    async close(graceMs: number): Promise<void> {
      await Promise.all([...live.entries()].map(([id, entry]) => end(id, entry, graceMs).catch(() => undefined)));
    },
  };
}

export type Runtime = ReturnType<typeof createRuntime>;

/** Whether anything answers an HTTP GET below 500 on the port. */
function answers(port: number, path: string, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers: { Host: host }, timeout: 2000, agent: false }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 500) < 500);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
