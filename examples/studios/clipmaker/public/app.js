// Clipmaker page. Rendering goes through the studio's own server
// (POST /app/render, GET /app/status); clips are read from Backlot's gallery
// at the same-origin prefix /_backlot/api/v1, where the service adds the
// studio's token (the page never holds one).
'use strict';

const API = '/_backlot/api/v1';
const POLL_MS = 400;

const $ = (id) => document.getElementById(id);
let pollTimer = null;
let jobId = null; // the running render's task job, for Cancel

// ---------------------------------------------------------------- helpers

function setStatus(text, kind = 'info') {
  const el = $('status');
  el.textContent = text;
  el.dataset.kind = kind;
}

/** An error answer: Backlot and this studio both send {code, message, details}. */
class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code ? body.code : `http_${status}`;
    this.details = (body && body.details) || {};
  }
}

async function request(url, options = {}) {
  const res = await fetch(url, options);
  if (res.status === 204) return null;
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON
  }
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

const postJson = (url, body) =>
  request(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

function describe(err) {
  return err instanceof ApiError ? `${err.message} (${err.code})` : String(err.message || err);
}

// ---------------------------------------------------------------- progress

function setProgress(num, den) {
  const pct = den > 0 ? Math.round((100 * num) / den) : 0;
  const bar = $('progress');
  bar.setAttribute('aria-valuenow', String(pct));
  const idle = bar.dataset.busy !== 'true';
  let text = idle ? 'Idle' : 'Starting';
  if (den > 0) text = num >= den ? 'Done' : `${pct}% (${(num / 1000).toFixed(1)} of ${(den / 1000).toFixed(1)} s)`;
  bar.setAttribute('aria-valuetext', text);
  bar.querySelector('.fill').style.width = `${pct}%`;
}

function setBusy(busy) {
  $('render').disabled = busy;
  $('cancel').hidden = !busy;
  $('cancel').disabled = false;
  for (const b of document.querySelectorAll('#clips button')) b.disabled = busy;
  $('progress').dataset.busy = String(busy);
}

/** Follows the running render through GET /app/status until it ends. */
function followRender() {
  clearInterval(pollTimer);
  pollTimer = setInterval(async () => {
    try {
      const s = await request('/app/status');
      if (!s.render) return stopFollowing();
      jobId = s.render.job_id;
      setProgress(s.render.progress_num, s.render.progress_den);
    } catch {
      // the server may be restarting; keep trying
    }
  }, POLL_MS);
}

function stopFollowing() {
  clearInterval(pollTimer);
  pollTimer = null;
  jobId = null;
}

// ---------------------------------------------------------------- render

async function render(body, label) {
  setBusy(true);
  setProgress(0, 0);
  setStatus(`${label}…`);
  followRender();
  try {
    const r = await postJson('/app/render', body);
    setProgress(1, 1);
    const opened = r.opened ? 'opened in the editor.' : `not opened in the editor: ${r.open_message}`;
    setStatus(`Clip made and added to the sequence; ${opened}`, 'ok');
    await loadClips();
  } catch (err) {
    setBusy(false);
    setProgress(0, 0);
    if (err.code === 'cancelled') setStatus('Render cancelled.');
    else setStatus(`Render failed: ${describe(err)}`, 'error');
  } finally {
    stopFollowing();
    setBusy(false);
  }
}

$('render-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const seconds = Number($('seconds').value);
  if (!Number.isFinite(seconds) || seconds < 1 || seconds > 5) {
    setStatus('Seconds must be between 1 and 5.', 'error');
    $('seconds').focus();
    return;
  }
  render({ prompt: $('prompt').value, pattern: $('pattern').value, seconds }, 'Rendering');
});

$('cancel').addEventListener('click', async () => {
  if (!jobId) return;
  $('cancel').disabled = true;
  try {
    // A task job's cancel only records the request; the server sees it and stops ffmpeg.
    await request(`${API}/jobs/${encodeURIComponent(jobId)}:cancel`, { method: 'POST' });
    setStatus('Cancelling…');
  } catch (err) {
    $('cancel').disabled = false;
    setStatus(`Could not cancel: ${describe(err)}`, 'error');
  }
});

// ---------------------------------------------------------------- clips

async function loadClips() {
  const list = $('clips');
  try {
    const page = await request(`${API}/gallery/items?kind=video&limit=24`); // newest first
    list.replaceChildren(...page.items.map(clip));
    if (page.items.length === 0) {
      const li = document.createElement('li');
      li.className = 'empty';
      li.textContent = 'No clips yet. Pick a pattern and press Render.';
      list.append(li);
    }
  } catch (err) {
    setStatus(`Could not load clips: ${describe(err)}`, 'error');
  }
}

function clip(item) {
  const li = document.createElement('li');
  li.dataset.itemId = item.id;
  // No thumbnails for video: the player itself, loading only its metadata
  // (the asset route answers byte ranges, so seeking works).
  const video = document.createElement('video');
  video.src = `${API}/assets/${encodeURIComponent(item.asset_id)}`;
  video.controls = true;
  video.preload = 'metadata';
  video.setAttribute('aria-label', item.title || 'Clip');

  const meta = document.createElement('div');
  meta.className = 'meta';
  const title = document.createElement('strong');
  title.textContent = item.title || 'Untitled clip';
  const detail = document.createElement('span');
  const p = item.params || {};
  const parts = [p.pattern, p.seconds && `${p.seconds} s`, new Date(item.created_at).toLocaleString()];
  if (item.inputs && item.inputs.some((i) => i.role === 'source')) parts.push('variation');
  if (item.timeline_id) parts.push('exported sequence');
  detail.textContent = parts.filter(Boolean).join(' · ');

  const vary = document.createElement('button');
  vary.type = 'button';
  vary.textContent = 'Make a variation';
  vary.setAttribute('aria-label', `Make a variation of ${item.title || 'this clip'}`);
  vary.disabled = $('render').disabled;
  vary.addEventListener('click', () => variation(item));

  meta.append(title, detail, vary);
  li.append(video, meta);
  return li;
}

/** A variation keeps the prompt and length and moves to the next pattern. */
function variation(item) {
  const p = item.params || {};
  const patterns = [...$('pattern').options].map((o) => o.value);
  const next = patterns[(patterns.indexOf(p.pattern) + 1) % patterns.length] || patterns[0];
  const seconds = Number.isFinite(p.seconds) ? Math.min(5, Math.max(1, p.seconds)) : 2;
  render(
    { prompt: p.prompt || item.title || '', pattern: next, seconds, from_item: item.id },
    `Making a variation of "${item.title || item.id}"`,
  );
}

// ---------------------------------------------------------------- sent to you

/**
 * Work other studios sent that the user allowed ("Allow once") but Clipmaker has
 * not taken yet: each links to the receiving page, which takes it
 * (docs/studios.md, "Sending and receiving work").
 */
async function loadWaiting() {
  let page;
  try {
    page = await request(`${API}/handoffs?direction=received&limit=50`);
  } catch {
    return; // an older Backlot without handoffs: nothing to show
  }
  const waiting = page.items.filter((h) => h.state === 'approved');
  $('received-section').hidden = waiting.length === 0;
  $('received-section').dataset.loaded = 'true';
  $('waiting').replaceChildren(...waiting.map((h) => {
    const li = document.createElement('li');
    li.dataset.handoff = h.id;
    const from = h.from.charAt(0).toUpperCase() + h.from.slice(1);
    const what = document.createElement('span');
    what.textContent = `From ${from}${h.note ? `: “${h.note}”` : ''}`;
    const take = document.createElement('a');
    take.href = `/receive?handoff=${encodeURIComponent(h.id)}`;
    take.textContent = 'Take it';
    take.setAttribute('aria-label', `Take it: from ${from}${h.note ? `, ${h.note}` : ''}`);
    li.append(what, take);
    return li;
  }));
}

// ---------------------------------------------------------------- start

async function start() {
  try {
    const s = await request('/app/status');
    if (!s.ffmpeg) {
      $('render').disabled = true;
      setStatus('Rendering is unavailable: Backlot passed no ffmpeg (its own copy is missing on this platform). Install ffmpeg and restart the studio.', 'error');
    } else if (s.render) {
      // A render started before this page was opened (or reloaded).
      setBusy(true);
      jobId = s.render.job_id;
      setProgress(s.render.progress_num, s.render.progress_den);
      setStatus('A render is running…');
      followRender();
      const wait = setInterval(() => {
        if (pollTimer) return;
        clearInterval(wait);
        setBusy(false);
        setStatus('The render finished.');
        loadClips();
      }, POLL_MS);
    }
  } catch (err) {
    setStatus(`The studio server did not answer: ${describe(err)}`, 'error');
  }
  await Promise.all([loadClips(), loadWaiting()]);
}

start();
