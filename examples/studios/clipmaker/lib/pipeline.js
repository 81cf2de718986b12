// One render, start to finish: task job -> ffmpeg -> adopt -> gallery item
// -> timeline append -> open on the editor surface -> job succeeded.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { JobReporter } = require('./job-reporter');
const { startRender, WIDTH, HEIGHT, FPS } = require('./render');
const { HttpError } = require('./http-util');

const REEL_NAME = 'Clipmaker reel';
const CANCEL_POLL_MS = 500;
const PART_PREFIX = '.clipmaker-'; // temp files in the stage dir; see removeStaleParts()

/**
 * Renders one clip. `state` is the shared progress record that GET
 * /app/status reports; it gets job_id and progress as they become known.
 * Resolves to the response body; throws HttpError.
 */
async function runRender({ api, ffmpeg, stageDir, bed, request, state }) {
  const { prompt, pattern, seconds, from_item: fromItem } = request;

  // The source of a variation, before anything is created (404 if unknown).
  let source = null;
  if (fromItem) {
    source = await api.get(`/gallery/items/${encodeURIComponent(fromItem)}`).catch((err) => {
      if (err.status === 404) throw new HttpError(404, 'not_found', `No gallery item ${fromItem} to vary (from_item)`);
      throw backlotFailure('look up from_item', err);
    });
  }

  const den = Math.round(seconds * 1000); // progress in milliseconds of output
  const title = `Render ${pattern} ${seconds}s${prompt ? `: ${prompt}` : ''}`.slice(0, 200);
  const job = await api.post('/jobs', { title, progress_num: 0, progress_den: den }).catch((err) => {
    throw backlotFailure('create the job', err);
  });
  state.job_id = job.id;
  state.progress_num = 0;
  state.progress_den = den;
  const report = new JobReporter(api, job.id);
  try {
    return await renderAndRecord({ api, ffmpeg, stageDir, bed, request, state, source, job, den, report });
  } catch (err) {
    // Whatever went wrong, the job must not stay `running`.
    if (!report.finished) {
      console.error(err);
      await report.finish({ state: 'failed', last_error: `Unexpected error: ${err.message}`.slice(0, 10000) });
    }
    if (err instanceof HttpError) throw err;
    throw new HttpError(500, 'internal', `Render failed unexpectedly: ${err.message}`, { job_id: job.id });
  }
}

async function renderAndRecord({ api, ffmpeg, stageDir, bed, request, state, source, job, den, report }) {
  const { prompt, pattern, seconds } = request;

  const name = `clipmaker-${pattern}-${new Date().toISOString().replace(/[-:.]/g, '')}-${crypto.randomBytes(3).toString('hex')}`;
  const part = path.join(stageDir, `.${name}.part`); // starts with PART_PREFIX
  const final = path.join(stageDir, `${name}.mp4`);
  const fail = async (step, err, status = 502, code = 'backlot_error') => {
    await fs.promises.rm(part, { force: true });
    const message = `${step} failed: ${err.message}`;
    report.log(message);
    await report.finish({ state: 'failed', last_error: message.slice(0, 10000) });
    return new HttpError(status, code, message, { job_id: job.id, step, ...(err.code ? { cause: err.code } : {}) });
  };

  // --- render
  const started = Date.now();
  const render = startRender({
    ffmpeg, pattern, seconds, bed, out: part,
    onProgress: (ms) => {
      state.progress_num = Math.min(ms, den);
      report.progress(ms, den);
    },
    onLine: (line) => report.log(`ffmpeg: ${line}`),
  });
  report.log(`$ ffmpeg ${render.args.map(quote).join(' ')}`);

  // Cancel arrives as cancel_requested_at on the job (POST /jobs/{id}:cancel
  // from the page or anyone holding the token). A job that someone else has
  // already ended (the launcher's cancel, say) is treated the same way.
  let cancelled = false;
  let polling = false;
  const poll = setInterval(async () => {
    if (polling || cancelled) return;
    polling = true;
    try {
      const current = await api.get(`/jobs/${job.id}`);
      if (cancelRequested(current)) {
        cancelled = true;
        render.kill();
      }
    } catch (err) {
      console.error(`cancel poll: ${err.message}`);
    } finally {
      polling = false;
    }
  }, CANCEL_POLL_MS);
  let cancelReason = 'Cancelled';
  state.cancel = (reason) => {
    cancelled = true;
    cancelReason = reason;
    render.kill();
  };

  const result = await render.done;
  clearInterval(poll);
  state.cancel = null;
  if (!cancelled && result.code === 0) {
    // A cancel requested in the last poll interval still counts.
    const current = await api.get(`/jobs/${job.id}`).catch(() => null);
    if (current && cancelRequested(current)) cancelled = true;
  }

  if (cancelled) {
    await fs.promises.rm(part, { force: true });
    report.log(`${cancelReason}: ffmpeg stopped, partial file removed.`);
    await report.finish({ state: 'cancelled' });
    throw new HttpError(409, 'cancelled', 'The render was cancelled', { job_id: job.id });
  }
  if (result.code !== 0) {
    const why = result.errors.at(-1) || (result.signal ? `ended by ${result.signal}` : `exit code ${result.code}`);
    throw await fail('ffmpeg', new Error(why), 500, 'render_failed');
  }
  report.log(`ffmpeg finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // Only a complete file gets the final name (and so can be adopted).
  await fs.promises.rename(part, final);

  // --- adopt, record, append, open
  let asset;
  try {
    asset = await api.post('/assets:adopt', {
      path: final, kind: 'video', filename: `${name}.mp4`,
      width: WIDTH, height: HEIGHT, duration_s: seconds, fps: FPS,
    });
  } catch (err) {
    await fs.promises.rm(final, { force: true });
    throw await fail('adopt', err);
  }
  report.log(`Adopted as asset ${asset.id} (sha256 ${asset.sha256})`);

  let item;
  try {
    item = await api.post('/gallery/items', {
      asset_id: asset.id,
      title: prompt || `${pattern} ${seconds}s`,
      tags: ['clipmaker'],
      params: { prompt, pattern, seconds },
      inputs: source ? [{ asset_id: source.asset_id, role: 'source' }] : [],
    });
  } catch (err) {
    throw await fail('gallery item', err);
  }
  report.log(`Gallery item ${item.id}${source ? ` (a variation of ${source.id})` : ''}`);

  let timeline;
  try {
    timeline = await appendToReel(api, asset.id);
  } catch (err) {
    throw await fail('timeline append', err);
  }
  report.log(`Appended to sequence ${timeline.id} "${timeline.name}" (revision ${timeline.revision})`);

  // Opening needs an editor page connected to Backlot; without one the
  // service answers 501, which is normal and only reported.
  let opened = false;
  let openMessage = null;
  let surface = null;
  try {
    const answer = await api.post(`/timeline/${timeline.id}:open`);
    opened = true;
    surface = answer.surface;
    report.log(`Opened on the editor surface ${surface}`);
  } catch (err) {
    openMessage = err.apiMessage || err.message;
    report.log(`Not opened: ${err.message}`);
  }

  await report.finish({
    state: 'succeeded',
    progress_num: den,
    progress_den: den,
    data: { asset_id: asset.id, item_id: item.id, timeline_id: timeline.id },
  });
  return {
    job_id: job.id,
    item_id: item.id,
    asset_id: asset.id,
    timeline_id: timeline.id,
    opened,
    ...(opened ? { surface } : { open_message: openMessage }),
  };
}

/** Appends to the most recently written sequence; creates the reel when there is none. */
async function appendToReel(api, assetId) {
  try {
    return await api.post('/timeline:append', { asset_id: assetId });
  } catch (err) {
    if (err.code !== 'no_timeline') throw err;
  }
  const reel = await api.post('/timeline', { name: REEL_NAME, target: { width: WIDTH, height: HEIGHT, fps: FPS } });
  return api.post('/timeline:append', { asset_id: assetId, timeline_id: reel.id });
}

function cancelRequested(job) {
  return Boolean(job.cancel_requested_at) || !['queued', 'running'].includes(job.state);
}

function backlotFailure(step, err) {
  return new HttpError(502, 'backlot_error', `Could not ${step}: ${err.message}`, { step, ...(err.code ? { cause: err.code } : {}) });
}

/** Shell-style quoting, only for the log line that shows the command. */
function quote(arg) {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Removes temp files a killed studio left in the stage dir. */
function removeStaleParts(stageDir) {
  let names = [];
  try {
    names = fs.readdirSync(stageDir);
  } catch {
    return;
  }
  for (const n of names) {
    if (n.startsWith(PART_PREFIX) && n.endsWith('.part')) fs.rmSync(path.join(stageDir, n), { force: true });
  }
}

module.exports = { runRender, removeStaleParts, REEL_NAME };
