// Clipmaker's receiving page, /receive?handoff=<id> (the manifest's
// accepts.path): Backlot opens it once the user has allowed another studio's
// request in the launcher. It reads the handoff, checks that it is for
// Clipmaker, that it is approved and what kinds it offers, takes it
// (POST /handoffs/{id}:accept), puts the picture on the reel as a still clip,
// and renders the reel with the timeline export, whose gallery item lists the
// picture as an input: the launcher's lineage shows the drawing upstream
// (docs/studios.md, "Sending and receiving work").
'use strict';

const API = '/_backlot/api/v1';
const ME = 'clipmaker';
const TAKES = ['image']; // the manifest's accepts.kinds: what this page can put on the reel
const STILL_SECONDS = 3;
const REEL = { name: 'Clipmaker reel', target: { width: 640, height: 360, fps: 30 } }; // as lib/pipeline.js makes it
const JOB_POLL_MS = 500;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const $ = (id) => document.getElementById(id);
// One state object for the page: the handoff, what it offered that we can use,
// the reel that holds it.
const state = { handoff: null, stills: [], reel: null, rendering: false };

// ---------------------------------------------------------------- helpers

/** An error answer: Backlot sends {code, message, details}. */
class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code ? body.code : `http_${status}`;
    this.details = (body && body.details) || {};
  }
}

async function api(path, options = {}) {
  const res = await fetch(API + path, options);
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

const postJson = (path, body = {}) =>
  api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

function describe(err) {
  return err instanceof ApiError ? `${err.message} (${err.code})` : String(err.message || err);
}

/** "sketchpad" -> "Sketchpad": a studio can read another's id, not its display name. */
const studioName = (id) => id.charAt(0).toUpperCase() + id.slice(1);

function clock(seconds) {
  const s = Math.round(seconds * 10) / 10;
  return `${Math.floor(s / 60)}:${(s % 60).toFixed(1).padStart(4, '0')}`;
}

function say(el, text, kind = 'info') {
  el.textContent = text;
  el.dataset.kind = kind;
}

// ---------------------------------------------------------------- views

function showArrival() {
  const h = state.handoff;
  if (!h) return;
  const from = studioName(h.from);
  const count = h.asset_ids.length;
  $('received-from').textContent = `From ${from}: ${count === 1 ? 'one picture' : `${count} files`}`;
  $('received-note').hidden = !h.note;
  $('received-note').textContent = h.note ? `“${h.note}”` : '';
  const thumb = $('received-thumb');
  const first = state.stills[0];
  thumb.hidden = !first;
  if (first && !thumb.src.endsWith(`/assets/${first}/thumb`)) {
    thumb.src = `${API}/assets/${encodeURIComponent(first)}/thumb`;
    thumb.alt = h.note ? `The picture from ${from}: ${h.note}` : `The picture from ${from}`;
  }
}

function showReel() {
  const reel = state.reel;
  const button = $('render-reel');
  button.disabled = !reel || state.rendering;
  if (!reel) return;
  const clips = (reel.tracks.V1 || []).filter((c) => state.stills.includes(c.asset_id));
  const where = clips.map((c) => `${clock(c.start)} to ${clock(c.start + c.duration)}`).join(', ');
  $('reel-summary').textContent =
    `“${reel.name}” is ${clock(reel.duration)} long; the picture is on it from ${where}. ` +
    'Render the reel to a video: it goes to the gallery with the picture as its source.';
}

function setProgress(num, den) {
  const pct = den > 0 ? Math.min(100, Math.round((100 * num) / den)) : 0;
  const bar = $('progress');
  bar.setAttribute('aria-valuenow', String(pct));
  bar.setAttribute('aria-valuetext', den > 0 && num >= den ? 'Done' : `${pct}%`);
  bar.querySelector('.fill').style.width = `${pct}%`;
}

// ---------------------------------------------------------------- receiving

const STATE_WORDS = {
  pending: 'It is still waiting for your approval in the Backlot launcher.',
  declined: 'You declined it in the launcher; nothing was sent.',
  withdrawn: (from) => `${from} withdrew it; nothing was sent.`,
  expired: 'It expired before anyone answered it; nothing was sent.',
};

async function receive() {
  const stateLine = $('handoff-state');
  $('try-again').hidden = true;
  const id = new URLSearchParams(location.search).get('handoff');
  if (!id || !ULID.test(id)) {
    say(stateLine, 'No request to open here: Backlot opens this page when you allow another studio to send work to Clipmaker.', 'error');
    return;
  }
  let h;
  try {
    h = await api(`/handoffs/${encodeURIComponent(id)}`);
  } catch (err) {
    // A recipient sees a handoff only once the user has approved it; before that,
    // and for a handoff meant for another studio, the answer is 404.
    if (err.status === 404) {
      say(stateLine, 'This request is not for Clipmaker, or it is not approved yet: allow it in the Backlot launcher, then try again.', 'error');
    } else {
      say(stateLine, `Could not read the request: ${describe(err)}`, 'error');
    }
    $('try-again').hidden = false;
    return;
  }
  if (h.to !== ME) {
    say(stateLine, `This request is for ${studioName(h.to)}, not Clipmaker.`, 'error');
    return;
  }
  state.handoff = h;
  showArrival();

  let takenBefore = false;
  if (h.state === 'approved') {
    try {
      state.handoff = h = await postJson(`/handoffs/${encodeURIComponent(id)}:accept`);
    } catch (err) {
      if (err.code === 'missing') {
        say(stateLine, `What ${studioName(h.from)} sent is gone (deleted since it was sent), so nothing was taken.`, 'error');
        return;
      }
      if (err.code !== 'conflict') {
        say(stateLine, `Could not take it: ${describe(err)}`, 'error');
        $('try-again').hidden = false;
        return;
      }
      // 409 conflict: its state moved on meanwhile (taken in another tab, withdrawn...).
      state.handoff = h = await api(`/handoffs/${encodeURIComponent(id)}`).catch(() => h);
      takenBefore = h.state === 'accepted';
    }
  } else {
    takenBefore = h.state === 'accepted';
  }
  if (h.state !== 'accepted') {
    const words = STATE_WORDS[h.state];
    say(stateLine, typeof words === 'function' ? words(studioName(h.from)) : words || `It is ${h.state}.`, 'error');
    return;
  }
  await useOffered(takenBefore);
}

/**
 * The handoff is ours and accepted: its assets read as our own. Only the kinds
 * this page takes become stills (an offer may hold several kinds); an asset that
 * is not yet on a reel is appended, unless it was taken before and the user
 * since took it off (then they may add it again).
 */
async function useOffered(takenBefore) {
  const stateLine = $('handoff-state');
  const h = state.handoff;
  const kinds = await Promise.all(h.asset_ids.map(kindOf));
  state.stills = h.asset_ids.filter((_, i) => TAKES.includes(kinds[i]));
  const skipped = h.asset_ids.length - state.stills.length;
  showArrival();
  if (state.stills.length === 0) {
    say(stateLine, `Taken, but nothing in it is a picture, and Clipmaker puts only pictures on the reel.`, 'error');
    return;
  }
  const skippedWords = skipped ? ` (${skipped} file${skipped === 1 ? '' : 's'} of another kind left out)` : '';
  try {
    state.reel = await reelHolding(state.stills);
    if (state.reel) {
      say(stateLine, `${takenBefore ? 'You took this before' : 'Taken'}; it is on your reel${skippedWords}.`, 'ok');
    } else if (takenBefore) {
      say(stateLine, `You took this before, and it is not on a reel any more${skippedWords}.`);
      $('add-to-reel').hidden = false;
    } else {
      state.reel = await addToReel(state.stills);
      say(stateLine, `Taken and added to your reel as a ${STILL_SECONDS} s still${skippedWords}.`, 'ok');
    }
  } catch (err) {
    say(stateLine, `Taken, but it could not be put on the reel: ${describe(err)}`, 'error');
  }
  showReel();
}

/** The asset's kind, from the type its bytes are served with (a studio has no asset-info read). */
async function kindOf(assetId) {
  const res = await fetch(`${API}/assets/${encodeURIComponent(assetId)}`, { method: 'HEAD' });
  if (!res.ok) return null;
  const type = (res.headers.get('Content-Type') || '').split('/')[0];
  return ['image', 'video', 'audio'].includes(type) ? type : 'other';
}

/** Our newest sequence that has one of `assetIds` on a picture track, or null. */
async function reelHolding(assetIds) {
  const page = await api('/timeline?limit=100');
  return (
    page.items.find((t) =>
      Object.entries(t.tracks).some(([track, clips]) => track.startsWith('V') && clips.some((c) => assetIds.includes(c.asset_id))),
    ) || null
  );
}

/** Appends each still where Clipmaker's renders go: its last written sequence, else a new reel. */
async function addToReel(assetIds) {
  let reel = null;
  // With no sequence at all, make the reel first rather than be told 409 no_timeline.
  const some = await api('/timeline?limit=1');
  if (some.items.length === 0) reel = await postJson('/timeline', REEL);
  for (const assetId of assetIds) {
    const clip = { asset_id: assetId, duration: STILL_SECONDS, ...(reel ? { timeline_id: reel.id } : {}) };
    try {
      reel = await postJson('/timeline:append', clip);
    } catch (err) {
      if (err.code !== 'no_timeline') throw err;
      const made = await postJson('/timeline', REEL);
      reel = await postJson('/timeline:append', { ...clip, timeline_id: made.id });
    }
  }
  return reel;
}

$('add-to-reel').addEventListener('click', async () => {
  const button = $('add-to-reel');
  button.disabled = true;
  try {
    state.reel = await addToReel(state.stills);
    button.hidden = true;
    say($('handoff-state'), `Added to your reel as a ${STILL_SECONDS} s still.`, 'ok');
    showReel();
  } catch (err) {
    say($('handoff-state'), `Could not add it to the reel: ${describe(err)}`, 'error');
  } finally {
    button.disabled = false;
  }
});

$('try-again').addEventListener('click', () => receive());

// ---------------------------------------------------------------- rendering

/** Renders the reel with Backlot's timeline export and follows its job. */
async function renderReel() {
  const status = $('status');
  state.rendering = true;
  showReel();
  $('result').hidden = true;
  $('progress').hidden = false;
  setProgress(0, 0);
  say(status, 'Rendering the reel…');
  try {
    let job;
    try {
      job = await postJson(`/timeline/${encodeURIComponent(state.reel.id)}:export`, {});
    } catch (err) {
      // One export per sequence at a time: follow the running one.
      if (err.code !== 'already_exporting' || !err.details.job) throw err;
      job = await api(`/jobs/${encodeURIComponent(err.details.job)}`);
    }
    while (!['succeeded', 'failed', 'cancelled'].includes(job.state)) {
      setProgress(job.progress_num, job.progress_den);
      await new Promise((r) => setTimeout(r, JOB_POLL_MS));
      job = await api(`/jobs/${encodeURIComponent(job.id)}`);
    }
    if (job.state === 'cancelled') return say(status, 'The render was cancelled.');
    if (job.state === 'failed') return say(status, `The render failed: ${job.last_error || 'no reason given'}`, 'error');
    setProgress(1, 1);
    showResult(job.data);
  } catch (err) {
    say(status, `The render failed: ${describe(err)}`, 'error');
  } finally {
    state.rendering = false;
    showReel();
  }
}

function showResult({ asset_id: assetId, item_id: itemId }) {
  $('result-video').src = `${API}/assets/${encodeURIComponent(assetId)}`;
  $('result').hidden = false;
  $('result').dataset.itemId = itemId;
  // No link to the launcher: its page refuses navigations from a studio's origin
  // (docs/security.md), so the words say where to look.
  say(
    $('status'),
    `Rendered: the reel is in the launcher's Gallery (item ${itemId}), with the picture from ${studioName(state.handoff.from)} upstream in its lineage.`,
    'ok',
  );
}

$('render-reel').addEventListener('click', () => renderReel());

receive();
