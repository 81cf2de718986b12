// Clipmaker's server: the page (public/) and a small JSON API of its own under
// /app/... . Rendering is done here, with the ffmpeg Backlot found
// ($BACKLOT_FFMPEG); results go into Backlot as asset, gallery item and
// timeline clip, with progress reported on a task job.
'use strict';

const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { serveStatic } = require('./lib/static');
const { sendJson, sendError, HttpError, readJson, portFromArgs } = require('./lib/http-util');
const { createClient } = require('./lib/backlot');
const { PATTERNS } = require('./lib/render');
const { runRender, removeStaleParts } = require('./lib/pipeline');

const PUBLIC = path.join(__dirname, 'public');
const BED = path.join(__dirname, 'models', 'bed.wav'); // placed by the manifest's download
const MIN_SECONDS = 1;
const MAX_SECONDS = 5;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const api = createClient();
const ffmpeg = process.env.BACKLOT_FFMPEG || null;
const stageDir = process.env.BACKLOT_STAGE_DIR || null;

// At most one render at a time; `current` is what GET /app/status shows.
let current = null;
let currentDone = null;

function validate(body) {
  const allowed = new Set(['prompt', 'pattern', 'seconds', 'from_item']);
  const unknown = Object.keys(body).filter((k) => !allowed.has(k));
  if (unknown.length) throw new HttpError(400, 'bad_request', `Unknown member(s): ${unknown.join(', ')}`);
  const prompt = body.prompt === undefined ? '' : body.prompt;
  if (typeof prompt !== 'string' || prompt.length > 1000) {
    throw new HttpError(400, 'bad_request', 'prompt must be a string of at most 1000 characters');
  }
  if (!PATTERNS.includes(body.pattern)) {
    throw new HttpError(400, 'bad_request', `pattern must be one of ${PATTERNS.join(', ')}`);
  }
  const seconds = body.seconds;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < MIN_SECONDS || seconds > MAX_SECONDS) {
    throw new HttpError(400, 'bad_request', `seconds must be a number from ${MIN_SECONDS} to ${MAX_SECONDS}`);
  }
  const fromItem = body.from_item === undefined || body.from_item === null ? null : body.from_item;
  if (fromItem !== null && (typeof fromItem !== 'string' || !ULID.test(fromItem))) {
    throw new HttpError(400, 'bad_request', 'from_item must be a gallery item id');
  }
  return { prompt: prompt.trim(), pattern: body.pattern, seconds, from_item: fromItem };
}

/** POST /app/render: renders one clip and answers when it is done. */
async function render(req, res) {
  const request = validate(await readJson(req));
  if (!ffmpeg) {
    throw new HttpError(501, 'unsupported',
      'ffmpeg is not available: Backlot passes it as BACKLOT_FFMPEG (its own copy, which this platform lacks). Install ffmpeg (or set BACKLOT_FFMPEG for the service) and restart the studio.',
      { tool: 'ffmpeg' });
  }
  if (!api || !stageDir) {
    throw new HttpError(503, 'not_configured', 'BACKLOT_URL, BACKLOT_TOKEN and BACKLOT_STAGE_DIR are not set: start Clipmaker from Backlot.');
  }
  if (!fs.existsSync(BED)) {
    throw new HttpError(503, 'not_configured', 'models/bed.wav is missing: install Clipmaker through Backlot, which downloads it.');
  }
  if (current) {
    throw new HttpError(409, 'busy', 'A render is already running; wait for it or cancel it.', { job_id: current.job_id });
  }
  // Claimed before the first await, so two requests cannot both pass.
  const state = { job_id: null, progress_num: 0, progress_den: 0, started_at: new Date().toISOString(), ...request };
  current = state;
  const work = runRender({ api, ffmpeg, stageDir, bed: BED, request, state });
  currentDone = work.catch(() => {});
  try {
    sendJson(res, 200, await work);
  } finally {
    current = null;
    currentDone = null;
  }
}

/** GET /app/status: what the page needs to draw itself and follow a render. */
function status(res) {
  sendJson(res, 200, {
    ffmpeg: Boolean(ffmpeg),
    configured: Boolean(api && stageDir),
    patterns: PATTERNS,
    seconds: { min: MIN_SECONDS, max: MAX_SECONDS },
    busy: Boolean(current),
    render: current && {
      job_id: current.job_id,
      progress_num: current.progress_num,
      progress_den: current.progress_den,
      pattern: current.pattern,
      seconds: current.seconds,
      prompt: current.prompt,
      started_at: current.started_at,
    },
  });
}

async function handle(req, res) {
  const url = new URL(req.url, 'http://localhost');
  if (url.pathname === '/app/render') {
    if (req.method !== 'POST') throw new HttpError(405, 'method_not_allowed', 'Use POST');
    return render(req, res);
  }
  if (url.pathname === '/app/status') {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'method_not_allowed', 'Use GET');
    return status(res);
  }
  if (url.pathname.startsWith('/app/')) throw new HttpError(404, 'not_found', `No API at ${url.pathname}`);
  if (url.pathname.startsWith('/_backlot/') || url.pathname.startsWith('/api/v1/')) {
    // Behind Backlot these paths never reach us; this is someone opening the
    // studio's port directly.
    throw new HttpError(404, 'not_found',
      'The Backlot data API is only reachable when the studio is opened through Backlot, e.g. http://clipmaker.localhost:7380/');
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'method_not_allowed', `${req.method} is not allowed here`);
  // The manifest's accepts.path: Backlot opens /receive?handoff=<id> for work another studio sent.
  const file = url.pathname === '/receive' ? '/receive.html' : url.pathname;
  if (await serveStatic(PUBLIC, req, res, file)) return;
  throw new HttpError(404, 'not_found', `Nothing at ${url.pathname}`);
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((err) => {
    if (!(err instanceof HttpError)) console.error(err);
    if (res.headersSent) return res.destroy();
    if (err instanceof HttpError) return sendError(res, err.status, err.code, err.message, err.details);
    sendError(res, 500, 'internal', 'Unexpected error; see the studio log');
  });
});

if (stageDir) removeStaleParts(stageDir);
if (!ffmpeg) console.log('BACKLOT_FFMPEG is not set: rendering is unavailable (501).');
if (!api) console.log('BACKLOT_URL / BACKLOT_TOKEN are not set: the page works, rendering does not.');

const port = portFromArgs();
server.listen(port, '127.0.0.1', () => {
  console.log(`Clipmaker listening on http://127.0.0.1:${server.address().port}`);
});

// The launcher stops a studio with SIGTERM: stop ffmpeg, let the render end
// its job as cancelled (partial file removed), then exit, within ~3 s.
let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    server.close();
    server.closeAllConnections();
    if (current && current.cancel) current.cancel('Studio stopping');
    if (currentDone) await Promise.race([currentDone, new Promise((r) => setTimeout(r, 3000))]);
    process.exit(0);
  });
}
