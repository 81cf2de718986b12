import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { createTokenGrants } from './core/auth';
import { ApiError } from './core/errors';
import { CursorCodec } from './core/pagination';
import { createRevocationWatch } from './core/revocation';
import { nowIso } from './core/time';
import type { ConnectionLimits } from './core/connections';
import { DB_FILE, openDatabase, type Db } from './db/open';
import { createProcessLedger } from './db/process-ledger';
import { createReadPool, inlineReads, type ReadRunner } from './db/read-pool';
import { readOps } from './read-ops';
import { studioDirs } from './data-dir';
import { recordCleanStop, takeCleanStop } from './clean-stop';
import { createLauncherCredentials, createStudiosStore } from './studios';
import { purgeStudioKv } from './kv';
import { declareIndex, purgeStudioRecords } from './records';
import { createSessionsStore, purgeStudioSessions } from './sessions';
import { assetReadOps, createAssets, purgeStudioGrants, removeQuietly, type AssetReferenceSource, type AssetsStore } from './assets';
import { createGalleryStore, purgeStudioItems } from './gallery';
import { createTimeline, purgeStudioTimelines } from './timeline';
import { createLauncher } from './launcher';
import { createStudioProxy } from './proxy';
import { createJobsDomain, recountTaskData, type JobsOptions } from './jobs';
import { createEditorHub } from './editor';
import { createMediaScope } from './media';
import { createHandoffs, handoffReferenceSources } from './handoffs';

/**
 * The domains, built on one database and wired to each other: the first of
 * the service's three concerns (the others: the HTTP chain in http/, the
 * server's lifecycle in lifecycle.ts; docs/design.md "createService in three
 * rooms"). Order matters where one domain takes another; nothing here knows
 * of Koa or of a socket.
 */

export interface ServiceConfig {
  dataDir: string;
  bodyLimit: number;
  uploadLimit: number;
  diskHeadroom: number;
  readWorkers: number;
  connections: ConnectionLimits;
}

export interface ComposeOptions {
  readyTimeoutMs?: number;
  jobs?: Pick<JobsOptions, 'heartbeatMs' | 'highWater' | 'killGraceMs'>;
  assetReferenceSources?: ((deps: { db: Db; assets: AssetsStore }) => AssetReferenceSource)[];
  /** How long a handoff waits for the user before it expires (default 24 h; tests shorten it). */
  handoffTtlMs?: number;
}

/** What the domains need of the listening server, known only once it listens. */
export interface ServerSide {
  port(): number;
  /** Whether an upgrade may hold its socket (the connection guard's share of the cap). */
  admitUpgrade(req: IncomingMessage): boolean;
}

export type Domains = ReturnType<typeof composeDomains>;

export function composeDomains(config: ServiceConfig, options: ComposeOptions, server: ServerSide) {
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
  // Studio tokens' principals in memory: emptied by a revocation here at once, by one elsewhere on the next request.
  const grants = createTokenGrants(studios.resolveToken, studios.externalChanges());
  studios.onRevocation(() => grants.clear());
  const jobs = createJobsDomain({ db, studios, revocations, dataDir: config.dataDir, ledger, ...options.jobs });
  const credentials = createLauncherCredentials(db);
  // This service's ffmpeg/ffprobe children: ended at close, and none started after it.
  const media = createMediaScope();
  const editor = createEditorHub({ port: server.port, watch: revocations, ...options.jobs });

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
  for (const source of handoffReferenceSources()) assets.store.addReferenceSource(source);
  const extraSources = (options.assetReferenceSources ?? []).map((source) => source({ db, assets: assets.store }));
  for (const source of extraSources) assets.store.addReferenceSource(source);
  if (extraSources.length > 0) {
    previews = inlineReads(assetReadOps(db, [...gallery.referenceSources(), ...timeline.store.referenceSources(), ...handoffReferenceSources(), ...extraSources]));
  }

  const launcher = createLauncher({
    db,
    dataDir: config.dataDir,
    studios,
    jobs,
    ledger,
    cursors,
    studioDirs: (id) => studioDirs(config.dataDir, id),
    servicePort: server.port,
    readyTimeoutMs: options.readyTimeoutMs,
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
      let ended: ReturnType<typeof handoffs.purge> = [];
      const library = db.transaction(() => {
        const at = nowIso();
        items = purgeStudioItems(db, id, at);
        ended = handoffs.purge(id);
        purgeStudioTimelines(db, id, at);
        purgeStudioSessions(db, id);
        purgeStudioRecords(db, id);
        purgeStudioKv(db, id);
        recountTaskData(db, id);
        return purgeStudioGrants(db, id);
      }).immediate();
      gallery.announceDeleted(id, items);
      handoffs.announce(ended);
      for (const file of library) removeQuietly(file);
      const dirs = studioDirs(config.dataDir, id);
      for (const dir of [dirs.stage_dir, dirs.data_dir, join(config.dataDir, 'library', id)]) await rm(dir, { recursive: true, force: true });
    },
  });
  const handoffs = createHandoffs({
    db,
    assets,
    gallery,
    sessions,
    recipient(id) {
      const s = launcher.store.get(id);
      if (!s) return null;
      const accepts = s.manifest.accepts ? { kinds: s.manifest.accepts.kinds, path: s.manifest.accepts.path ?? '/' } : null;
      return { installed: s.installed && s.state !== 'installing' && s.state !== 'uninstalling', accepts };
    },
    toStudio: (studioId, data) => jobs.publishStudio(studioId, 'handoff', data),
    toLauncher: (handoff) => jobs.publishLauncher('handoff', handoff),
    ttlMs: options.handoffTtlMs,
  });
  const proxy = createStudioProxy({
    servicePort: server.port,
    // Its sockets to the studios: no more than the client connections that could use them.
    maxSockets: config.connections.maxConnections,
    admitUpgrade: server.admitUpgrade,
    lookup(id) {
      const s = launcher.store.get(id);
      if (!s) return { kind: 'unknown' };
      const target = launcher.runtime.target(id);
      return target ? { kind: 'running', port: target.port } : { kind: 'not_running', name: s.name, state: s.state };
    },
  });

  return {
    db, pool, studios, grants, cursors, revocations, jobs, credentials, media, editor, assets, sessions, gallery, timeline, launcher, handoffs, proxy,
    /**
     * Running runner jobs are cancelled (partial output removed) and event streams (jobs',
     * the editor's) end; probes and exports still running end with their process groups, and
     * none starts any more. Both wait out the same grace, side by side, so the stop stays
     * within its 5 s (docs/api.md "The runner (lifecycle jobs)", "Media tools (ffmpeg, ffprobe)").
     */
    async stop(): Promise<void> {
      editor.close();
      handoffs.close();
      revocations.close();
      proxy.close();
      await Promise.all([jobs.close(), media.close(), launcher.close(1500)]);
    },
    /** Once no request can run any more: recovery, the read workers, the database, the clean-stop record. */
    async release(): Promise<void> {
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
