import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import type { AssetsDomain } from '../assets';
import { hashHandle, sanitizeFilename, removeQuietly } from '../assets';
import { ApiError } from '../core/errors';
import type { Db } from '../db/open';
import type { GalleryStore } from '../gallery';
import type { JobContext, JobRow, JobsDomain } from '../jobs';
import { probeMedia, ProbeError, requireTool, runTool } from '../media';
import { assetIdsOf, sortTracks, type TimelineDoc } from './document';
import { planExport, videoClips } from './plan';
import { requireCopyable, type Probes } from './probes';
import { AAC_SAMPLE_RATES, planRender, type RenderPlan } from './render';
import type { ExportRequest } from './schema';
import { docOf, type TimelineRow, type TimelineStore } from './store';
import { isProgressLine, outputProblems, progressAfter } from './verify';

/**
 * Export (docs/api.md "Export `POST /timeline/{id}:export`"): a
 * runner job that renders a sequence with ffmpeg into a temp file of the blob
 * store, probes it against the target, and only then adopts it (a rename, no
 * copy) as an asset and records a gallery item with `timeline_id` and one
 * `clip` input per distinct asset. A cancelled or failed export leaves no file.
 */

/** Bytes of ffmpeg's stdout kept in memory: only its -progress lines are read, as they come. */
const PROGRESS_BYTES = 64 * 1024;

export interface ExporterDeps {
  db: Db;
  store: TimelineStore;
  assets: AssetsDomain;
  probes: Probes;
  jobs: JobsDomain;
  gallery: GalleryStore;
}

export function createExporter(deps: ExporterDeps) {
  const { store, assets, probes, jobs } = deps;
  /** Sequences with an export starting or running (exports at a time per sequence: 1), and its job once known. */
  const active = new Map<string, string | null>();

  return {
    /**
     * Starts an export of the caller's own sequence. Order: 422 without a
     * video clip, 501 without ffmpeg or ffprobe, 409 while one runs, then the
     * probes (422 for a clip that cannot be read or probed), the plan (422 when
     * `copy` cannot be), the sample rate (422 when AAC cannot carry it).
     */
    async start(row: TimelineRow, body: ExportRequest): Promise<JobRow> {
      const doc = docOf(row);
      const preset = body.preset ?? 'auto';
      if (videoClips(doc).length === 0) throw ApiError.invalidTimeline('The sequence has no video clip; add one before exporting.');
      requireTool('ffmpeg');
      requireTool('ffprobe');
      if (active.has(row.id)) throw ApiError.alreadyExporting(active.get(row.id) ?? '');
      if (!AAC_SAMPLE_RATES.includes(doc.target.sample_rate)) {
        throw ApiError.invalidTimeline(
          `AAC sound cannot be written at ${doc.target.sample_rate} Hz; set target.sample_rate to one of ${AAC_SAMPLE_RATES.join(', ')}.`,
        );
      }
      active.set(row.id, null);
      try {
        const clips = allClips(doc);
        const found = await probes.clipAssets(row.studio_id, clips);
        const plan = planExport(doc, (id) => ({ kind: found.get(id)!.view.kind, probe: found.get(id)!.probe }), preset);
        requireCopyable(plan);
        const tmp = assets.blobs.tempPath();
        const files = { output: `${tmp}.mp4`, listFile: `${tmp}.ffconcat`, graphFile: `${tmp}.graph` };
        const render = planRender({
          doc,
          path: plan.path,
          ...files,
          sourceOf(id) {
            const { view, probe } = found.get(id)!;
            return { kind: view.kind, file: assets.blobs.blobPath(view.sha256, view.ext), mime: view.mime, probe };
          },
        });
        const filename = outputName(body.filename, doc.name);
        const params = { preset, path: plan.path, revision: row.revision };
        const handle = jobs.runJob({
          studioId: row.studio_id,
          kind: 'export',
          title: `Export of "${doc.name}"`,
          timelineId: row.id,
          work: (ctx) => runExport(ctx, { row, doc, render, files, filename, params }),
        });
        active.set(row.id, handle.job.id);
        // As it stands once its work began (progress_den set), not as first inserted.
        return jobs.store.get(handle.job.id) ?? handle.job;
      } catch (err) {
        active.delete(row.id);
        throw err;
      }
    },

    /** Cancels an export of the sequence and resolves once it ended `cancelled`: 404 not its export, 409 finished. */
    async cancel(row: TimelineRow, jobId: string): Promise<void> {
      const job = jobs.store.get(jobId);
      if (!job || job.kind !== 'export' || job.timeline_id !== row.id) throw ApiError.notFound('The export');
      await jobs.cancelJob(jobId);
    },
  };

  async function runExport(
    ctx: JobContext,
    o: {
      row: TimelineRow;
      doc: TimelineDoc;
      render: RenderPlan;
      files: { output: string; listFile: string; graphFile: string };
      filename: string;
      params: Record<string, unknown>;
    },
  ): Promise<Record<string, unknown>> {
    const { render, files } = o;
    const assetIds = assetIdsOf(o.doc.tracks);
    let committed = false;
    // Read by ffmpeg until it exits: out of reclaim's reach even if the sequence is deleted or changed meanwhile.
    store.holdForExport(ctx.job.id, assetIds);
    try {
      for (const f of render.files) writeFileSync(f.path, f.text, { mode: 0o600 });
      const ffmpeg = requireTool('ffmpeg');
      ctx.log([`${ffmpeg} ${render.args.map(shellWord).join(' ')}`, `filter graph (${files.graphFile}):`]);
      ctx.log(render.files.find((f) => f.path === files.graphFile)!.text.trimEnd().split('\n'));
      // Milliseconds of the output's picture written (verify.ts progressAfter): only ever rises.
      let shown = 0;
      ctx.progress(shown, render.durationMs);
      let lastError = '';
      const result = await runTool('ffmpeg', render.args, {
        signal: ctx.signal,
        graceMs: ctx.graceMs,
        // In the process ledger while it runs: a SIGKILLed service's encoder is ended at the next start.
        groups: ctx.groups,
        maxStdoutBytes: PROGRESS_BYTES,
        onStdoutLine(line) {
          if (isProgressLine(line)) {
            const next = progressAfter(shown, line, render.durationMs, render.expect.fps);
            if (next !== shown) {
              shown = next;
              ctx.progress(shown, render.durationMs);
            }
          } else if (line !== '') {
            ctx.log([line]);
          }
        },
        onStderrLine(line) {
          if (line.trim() === '') return;
          lastError = line.trim();
          ctx.log([line]);
        },
      });
      if (ctx.signal.aborted) throw new Error('cancelled');
      if (result.code !== 0) {
        const how = result.signal ? `was ended by ${result.signal}` : `exited with code ${result.code}`;
        throw new Error(`ffmpeg ${how}${lastError ? `: ${lastError}` : ''}`);
      }
      ctx.progress(render.durationMs, render.durationMs);

      // The hash and the sync (durability) run while ffprobe reads the file: neither waits for the other.
      const hashed = hashAndSync(files.output);
      hashed.catch(() => undefined); // awaited below; a probe failure must not leave it unhandled
      let probe;
      try {
        probe = await probeMedia(files.output, { signal: ctx.signal });
      } catch (err) {
        await hashed.catch(() => undefined);
        if (ctx.signal.aborted) throw err;
        if (err instanceof ProbeError) throw new Error(`The exported file could not be probed: ${err.message}`);
        throw err;
      }
      const problems = outputProblems(probe, render.expect);
      if (problems.length > 0) {
        await hashed.catch(() => undefined);
        throw new Error(`The exported file does not match the sequence: ${problems.join('; ')}.`);
      }
      ctx.log([`checked: ${probe.video!.codec} ${probe.video!.width}x${probe.video!.height} at ${probe.video!.frame_rate} fps, ${probe.audio!.codec} at ${probe.audio!.sample_rate} Hz, ${probe.duration_s} s`]);

      const { sha256, size } = await hashed;
      if (ctx.signal.aborted) throw new Error('cancelled');
      // The point of no return, in one turn: the file becomes the asset (a rename) and the item is recorded.
      const out = deps.db
        .transaction(() => {
          const { view } = assets.ingest.commit(
            o.row.studio_id,
            { tmp: files.output, sha256, size },
            { kind: 'video', contentType: 'video/mp4', filename: o.filename, pinned: false, hints: {} },
            { mime: 'video/mp4', width: render.expect.width, height: render.expect.height, duration_s: probe.duration_s, fps: o.doc.target.fps },
          );
          const item = deps.gallery.create(o.row.studio_id, {
            asset_id: view.id,
            title: o.doc.name,
            params: o.params,
            inputs: assetIds.map((asset_id) => ({ asset_id, role: 'clip' })),
            timeline_id: o.row.id,
          });
          return { asset_id: view.id, item_id: item.id };
        })
        .immediate();
      committed = true;
      ctx.log([`adopted as asset ${out.asset_id}, gallery item ${out.item_id}`]);
      return out;
    } finally {
      for (const path of [files.listFile, files.graphFile, ...(committed ? [] : [files.output])]) removeQuietly(path);
      store.releaseExport(ctx.job.id);
      active.delete(o.row.id);
    }
  }
}

export type Exporter = ReturnType<typeof createExporter>;

/** Every clip of every track, V1..V9 then A1..A9, each in time order. */
function allClips(doc: TimelineDoc): { track: string; index: number; asset_id: string }[] {
  return sortTracks(Object.keys(doc.tracks)).flatMap((track) => doc.tracks[track]!.map((c, index) => ({ track, index, asset_id: c.asset_id })));
}

/** The library name of the output: the request's (`.mp4` added unless it ends so), else the sequence's name. */
function outputName(requested: string | undefined, sequenceName: string): string {
  const name = sanitizeFilename(requested ?? sequenceName) ?? 'export';
  return /\.mp4$/i.test(name) ? name : sanitizeFilename(`${name}.mp4`) ?? 'export.mp4';
}

/** SHA-256 of the finished file, read once; the file is made durable before a row names it. */
async function hashAndSync(file: string): Promise<{ sha256: string; size: number }> {
  const handle = await open(file, 'r');
  try {
    const sha256 = await hashHandle(handle);
    await handle.sync();
    return { sha256, size: (await handle.stat()).size };
  } finally {
    await handle.close();
  }
}

/** An argument as a person would paste it into a POSIX shell (for the log only; nothing is ever run through a shell). */
function shellWord(arg: string): string {
  return /^[A-Za-z0-9_./:=+,@%-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`;
}
