import { copyFile, link, lstat, mkdir, readFile, realpath, rename, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, parse as parsePath, resolve, sep } from 'node:path';
import { ApiError } from '../core/errors';
import { ensureDir } from '../core/files';
import { nowIso } from '../core/time';
import type { JobContext, JobRow, JobsDomain, RunStep } from '../jobs';
import type { StudiosStore } from '../studios';
import { copyTree, removeTree } from './copy';
import { checkResolvedInside } from './resolved';
import { DownloadUrlError, fetchDownload, parseDownloadUrl, partialPath, removePartial, resolveDownloadTarget, verifyFile } from './download';
import { stepEnv } from './env';
import { blocked, checkContained, commandArgv, inside, MANIFEST_FILE, MAX_MANIFEST_BYTES, parseManifest, type Manifest } from './manifest';
import type { Runtime } from './runtime';
import type { InstalledStudio, LauncherStore, VerifiedDownload } from './store';

/**
 * Installing, linking, updating and uninstalling studios (docs/api.md
 * "Endpoints" under "Launcher"). Every check that can refuse (400, 404, 409,
 * 422) runs before a
 * job exists; the work itself runs as runner jobs (`install`, then `build`
 * and `download` as their own jobs, `update`, `uninstall`), so it streams its
 * steps, can be cancelled from the launcher, and leaves nothing half-made:
 *
 * - install copies into a temporary folder renamed into place;
 * - update prepares the new version in `app.next` beside the old one and
 *   swaps only when every step succeeded (a failure or cancel leaves the old
 *   version installed and startable);
 * - a cancelled job removes what it had made (the copy, a partial download).
 */

export interface LifecycleDeps {
  store: LauncherStore;
  studios: StudiosStore;
  jobs: JobsDomain;
  runtime: Runtime;
  dataDir: string;
  studioDirs(id: string): { stage_dir: string; data_dir: string };
  /** Declares the manifest's record indexes (400 naming the member on a bad one). */
  declareIndexes(id: string, collections: Manifest['collections']): void;
  /** Removes the studio's data (uninstall with purge). */
  purge(id: string): Promise<void>;
  announce(s: InstalledStudio): void;
  announceRemoved(id: string): void;
}

export function createLifecycle(d: LifecycleDeps) {
  const studioRoot = (id: string) => join(d.dataDir, 'studios', id);
  const appDirOf = (id: string) => join(studioRoot(id), 'app');

  const setState = (id: string, patch: Partial<InstalledStudio>): void => {
    if (!d.store.get(id)) return;
    d.announce(d.store.change(id, (s) => ({ ...s, ...patch })));
  };

  const requireIdle = (id: string): void => {
    const busy = d.jobs.store.activeRunner(id);
    if (busy) {
      throw new ApiError(409, 'in_use', `The studio "${id}" has a ${busy.kind} job running; wait for it or cancel it.`, { job: busy.id });
    }
  };

  /** The steps of a phase as runner steps: argv without a shell, in the app folder, in a clean environment. */
  const stepsOf = (m: Manifest, phase: 'install' | 'build', cwd: string): RunStep[] =>
    (m[phase] ?? []).map((s) => ({ name: s.name, command: commandArgv(s.run), cwd, env: stepEnv(m.env), cleanEnv: true }));

  /** Downloads every declared file into `appDir`; files verified identical in `reuseFrom` are copied, not fetched. */
  async function downloadAll(ctx: JobContext, m: Manifest, appDir: string, sourceDir: string, reuse?: InstalledStudio): Promise<VerifiedDownload[]> {
    const verified: VerifiedDownload[] = [];
    const list = m.download ?? [];
    for (const [i, spec] of list.entries()) {
      ctx.log([`[${i + 1}/${list.length}] ${spec.url} -> ${spec.to}`]);
      const old = reuse?.downloads.find((v) => v.to === spec.to && v.sha256 === spec.sha256);
      if (old && reuse) {
        const kept = await reuseDownload(reuse.app_dir, appDir, spec.to, spec.sha256);
        if (kept) {
          ctx.log(['unchanged since the installed version: kept']);
          verified.push({ to: spec.to, sha256: spec.sha256, size: kept.size, mtime_ms: kept.mtimeMs });
          continue;
        }
      }
      const target = resolveDownloadTarget(appDir, spec.to);
      try {
        const done = await fetchDownload(spec, {
          appDir,
          sourceDir,
          signal: ctx.signal,
          log: ctx.log,
          progress: (bytes, total) => ctx.progress(bytes, total),
        });
        verified.push({ to: spec.to, sha256: spec.sha256, size: done.size, mtime_ms: done.mtimeMs });
      } catch (err) {
        if (ctx.signal.aborted) await removePartial(target);
        throw err;
      }
    }
    return verified;
  }

  /** Runs one phase as its own job and resolves with the finished job. */
  function phaseJob(
    s: InstalledStudio,
    kind: 'install' | 'build' | 'download' | 'update' | 'uninstall',
    title: string,
    work: (ctx: JobContext) => Promise<Record<string, unknown> | void>,
    cleanup?: (cancelled: boolean) => Promise<void>,
  ): { job: JobRow; done: Promise<JobRow> } {
    let signal: AbortSignal | null = null;
    const handle = d.jobs.runJob({
      studioId: s.id,
      kind,
      title,
      work: (ctx) => {
        signal = ctx.signal;
        return work(ctx);
      },
      cleanup: cleanup ? () => cleanup(signal?.aborted ?? false) : undefined,
    });
    return handle;
  }

  /** After the install job: the build and download jobs, then `installed`; any failure leaves `failed`. */
  async function finishInstall(first: Promise<JobRow>, s: InstalledStudio): Promise<void> {
    const m = s.manifest;
    let job = await first;
    if (job.state === 'succeeded' && (m.build ?? []).length > 0) {
      job = await phaseJob(s, 'build', `Build ${m.name} ${m.version}`, (ctx) => ctx.runSteps(stepsOf(m, 'build', s.app_dir))).done;
    }
    let downloads: VerifiedDownload[] = [];
    if (job.state === 'succeeded' && (m.download ?? []).length > 0) {
      job = await phaseJob(s, 'download', `Download files for ${m.name} ${m.version}`, async (ctx) => {
        downloads = await downloadAll(ctx, m, s.app_dir, s.source);
      }).done;
    }
    if (job.state === 'succeeded') {
      setState(s.id, { state: 'installed', installed: true, downloads, last_error: null });
    } else {
      const what = job.state === 'cancelled' ? `The ${job.kind} job was cancelled.` : `The ${job.kind} job failed: ${job.last_error ?? 'see its log'}`;
      setState(s.id, { state: 'failed', last_error: what });
    }
  }

  /** Install (copy) or link (by reference): the checks, the registration, then the jobs. */
  async function install(source: string, link: boolean): Promise<JobRow> {
    const src = link ? await linkableSource(source, d.dataDir) : await launchableSource(source);
    const m = await readManifest(src);
    const id = m.id;
    const appDir = link ? src : appDirOf(id);
    checkContained(m, appDir);
    await checkResolvedInside(m, src);
    checkDownloadUrls(m, src);
    const now = nowIso();
    /** The manifest of a failed earlier install whose app folder may hold partial downloads to resume. */
    let failedBefore: Manifest | null = null;
    const s = d.store.transaction(() => {
      const existing = d.store.get(id);
      if (existing && (existing.installed || d.jobs.store.activeRunner(id))) {
        throw new ApiError(409, 'id_taken', `A studio with the id "${id}" is already installed; update or uninstall it.`, { id });
      }
      if (existing && !existing.linked) failedBefore = existing.manifest;
      if (!d.studios.get(id)) d.studios.add({ id, name: m.name });
      d.declareIndexes(id, m.collections);
      return d.store.put({
        id,
        name: m.name,
        version: m.version,
        manifest: m,
        source: src,
        linked: link,
        app_dir: appDir,
        state: 'installing',
        installed: false,
        downloads: [],
        port: null,
        token_hash: null,
        last_error: null,
        created_at: existing?.created_at ?? now,
        updated_at: now,
      });
    });
    const dirs = d.studioDirs(id);
    ensureDir(dirs.stage_dir);
    ensureDir(dirs.data_dir);
    d.announce(s);
    const tmp = join(studioRoot(id), `.app-${Date.now()}.tmp`);
    const handle = phaseJob(
      s,
      'install',
      `${link ? 'Link' : 'Install'} ${m.name} ${m.version}`,
      async (ctx) => {
        if (!link) {
          ctx.log([`copying ${src}`]);
          const files = await copyTree(src, tmp, ctx.signal);
          if (await keepPartials(failedBefore, m, appDir, tmp)) ctx.log(['kept the partial downloads of the earlier attempt']);
          await removeTree(appDir);
          await rename(tmp, appDir);
          ctx.log([`copied ${files} files to ${appDir}`]);
        }
        await ctx.runSteps(stepsOf(m, 'install', appDir));
      },
      async (cancelled) => {
        await removeTree(tmp);
        if (cancelled && !link) await removeTree(appDir);
      },
    );
    void finishInstall(handle.done, s).catch((err) => console.error(`install of ${id}:`, err));
    return handle.job;
  }

  async function update(id: string, source: string, approve: boolean): Promise<JobRow> {
    const current = d.store.require(id);
    if (!current.installed) {
      throw new ApiError(409, 'not_installed', `The studio "${id}" was never installed completely; install it again instead.`, { state: current.state });
    }
    requireIdle(id);
    const src = current.linked ? await linkableSource(source, d.dataDir) : await launchableSource(source);
    const m = await readManifest(src);
    if (m.id !== id) {
      throw ApiError.badRequest(`${MANIFEST_FILE}: the new version's id is "${m.id}", not "${id}".`, { member: 'manifest.id' });
    }
    const added = m.capabilities.filter((c) => !current.manifest.capabilities.includes(c));
    if (added.length > 0 && !approve) {
      throw new ApiError(
        409,
        'approval_required',
        `The new version asks for capabilities the installed one does not have: ${added.join(', ')}. Send the update again with "approve": true to grant them.`,
        { approval: { capabilities: added } },
      );
    }
    const nextDir = current.linked ? src : join(studioRoot(id), 'app.next');
    checkContained(m, nextDir);
    await checkResolvedInside(m, src);
    checkDownloadUrls(m, src);
    // Before the job, so a bad index is a 400 and never a failure after the swap. An index
    // changes speed only, never results: one declared for an update that then fails is harmless.
    d.declareIndexes(id, m.collections);
    const tmp = join(studioRoot(id), `.next-${Date.now()}.tmp`);
    let swapped = false;
    const handle = phaseJob(
      current,
      'update',
      `Update ${current.name} ${current.version} to ${m.version}`,
      async (ctx) => {
        if (!current.linked) {
          await removeTree(nextDir);
          ctx.log([`copying ${src}`]);
          await copyTree(src, tmp, ctx.signal);
          await rename(tmp, nextDir);
        }
        await ctx.runSteps(stepsOf(m, 'install', nextDir));
        await ctx.runSteps(stepsOf(m, 'build', nextDir));
        const downloads = await downloadAll(ctx, m, nextDir, src, current);
        // The point of no return: past here a cancel no longer undoes the update.
        ctx.signal.throwIfAborted();
        swapped = true;
        const wasRunning = d.runtime.isRunning(id);
        if (wasRunning) {
          ctx.log(['stopping the running version']);
          await d.runtime.stopIfRunning(id);
        }
        if (!current.linked) {
          const old = join(studioRoot(id), 'app.old');
          await removeTree(old);
          await rename(current.app_dir, old);
          await rename(nextDir, current.app_dir);
          await removeTree(old);
        }
        d.announce(
          d.store.change(id, (s) => ({
            ...s,
            name: m.name,
            version: m.version,
            manifest: m,
            source: src,
            app_dir: current.linked ? src : current.app_dir,
            downloads,
            state: 'installed',
            last_error: null,
          })),
        );
        ctx.log([`updated to ${m.version}`]);
        if (wasRunning) {
          ctx.log(['starting the new version']);
          await d.runtime.start(id).catch((err: Error) => ctx.log([`could not start it again: ${err.message}`]));
        }
      },
      async () => {
        if (swapped) return;
        await removeTree(tmp);
        if (!current.linked) await removeTree(nextDir);
      },
    );
    return handle.job;
  }

  async function uninstall(id: string, confirm: boolean, purge: boolean): Promise<JobRow> {
    const s = d.store.require(id);
    if (!confirm) {
      throw new ApiError(
        409,
        'confirm_required',
        `Uninstalling removes the studio's app folder${purge ? ' and all of its data' : ''}; send "confirm": true to go ahead.`,
        { purge },
      );
    }
    requireIdle(id);
    const previous = s.state;
    setState(id, { state: 'uninstalling' });
    const handle = phaseJob(
      s,
      'uninstall',
      `Uninstall ${s.name}${purge ? ' and delete its data' : ''}`,
      async (ctx) => {
        if (await d.runtime.stopIfRunning(id)) ctx.log(['stopped the running studio']);
        if (!s.linked) {
          for (const dir of ['app', 'app.next', 'app.old']) await removeTree(join(studioRoot(id), dir));
          ctx.log(['removed the app folder']);
        }
        const revoked = d.studios.revokeStudioTokens(id);
        ctx.log([`revoked ${revoked} token(s)`]);
        if (purge) {
          await d.purge(id);
          ctx.log(["deleted the studio's data (records, documents, sessions, gallery items, sequences, files)"]);
        }
        d.store.remove(id);
        d.announceRemoved(id);
      },
      async () => {
        setState(id, { state: 'failed', last_error: `The uninstall did not finish (it was ${previous}); uninstall again.` });
      },
    );
    return handle.job;
  }

  return {
    install: (source: string) => install(source, false),
    link: (source: string) => install(source, true),
    update,
    uninstall,
  };
}

export type Lifecycle = ReturnType<typeof createLifecycle>;

/** An installable source: an absolute path to a folder holding a manifest (422 `not_launchable` otherwise). */
async function launchableSource(source: string): Promise<string> {
  if (!isAbsolute(source)) throw ApiError.badRequest('source must be an absolute folder path.', { member: 'source' });
  const path = resolve(source);
  const st = await lstat(path).catch(() => null);
  if (!st || !st.isDirectory()) {
    throw new ApiError(422, 'not_launchable', `There is no folder at ${path}.`, { source: path });
  }
  return path;
}

/**
 * A linkable source (else 422 `not_linkable`): a plain folder, outside
 * Backlot's data dir, with no symbolic link anywhere in its path.
 */
async function linkableSource(source: string, dataDir: string): Promise<string> {
  if (!isAbsolute(source)) throw ApiError.badRequest('source must be an absolute folder path.', { member: 'source' });
  const path = resolve(source);
  const refuse = (why: string) => new ApiError(422, 'not_linkable', `${path} cannot be linked: ${why}`, { source: path });
  const { root } = parsePath(path);
  let walked = root;
  for (const part of path.slice(root.length).split(sep).filter(Boolean)) {
    walked = join(walked, part);
    const st = await lstat(walked).catch(() => null);
    if (!st) throw new ApiError(422, 'not_launchable', `There is no folder at ${path}.`, { source: path });
    if (st.isSymbolicLink()) throw refuse(`${walked} is a symbolic link; link the folder it points to.`);
    if (walked === path && !st.isDirectory()) throw refuse('it is not a folder.');
  }
  // The data dir as it really is: named through a link, its lexical name would not contain the real path.
  const realData = await realpath(dataDir).catch(() => resolve(dataDir));
  if (inside(realData, path) || inside(path, realData)) throw refuse("it is inside Backlot's data folder (or holds it).");
  return path;
}

/** The source's manifest: 422 `not_launchable` when there is none, 400 when it is bad. */
async function readManifest(src: string): Promise<Manifest> {
  const file = join(src, MANIFEST_FILE);
  const st = await lstat(file).catch(() => null);
  if (!st) throw new ApiError(422, 'not_launchable', `${src} has no ${MANIFEST_FILE}; a studio folder needs one at its root.`, { source: src });
  if (!st.isFile()) throw ApiError.badRequest(`${file} is not a regular file.`, { member: 'manifest' });
  if (st.size > MAX_MANIFEST_BYTES) throw ApiError.badRequest(`${file} is larger than ${MAX_MANIFEST_BYTES} bytes.`, { member: 'manifest' });
  return parseManifest(await readFile(file, 'utf8'));
}

function checkDownloadUrls(m: Manifest, src: string): void {
  (m.download ?? []).forEach((d, i) => {
    try {
      parseDownloadUrl(d.url, src);
    } catch (err) {
      if (err instanceof DownloadUrlError) throw blocked(`manifest.download.${i}.url: ${err.message}`, `manifest.download.${i}.url`);
      throw err;
    }
  });
}

/**
 * Reinstalling over a failed install: a partial download (`<to>.part`, kept
 * by a failed download so that the next attempt resumes with Range) moves
 * from the old app folder into the new copy when the new manifest asks for
 * the same file from the same URL. True when one moved.
 */
async function keepPartials(before: Manifest | null, m: Manifest, fromApp: string, toApp: string): Promise<boolean> {
  let kept = false;
  for (const spec of m.download ?? []) {
    if (!(before?.download ?? []).some((o) => o.url === spec.url && o.sha256 === spec.sha256 && o.to === spec.to)) continue;
    let from: string;
    let to: string;
    try {
      from = partialPath(resolveDownloadTarget(fromApp, spec.to));
      to = partialPath(resolveDownloadTarget(toApp, spec.to));
    } catch {
      continue;
    }
    const st = await lstat(from).catch(() => null);
    if (!st?.isFile() || st.size === 0) continue;
    // Only a file really inside the old app folder (no link in its path leads elsewhere).
    const real = await realpath(from).catch(() => null);
    if (real === null || !inside(await realpath(fromApp), real)) continue;
    await mkdir(dirname(to), { recursive: true });
    await rename(from, to);
    kept = true;
  }
  return kept;
}

/** Hard-links (else copies) a verified download of the installed version into the new folder, if its bytes still match. */
async function reuseDownload(fromApp: string, toApp: string, to: string, sha256: string): Promise<{ size: number; mtimeMs: number } | null> {
  const from = join(fromApp, to);
  const dest = join(toApp, to);
  if (!(await verifyFile(from, sha256))) return null;
  await mkdir(dirname(dest), { recursive: true });
  await removeTree(dest);
  await link(from, dest).catch(() => copyFile(from, dest));
  const st = await stat(dest);
  return { size: st.size, mtimeMs: st.mtimeMs };
}
