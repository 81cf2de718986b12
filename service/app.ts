import type Koa from 'koa';
import { buildOpenApi } from './core/openapi';
import type { Route } from './core/route';
import { DEFAULT_LIMITS, defaultMaxConnections, type ConnectionGuard, type ConnectionLimits } from './core/connections';
import { defaultReadWorkers } from './db/read-pool';
import { composeDomains, type ComposeOptions, type ServiceConfig } from './compose';
import { createHttpApp } from './http/chain';
import { createCallers } from './http/callers';
import { createLifecycle, type ServerState } from './lifecycle';
import { createKvStore, kvRoutes } from './kv';
import { createRecordsStore, recordReads, recordRoutes } from './records';
import { sessionRoutes } from './sessions';
import { assetRoutes } from './assets';
import { galleryReads, galleryRoutes } from './gallery';
import { timelineRoutes } from './timeline';
import { createLoginCode, loginUrl, type Launcher } from './launcher';
import { diagnosticsRoutes } from './diagnostics';
import { jobRoutes, type JobsDomain } from './jobs';
import type { EditorHub } from './editor';
import { lockDataDir } from './data-dir-lock';
import { handoffRoutes } from './handoffs';

export { DataDirLockedError, type LockHolder } from './data-dir-lock';
export { API_PREFIX, BACKLOT_PREFIX } from './core/paths';
export type { ServiceConfig } from './compose';

/**
 * createService() is the whole service as a plain Node library: the CLI's
 * `serve`, the tests and Electron's main process all boot it the same way.
 * It reads top to bottom: the domains (compose.ts), one line per domain's
 * routes, the HTTP chain (http/chain.ts) and the server's lifecycle
 * (lifecycle.ts); docs/design.md "createService in three rooms".
 */

export const MiB = 1024 * 1024;
export const SERVICE_VERSION = '0.1.0';

export interface ServiceOptions extends ComposeOptions {
  dataDir: string;
  /** JSON bodies (default 4 MiB). */
  bodyLimit?: number;
  /** Asset uploads (default 8 GiB). */
  uploadLimit?: number;
  /** Free space an upload must leave on the volume (default 512 MiB). */
  diskHeadroom?: number;
  /** Write one access-log line per request to stderr. */
  accessLog?: boolean;
  /** How long a started studio has to answer on its ready_path (default 60 s; BACKLOT_READY_TIMEOUT_MS in tests). */
  readyTimeoutMs?: number;
  /** How long a handoff waits for the user before it expires (default 24 h; BACKLOT_HANDOFF_TTL_MS in tests). */
  handoffTtlMs?: number;
  /** Event-stream and runner tuning (tests and benches). */
  jobs?: ComposeOptions['jobs'];
  /**
   * Further kinds of asset reference, registered the way the gallery and
   * timeline domains register theirs (assets.addReferenceSource). For tests
   * and embedders; each is built on the service's own database.
   */
  assetReferenceSources?: ComposeOptions['assetReferenceSources'];
  /**
   * Read worker threads for the reads whose cost grows with the data (record
   * queries, gallery lists, search and lineage, reclaim previews; db/read-pool.ts).
   * Default: the cores, at least 2. 0 runs them inline on the main thread.
   */
  readWorkers?: number;
  /**
   * Connection limits (core/connections.ts, docs/api.md "Connections and limits"):
   * header time, idle body time, keep-alive, the connection cap, lingering close.
   * Unset ones come from BACKLOT_HEADERS_TIMEOUT_MS, BACKLOT_BODY_IDLE_TIMEOUT_MS,
   * BACKLOT_KEEP_ALIVE_TIMEOUT_MS, BACKLOT_MAX_CONNECTIONS, BACKLOT_LINGER_MS (tests), else the defaults.
   */
  connections?: Partial<ConnectionLimits>;
}

export interface Service {
  config: ServiceConfig;
  /** The node:http request handler. */
  callback: ReturnType<Koa['callback']>;
  /** Listens on 127.0.0.1 (port 0 picks one) and resolves with the address. */
  listen(port: number): Promise<{ port: number; url: string }>;
  /** Stops accepting, ends open connections, ends the read workers, closes the database. */
  close(): Promise<void>;
  routes: readonly Route[];
  /** The jobs domain: the runner for export and the launcher, and the event hub. */
  jobs: JobsDomain;
  /** The editor surface's connected pages (`GET /editor/events`); `:open` publishes to it. */
  editor: EditorHub;
  /** The OpenAPI 3.1 document served at /api/v1/openapi.json. */
  openapi: Record<string, unknown>;
  /** Installed studios, their jobs and processes. */
  launcher: Launcher;
  /** A new one-time login URL (`serve` prints one at start; `backlot login-url` makes more). */
  loginUrl(): string;
  /** Open connections and what the limits have done to them (tests). */
  connectionStats(): ReturnType<ConnectionGuard['stats']> | null;
  /** The read workers: how many, and their kernel thread ids once ready (tests). */
  readPool: { size: number; threads(): number[] };
}

/**
 * Builds the service on its data dir. The dir's lock comes first, before
 * anything reads or changes the dir: a second service on a dir another one
 * runs on throws DataDirLockedError and has touched nothing (docs/api.md
 * "One server per data dir").
 */
export function createService(options: ServiceOptions): Service {
  const lock = lockDataDir(options.dataDir);
  let service: Service;
  try {
    service = buildService(options);
  } catch (err) {
    lock.release();
    throw err;
  }
  // Released last, however the stop went: the next server may start only once this one is done with the dir.
  return { ...service, close: () => service.close().finally(() => lock.release()) };
}

function buildService(options: ServiceOptions): Service {
  const config = serviceConfig(options);
  const server: ServerState = { port: 0, guard: null };
  const port = () => server.port;
  const d = composeDomains(
    config,
    {
      ...options,
      readyTimeoutMs: options.readyTimeoutMs ?? envMs('BACKLOT_READY_TIMEOUT_MS'),
      handoffTtlMs: options.handoffTtlMs ?? envMs('BACKLOT_HANDOFF_TTL_MS'),
    },
    { port, admitUpgrade: (req) => server.guard?.admitUpgrade(req) ?? false },
  );
  const { db, pool, studios, cursors, assets } = d;

  // Every domain, one line each.
  const routes: Route[] = [
    ...kvRoutes({ kv: createKvStore(db, studios), cursors }),
    ...recordRoutes({ records: createRecordsStore(db, studios, { maxDocBytes: () => config.bodyLimit }), reads: recordReads(pool, db), cursors }),
    ...sessionRoutes({ sessions: d.sessions, cursors }),
    ...assetRoutes(assets, {
      secret: studios.cursorSecret(),
      credentialLive: (id) => d.credentials.liveId(id),
      callerCredentialId: (ctx) => (ctx.state.launcherCredential as { id: string } | undefined)?.id ?? null,
    }),
    ...galleryRoutes({ gallery: d.gallery, reads: galleryReads(pool), assets: assets.store, cursors }),
    ...jobRoutes({ jobs: d.jobs, cursors }),
    ...handoffRoutes({ handoffs: d.handoffs, cursors }),
    ...timelineRoutes({ store: d.timeline.store, ops: d.timeline.ops, exporter: d.timeline.exporter, jobs: d.jobs, cursors }),
    ...d.launcher.routes(),
    ...diagnosticsRoutes({ dataDir: config.dataDir, version: SERVICE_VERSION }),
  ];

  const openapi = buildOpenApi(routes, { version: SERVICE_VERSION });
  const callers = createCallers({ grants: d.grants, credentials: d.credentials, port });
  const app = createHttpApp({
    ...d,
    port,
    accessLog: options.accessLog ?? false,
    bodyLimit: () => config.bodyLimit,
    routes,
    openapiText: JSON.stringify(openapi),
    callers,
  });
  const lifecycle = createLifecycle({
    app,
    dataDir: config.dataDir,
    connections: config.connections,
    state: server,
    proxy: d.proxy,
    stopDomains: d.stop,
    release: d.release,
  });

  return {
    config,
    callback: lifecycle.callback,
    routes,
    jobs: d.jobs,
    editor: d.editor,
    openapi,
    launcher: d.launcher,
    loginUrl: () => loginUrl(server.port, createLoginCode(d.launcher.store)),
    connectionStats: () => server.guard?.stats() ?? null,
    readPool: { size: pool.size, threads: () => pool.threads() },
    listen: lifecycle.listen,
    close: lifecycle.close,
  };
}

function serviceConfig(options: ServiceOptions): ServiceConfig {
  return {
    dataDir: options.dataDir,
    bodyLimit: options.bodyLimit ?? 4 * MiB,
    uploadLimit: options.uploadLimit ?? 8 * 1024 * MiB,
    diskHeadroom: options.diskHeadroom ?? 512 * MiB,
    readWorkers: options.readWorkers ?? defaultReadWorkers(),
    connections: connectionLimits(options.connections ?? {}),
  };
}

function connectionLimits(given: Partial<ConnectionLimits>): ConnectionLimits {
  return {
    headersTimeoutMs: given.headersTimeoutMs ?? envMs('BACKLOT_HEADERS_TIMEOUT_MS') ?? DEFAULT_LIMITS.headersTimeoutMs,
    bodyIdleTimeoutMs: given.bodyIdleTimeoutMs ?? envMs('BACKLOT_BODY_IDLE_TIMEOUT_MS') ?? DEFAULT_LIMITS.bodyIdleTimeoutMs,
    keepAliveTimeoutMs: given.keepAliveTimeoutMs ?? envMs('BACKLOT_KEEP_ALIVE_TIMEOUT_MS') ?? DEFAULT_LIMITS.keepAliveTimeoutMs,
    maxConnections: given.maxConnections ?? envMs('BACKLOT_MAX_CONNECTIONS') ?? defaultMaxConnections(),
    lingerMs: given.lingerMs ?? envMs('BACKLOT_LINGER_MS') ?? DEFAULT_LIMITS.lingerMs,
    lingerBytes: given.lingerBytes ?? DEFAULT_LIMITS.lingerBytes,
  };
}

function envMs(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** The app's log file (DIR/logs/backlot.log) for the desktop shell and `serve --log-file`. */
export { captureOutput, logFilePath, openLogFile, type LogFile } from './core/log-file';
