import { readdirSync, renameSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { CursorCodec } from '../core/pagination';
import type { ProcessLedger } from '../db/process-ledger';
import type { Db } from '../db/open';
import type { JobsDomain } from '../jobs';
import type { StudiosStore } from '../studios';
import { createLifecycle, type LifecycleDeps } from './lifecycle';
import { listExamples, SHIPPED_EXAMPLES } from './examples';
import { launcherRoutes } from './routes';
import { createRuntime } from './runtime';
import { createLauncherStore, type InstalledStudio } from './store';

export { createLoginCode, loginUrl } from './login';
export { SERVER_FILE, readServerInfo, writeServerInfo, removeServerInfo } from '../core/server-file';
export { LOGIN_PATH } from './pages';
export { launcherPages } from './pages';
export { manifestSchema, parseManifest } from './manifest';
export type { Manifest } from './manifest';
export type { InstalledStudio } from './store';
export { createLauncherStore } from './store';
export type { ServerInfo } from '../core/server-file';

/** Default time a studio has to answer on its ready_path (60 s; docs/studios.md "Starting and `ready_path`"). */
export const READY_TIMEOUT_MS = 60_000;
export const INTERRUPTED_STUDIO = 'The service stopped while the studio was running; start it again.';

export interface LauncherOptions {
  db: Db;
  dataDir: string;
  studios: StudiosStore;
  jobs: JobsDomain;
  ledger: ProcessLedger;
  cursors: CursorCodec;
  studioDirs(id: string): { stage_dir: string; data_dir: string };
  servicePort(): number;
  purge: LifecycleDeps['purge'];
  declareIndexes: LifecycleDeps['declareIndexes'];
  readyTimeoutMs?: number;
  killGraceMs?: number;
  /** Where the example studios are (tests); the shipped folder by default. */
  examplesDir?: string;
}

/**
 * The launcher domain (docs/api.md "Launcher"): installed studios, their
 * lifecycle jobs, their running processes, and the launcher's routes.
 */
export function createLauncher(o: LauncherOptions) {
  const store = createLauncherStore(o.db);
  const origin = (id: string) => `http://${id}.localhost:${o.servicePort()}`;
  const studioJson = (s: InstalledStudio) => ({
    id: s.id,
    name: s.name,
    version: s.version,
    description: s.manifest.description ?? null,
    state: s.state,
    heavy: s.manifest.heavy === true,
    port: s.port,
    origin: origin(s.id),
    capabilities: s.manifest.capabilities,
    accepts: s.manifest.accepts ? { kinds: s.manifest.accepts.kinds, path: s.manifest.accepts.path ?? '/' } : null,
    linked: s.linked,
    source: s.source,
    installed: s.installed,
    last_error: s.last_error,
    created_at: s.created_at,
    updated_at: s.updated_at,
  });
  const announce = (s: InstalledStudio) => o.jobs.publishLauncher('studio', studioJson(s));

  recover(store, o);

  const runtime = createRuntime({
    store,
    studios: o.studios,
    jobs: o.jobs,
    ledger: o.ledger,
    dataDir: o.dataDir,
    studioDirs: o.studioDirs,
    servicePort: o.servicePort,
    announce,
    readyTimeoutMs: o.readyTimeoutMs ?? READY_TIMEOUT_MS,
    killGraceMs: o.killGraceMs ?? 5000,
  });
  const lifecycle = createLifecycle({
    store,
    studios: o.studios,
    jobs: o.jobs,
    runtime,
    dataDir: o.dataDir,
    studioDirs: o.studioDirs,
    declareIndexes: o.declareIndexes,
    purge: o.purge,
    announce,
    announceRemoved: (id) => o.jobs.publishLauncher('studio', { id, removed: true }),
  });

  return {
    store,
    runtime,
    lifecycle,
    studioJson,
    routes: () =>
      launcherRoutes({
        store,
        runtime,
        lifecycle,
        jobs: o.jobs,
        cursors: o.cursors,
        studioJson,
        examples: () => listExamples(o.examplesDir ?? SHIPPED_EXAMPLES, (id) => store.get(id) !== null),
      }),
    close: (graceMs: number) => runtime.close(graceMs),
  };
}

export type Launcher = ReturnType<typeof createLauncher>;

/**
 * Start-up, after the process ledger ended a crashed run's groups: studios
 * that were starting or running are stopped (their runtime tokens revoked),
 * interrupted installs and uninstalls are `failed`, and half-made folders go.
 * An update interrupted between its two renames is finished backwards (the
 * old version comes back).
 */
function recover(store: ReturnType<typeof createLauncherStore>, o: LauncherOptions): void {
  for (const s of store.all()) {
    let next: InstalledStudio | null = null;
    if (s.state === 'starting' || s.state === 'running' || s.state === 'stopping') {
      if (s.token_hash) o.studios.revokeTokenHash(s.token_hash);
      next = { ...s, state: 'installed', port: null, token_hash: null, last_error: INTERRUPTED_STUDIO };
    } else if (s.state === 'installing' || s.state === 'uninstalling') {
      next = { ...s, state: 'failed', last_error: `The service stopped while the studio was ${s.state}; ${s.state === 'installing' ? 'install' : 'uninstall'} it again.` };
    }
    if (next) store.put(next);
    const root = join(o.dataDir, 'studios', s.id);
    if (!s.linked && !existsSync(join(root, 'app')) && existsSync(join(root, 'app.old'))) renameSync(join(root, 'app.old'), join(root, 'app'));
    let entries: string[] = [];
    try {
      entries = readdirSync(root);
    } catch {
      continue;
    }
    for (const name of entries) {
      if (/^\.(app|next)-\d+\.tmp$/.test(name) || name === 'app.next' || name === 'app.old') rmSync(join(root, name), { recursive: true, force: true });
    }
  }
}
