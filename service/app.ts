import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import Koa, { type Context, type Next } from 'koa';
import { Router } from '@koa/router';
import { z } from 'zod';
import { authenticate, authenticateLauncher, type Principal } from './core/auth';
import { ApiError } from './core/errors';
import { checkRequestSource, classifyAuthority, requireServiceOrigin, type OriginVerdict } from './core/origin';
import { CursorCodec } from './core/pagination';
import { createRevocationWatch, endStreamOnRevocation } from './core/revocation';
import { bindRoutes, zodToApiError, type Route } from './core/route';
import { buildOpenApi } from './core/openapi';
import { DEFAULT_LIMITS, defaultMaxConnections, guardConnections, serverOptions, type ConnectionGuard, type ConnectionLimits } from './core/connections';
import { DB_FILE, openDatabase, type Db } from './db/open';
import { createProcessLedger } from './db/process-ledger';
import { createReadPool, defaultReadWorkers, inlineReads, type ReadRunner } from './db/read-pool';
import { readOps } from './read-ops';
import { createLauncherCredentials, createStudiosStore } from './studios';
import { createKvStore, kvRoutes, purgeStudioKv } from './kv';
import { createRecordsStore, declareIndex, purgeStudioRecords, recordReads, recordRoutes } from './records';
import { createSessionsStore, purgeStudioSessions, sessionRoutes } from './sessions';
import { assetReadOps, assetRoutes, createAssets, purgeStudioGrants, removeQuietly, type AssetReferenceSource, type AssetsStore } from './assets';
import { Readable } from 'node:stream';
import { createGalleryStore, galleryReads, galleryRoutes, purgeStudioItems } from './gallery';
import { createTimeline, purgeStudioTimelines, timelineRoutes } from './timeline';
import {
  createLauncher,
  createLoginCode,
  launcherPages,
  loginUrl,
  removeServerInfo,
  writeServerInfo,
  type Launcher,
} from './launcher';
import { createStudioProxy } from './proxy';
import { diagnosticsRoutes } from './diagnostics';
import { nowIso } from './core/time';
import { rm } from 'node:fs/promises';
import { createJobsDomain, jobRoutes, recountTaskData, type JobsDomain, type JobsOptions } from './jobs';
import { createEditorHub, editorMiddleware, type EditorHub } from './editor';
import { uiMiddleware } from './ui';
import { studioDirs } from './data-dir';
import { createMediaScope } from './media';
import { recordCleanStop, takeCleanStop } from './clean-stop';
import { lockDataDir } from './data-dir-lock';

export { DataDirLockedError, type LockHolder } from './data-dir-lock';

/**
 * createService() is the whole service as a plain Node library: the CLI's
 * `serve`, the tests and Electron's main process all boot it the same way.
 */

export const API_PREFIX = '/api/v1';
export const MiB = 1024 * 1024;
export const SERVICE_VERSION = '0.1.0';

export interface ServiceOptions {
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
  /** Event-stream and runner tuning (tests and benches). */
  jobs?: Pick<JobsOptions, 'heartbeatMs' | 'highWater' | 'killGraceMs'>;
  /**
   * Further kinds of asset reference, registered the way the gallery and
   * timeline domains register theirs (assets.addReferenceSource). For tests
   * and embedders; each is built on the service's own database.
   */
  assetReferenceSources?: ((deps: { db: Db; assets: AssetsStore }) => AssetReferenceSource)[];
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

export interface ServiceConfig {
  dataDir: string;
  bodyLimit: number;
  uploadLimit: number;
  diskHeadroom: number;
  readWorkers: number;
  connections: ConnectionLimits;
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
  const config: ServiceConfig = {
    dataDir: options.dataDir,
    bodyLimit: options.bodyLimit ?? 4 * MiB,
    uploadLimit: options.uploadLimit ?? 8 * 1024 * MiB,
    diskHeadroom: options.diskHeadroom ?? 512 * MiB,
    readWorkers: options.readWorkers ?? defaultReadWorkers(),
    connections: connectionLimits(options.connections ?? {}),
  };
  // Taken before anything changes, so a crash of this run is never taken for a clean stop.
  const cleanStop = takeCleanStop(config.dataDir);
  const db = openDatabase(config.dataDir);
  // Then: process groups a crashed run left behind are ended.
  const ledger = createProcessLedger(db);
  for (const orphan of ledger.endOrphans()) {
    process.stderr.write(`ended process group ${orphan.pgid} (${orphan.owner}) left running by an earlier run\n`);
  }
  const pool = createReadPool({
    size: config.readWorkers,
    entry: join(__dirname, 'read-worker.js'),
    file: join(config.dataDir, DB_FILE),
    inline: () => readOps(db),
  });
  // An embedder's own kinds of reference exist on the main thread only: its previews read there.
  let previews: ReadRunner = pool;
  const studios = createStudiosStore(db);
  const cursors = new CursorCodec(studios.cursorSecret());
  // Open streams end when their credential is revoked: here (launcher stop, uninstall) or by the CLI.
  const revocations = createRevocationWatch({ changedElsewhere: studios.externalChanges() });
  studios.onRevocation(() => revocations.recheck());
  const jobs = createJobsDomain({ db, studios, revocations, dataDir: config.dataDir, ledger, ...options.jobs });
  const credentials = createLauncherCredentials(db);
  // This service's ffmpeg/ffprobe children: ended at close, and none started after it.
  const media = createMediaScope();
  const editor = createEditorHub({ port: () => port, watch: revocations, ...options.jobs });

  const assets = createAssets(db, {
    ...config,
    media,
    secret: studios.cursorSecret(),
    studioDirs: (id) => studioDirs(config.dataDir, id),
    reads: { run: (lane, op, args) => previews.run(lane, op, args) },
    cleanStop,
  });
  const sessions = createSessionsStore(db, studios);
  const gallery = createGalleryStore(db, { assets: assets.store, sessions, announce: (event) => jobs.publishLauncher('item', event) });
  for (const source of gallery.referenceSources()) assets.store.addReferenceSource(source);
  const timeline = createTimeline(db, { assets, editor, media, jobs, gallery });
  for (const source of timeline.store.referenceSources()) assets.store.addReferenceSource(source);
  const extraSources = (options.assetReferenceSources ?? []).map((source) => source({ db, assets: assets.store }));
  for (const source of extraSources) assets.store.addReferenceSource(source);
  if (extraSources.length > 0) {
    previews = inlineReads(assetReadOps(db, [...gallery.referenceSources(), ...timeline.store.referenceSources(), ...extraSources]));
  }

  const launcher = createLauncher({
    db,
    dataDir: config.dataDir,
    studios,
    jobs,
    ledger,
    cursors,
    studioDirs: (id) => studioDirs(config.dataDir, id),
    servicePort: () => port,
    readyTimeoutMs: options.readyTimeoutMs ?? envMs('BACKLOT_READY_TIMEOUT_MS'),
    killGraceMs: options.jobs?.killGraceMs,
    declareIndexes: (id, collections) => {
      for (const [collection, { indexes }] of Object.entries(collections ?? {})) {
        for (const field of indexes) {
          try {
            declareIndex(db, { studioId: id, collection, field });
          } catch (err) {
            if (err instanceof ApiError && err.status === 400) {
              throw ApiError.badRequest(`backlot.json: manifest.collections.${collection}: ${err.message}`, { member: `manifest.collections.${collection}` });
            }
            throw err;
          }
        }
      }
    },
    purge: async (id) => {
      let items: string[] = [];
      const library = db.transaction(() => {
        const at = nowIso();
        items = purgeStudioItems(db, id, at);
        purgeStudioTimelines(db, id, at);
        purgeStudioSessions(db, id);
        purgeStudioRecords(db, id);
        purgeStudioKv(db, id);
        recountTaskData(db, id);
        return purgeStudioGrants(db, id);
      }).immediate();
      gallery.announceDeleted(id, items);
      for (const file of library) removeQuietly(file);
      const dirs = studioDirs(config.dataDir, id);
      for (const dir of [dirs.stage_dir, dirs.data_dir, join(config.dataDir, 'library', id)]) await rm(dir, { recursive: true, force: true });
    },
  });
  const proxy = createStudioProxy({
    servicePort: () => port,
    // Its sockets to the studios: no more than the client connections that could use them.
    maxSockets: config.connections.maxConnections,
    admitUpgrade: (req) => guard?.admitUpgrade(req) ?? false,
    lookup(id) {
      const s = launcher.store.get(id);
      if (!s) return { kind: 'unknown' };
      const target = launcher.runtime.target(id);
      return target ? { kind: 'running', port: target.port } : { kind: 'not_running', name: s.name, state: s.state };
    },
  });

  // Every domain, one line each.
  const routes: Route[] = [
    ...kvRoutes({ kv: createKvStore(db, studios), cursors }),
    ...recordRoutes({ records: createRecordsStore(db, studios, { maxDocBytes: () => config.bodyLimit }), reads: recordReads(pool, db), cursors }),
    ...sessionRoutes({ sessions, cursors }),
    ...assetRoutes(assets, {
      secret: studios.cursorSecret(),
      credentialLive: (id) => credentials.liveId(id),
      callerCredentialId: (ctx) => (ctx.state.launcherCredential as { id: string } | undefined)?.id ?? null,
    }),
    ...galleryRoutes({ gallery, reads: galleryReads(pool), assets: assets.store, cursors }),
    ...jobRoutes({ jobs, cursors }),
    ...timelineRoutes({ store: timeline.store, ops: timeline.ops, exporter: timeline.exporter, jobs, cursors }),
    ...launcher.routes(),
    ...diagnosticsRoutes({ dataDir: config.dataDir, version: SERVICE_VERSION }),
  ];

  let port = 0;
  const openapi = buildOpenApi(routes, { version: SERVICE_VERSION });
  const openapiText = JSON.stringify(openapi);
  const router = new Router({ prefix: API_PREFIX, sensitive: true, strict: true });

  // Resolves the caller once per request: the token (401), then whether a
  // studio's page or host name is used by another studio (403 bad_origin).
  const authenticateRequest = (ctx: Context): Principal => {
    const known = ctx.state.principal as Principal | undefined;
    if (known) return known;
    const principal = authenticate(ctx.get('Authorization') || undefined, studios.resolveToken);
    const throughStudio = (ctx.state.source as OriginVerdict).studioId;
    if (throughStudio !== null && throughStudio !== principal.studioId) {
      throw ApiError.badOrigin(`A page of the studio "${throughStudio}" cannot act as another studio.`);
    }
    ctx.state.principal = principal;
    return principal;
  };
  // The user's side (docs/security.md "The launcher credential"): the service's
  // own origin only, then the launcher credential from `Authorization: Bearer`.
  // Only from there: every Cookie header is ignored, so a cookie another
  // server on 127.0.0.1 planted changes nothing. The use is recorded (a
  // browser sign-in expires after 30 days unused); the credential is kept on
  // the request for what it opens (media URLs, streams ended at revocation).
  const authenticateLauncherRequest = (ctx: Context): void => {
    requireServiceOrigin(sourceOf(ctx), port);
    authenticateLauncher(ctx.get('Authorization') || undefined, (hash) => {
      const used = credentials.use(hash);
      if (used) ctx.state.launcherCredential = used;
      return used?.hash ?? null;
    });
  };
  bindRoutes(router, routes, {
    bodyLimit: () => config.bodyLimit,
    authenticate: authenticateRequest,
    authenticateLauncher: authenticateLauncherRequest,
    serviceOriginOnly: (ctx) => requireServiceOrigin(sourceOf(ctx), port),
  });

  const app = new Koa();
  // Koa reports errors of a reply body that fails after the headers went out. A
  // client that goes away mid-stream (an event stream closed, a download cut
  // short) is how streams end, not a fault: only anything else is logged.
  app.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'ECONNRESET' || err.code === 'EPIPE') return;
    // A request the client malformed after its headers (bad chunked framing): node:http answers it and drops the connection.
    if (err.code?.startsWith('HPE_')) return;
    console.error('reply failed after it began:', err);
  });
  app.use(front(() => port, options.accessLog ?? false));
  // A studio's origin (decisions §10): /_backlot/api/v1/* is this API as that studio
  // (its runtime token, whatever Authorization the page sent); /api/v1/* is this API
  // with the caller's own token, as on the service's origin; everything else is the
  // studio's own server.
  app.use(async (ctx, next) => {
    const studioId = (ctx.state.source as OriginVerdict).hostStudioId;
    if (studioId === null) return next();
    if (ctx.path === BACKLOT_PREFIX || ctx.path.startsWith(`${BACKLOT_PREFIX}/`)) {
      // The whole prefix is the service's: nothing under it reaches the studio's server.
      if (!ctx.path.startsWith(`${BACKLOT_PREFIX}${API_PREFIX}/`)) throw ApiError.notFound('The path');
      const target = launcher.runtime.target(studioId);
      if (!target) {
        ctx.respond = false;
        proxy.handle(studioId, ctx.req, ctx.res);
        return;
      }
      ctx.state.principal = authenticate(`Bearer ${target.token}`, studios.resolveToken);
      ctx.path = ctx.path.slice(BACKLOT_PREFIX.length);
      return next();
    }
    if (ctx.path === API_PREFIX || ctx.path.startsWith(`${API_PREFIX}/`)) return next();
    ctx.respond = false;
    proxy.handle(studioId, ctx.req, ctx.res);
  });
  app.use(async (ctx, next) => {
    if (ctx.path === `${API_PREFIX}/openapi.json` && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      ctx.type = 'application/json';
      ctx.body = openapiText;
      return;
    }
    await next();
  });
  app.use(uiMiddleware({ port: () => port }));
  app.use(editorMiddleware({ hub: editor, credentials, port: () => port }));
  app.use(launcherPages({ store: launcher.store, credentials, port: () => port, bodyLimit: () => config.bodyLimit }));
  // A launcher event stream (`/launcher/events`, job and studio logs) ends when its credential is revoked.
  app.use(async (ctx, next) => {
    await next();
    const used = ctx.state.launcherCredential as { hash: Buffer } | undefined;
    if (used && ctx.body instanceof Readable && ctx.response.type === 'text/event-stream') {
      endStreamOnRevocation(revocations, ctx.body, () => credentials.resolve(used.hash) !== null);
    }
  });
  app.use(router.routes());
  // Nothing matched: the token is still checked first (401 before 404); under
  // /launcher, the launcher credential.
  app.use((ctx) => {
    if (ctx.path === `${API_PREFIX}/launcher` || ctx.path.startsWith(`${API_PREFIX}/launcher/`) || ctx.path.startsWith(`${API_PREFIX}/launcher:`)) {
      authenticateLauncherRequest(ctx);
    } else {
      authenticateRequest(ctx);
    }
    throw ApiError.notFound('The path');
  });

  const callback = app.callback();
  let server: Server | null = null;
  let guard: ConnectionGuard | null = null;

  return {
    config,
    callback,
    routes,
    jobs,
    editor,
    openapi,
    launcher,
    loginUrl: () => loginUrl(port, createLoginCode(launcher.store)),
    connectionStats: () => guard?.stats() ?? null,
    readPool: { size: pool.size, threads: () => pool.threads() },
    listen(requested: number) {
      return new Promise((resolve, reject) => {
        // Our Host guard answers a missing Host itself, with the error body (403 bad_origin).
        // Header time, idle body time, keep-alive and the connection cap: core/connections.ts.
        const s = createServer({ requireHostHeader: false, ...serverOptions(config.connections) }, callback);
        const g = guardConnections(s, config.connections);
        // WebSocket (and any other) upgrades: only a studio's origin has them, passed to its server.
        s.on('upgrade', (req, socket, head) => {
          let studioId: string | null;
          try {
            studioId = checkRequestSource(sourceOfHeaders(req.headers), port).hostStudioId;
          } catch (err) {
            refuseUpgrade(socket, err instanceof ApiError ? err : ApiError.badOrigin('Refused.'));
            return;
          }
          if (studioId === null) {
            refuseUpgrade(socket, ApiError.notFound('An upgrade on the service\'s own origin'));
            return;
          }
          // The paths the service answers itself on a studio's origin never reach the studio's
          // server, upgrades included (docs/security.md, Studios). The path is read as Koa reads
          // it for every other request (raw, case-sensitive), so both kinds go the same way.
          if (isServicePath(koaPath(app, req))) {
            refuseUpgrade(socket, ApiError.notFound('The path'));
            return;
          }
          proxy.upgrade(studioId, req, socket, head);
        });
        s.once('error', (err) => {
          g.stop();
          reject(err);
        });
        s.listen(requested, '127.0.0.1', () => {
          s.removeAllListeners('error');
          server = s;
          guard = g;
          port = (s.address() as AddressInfo).port;
          const url = `http://127.0.0.1:${port}`;
          writeServerInfo(config.dataDir, { pid: process.pid, port, url, started_at: nowIso() });
          resolve({ port, url });
        });
      });
    },
    async close() {
      const s = server;
      const g = guard;
      server = null;
      const closed = s ? new Promise<void>((resolve) => s.close(() => resolve())) : null;
      // Running runner jobs are cancelled (partial output removed) and event streams (jobs', the editor's) end (decisions §1).
      // Probes (and later exports) still running: their process groups end, and none starts any more.
      // Both wait out the same grace, side by side, so the stop stays within its 5 s.
      editor.close();
      revocations.close();
      proxy.close();
      await Promise.all([jobs.close(), media.close(), launcher.close(1500)]);
      removeServerInfo(config.dataDir);
      if (s && closed) {
        s.closeIdleConnections();
        // Requests in flight get a moment to finish; then every socket goes.
        const timer = setTimeout(() => {
          for (const socket of [...g!.sockets()]) socket.destroy();
        }, 1000);
        await closed;
        clearTimeout(timer);
        g!.stop();
      }
      // The background part of start-up recovery ends between two of its slices.
      await assets.recovery.stop();
      // No read worker outlives the service; a read still queued fails (its client is gone).
      await pool.close();
      if (db.open) {
        // Every committed transaction durable (WAL synced) before a clean stop is recorded.
        db.pragma('wal_checkpoint(PASSIVE)');
        db.close();
      }
      if (assets.stopsClean()) recordCleanStop(config.dataDir, assets.blobs.folders());
    },
  };
}

/**
 * The first middleware: request id, the headers every answer carries, the
 * Host/Origin guard (before any routing), and the one place where errors
 * become response bodies.
 */
function front(port: () => number, accessLog: boolean) {
  let sequence = 0;
  const prefix = randomUUID().slice(0, 8);
  return async (ctx: Context, next: Next): Promise<void> => {
    const requestId = `${prefix}-${(++sequence).toString(36)}`;
    const started = accessLog ? performance.now() : 0;
    const res = ctx.res;
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    try {
      ctx.state.source = checkRequestSource(sourceOf(ctx), port(), { navigation: isStudioNavigation(ctx, port()) });
      await next();
    } catch (err) {
      const apiError = toApiError(err, ctx, requestId);
      ctx.status = apiError.status;
      ctx.type = 'application/json';
      ctx.body = apiError.toBody();
      // A refusal before the whole body was read (413, 507, 401 ...): close rather than
      // drain what is left of it, which may be gigabytes.
      if (!ctx.req.complete) ctx.set('Connection', 'close');
    } finally {
      if (accessLog) {
        const ms = (performance.now() - started).toFixed(1);
        process.stderr.write(`${new Date().toISOString()} ${requestId} ${ctx.method} ${ctx.path} ${ctx.status} ${ms}ms\n`);
      }
    }
  };
}

/** The prefix under which a studio's origin reaches this API as that studio (decisions §10 `{proxy_prefix}`). */
export const BACKLOT_PREFIX = '/_backlot';

function sourceOf(ctx: Context) {
  return { host: ctx.get('Host') || undefined, origin: ctx.get('Origin') || undefined, secFetchSite: ctx.get('Sec-Fetch-Site') || undefined };
}

function sourceOfHeaders(h: import('node:http').IncomingHttpHeaders) {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) || undefined;
  return { host: one(h.host), origin: one(h.origin), secFetchSite: one(h['sec-fetch-site']) };
}

/**
 * A person opening a studio's page from elsewhere (the launcher's page on
 * 127.0.0.1 is another site): a top-level GET navigation to a studio's own
 * server, never to the API paths. Only these pass a `Sec-Fetch-Site: cross-site`.
 */
function isStudioNavigation(ctx: Context, port: number): boolean {
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return false;
  if (ctx.get('Sec-Fetch-Mode').toLowerCase() !== 'navigate') return false;
  if (ctx.path.startsWith(`${API_PREFIX}/`) || ctx.path === API_PREFIX || ctx.path.startsWith(`${BACKLOT_PREFIX}/`)) return false;
  const host = classifyAuthority(ctx.get('Host'), port);
  return host?.kind === 'studio';
}

/**
 * Whether a path on a studio's origin is the service's own: `/_backlot` and
 * `/api/v1` and everything under them. The same test the studio-origin
 * middleware applies to requests, for upgrades.
 */
function isServicePath(path: string): boolean {
  return [BACKLOT_PREFIX, API_PREFIX].some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/** A request's path exactly as Koa's `ctx.path` gives it (not decoded, not normalised). */
function koaPath(app: Koa, req: import('node:http').IncomingMessage): string {
  const request = Object.create(app.request) as { req: typeof req; path: string };
  request.req = req;
  return request.path;
}

/** An upgrade the service will not pass on: the error body, then the connection ends. */
function refuseUpgrade(socket: import('node:stream').Duplex, error: ApiError): void {
  const body = JSON.stringify(error.toBody());
  socket.end(
    `HTTP/1.1 ${error.status} ${error.status === 403 ? 'Forbidden' : 'Not Found'}\r\nConnection: close\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
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

function toApiError(err: unknown, ctx: Context, requestId: string): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof z.ZodError) return zodToApiError(err, 'request');
  const status = (err as { status?: number }).status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Errors raised by Koa or Node's parser (e.g. a malformed URL).
    return ApiError.badRequest((err as Error).message || 'Bad request.');
  }
  console.error(`[${requestId}] ${ctx.method} ${ctx.path} failed:`, err);
  return new ApiError(500, 'internal', `Internal error (request ${requestId}); see the service log.`);
}

/** The app's log file (DIR/logs/backlot.log) for the desktop shell and `serve --log-file`. */
export { captureOutput, logFilePath, openLogFile, type LogFile } from './core/log-file';
