// "Send to Clipmaker": the control under each saved drawing. It asks Backlot to
// hand the drawing to Clipmaker (POST /handoffs), then follows the request in
// words until the user has answered it in the launcher and Clipmaker has taken
// it (docs/studios.md, "Sending and receiving work").
//
// It is followed by asking GET /handoffs/{id} every two seconds while the page is
// visible, not through /events: that stream needs the `jobs` capability, which
// would also let Sketchpad read and write jobs it has no use for, and one small
// GET per open request is cheap.
//
// Uses api(), ApiError and describe() from app.js (classic scripts share one
// global scope; this file is loaded first and only called once both have run).
'use strict';

const SEND_TO = 'clipmaker';
const FOLLOW_MS = 2000;

const STATE_WORDS = {
  pending: 'Waiting for your approval in the Backlot launcher',
  approved: 'Approved: waiting for Clipmaker to open it',
  accepted: 'Clipmaker took it',
  declined: 'Declined',
  withdrawn: 'Withdrawn',
  expired: 'Expired: nobody answered it within a day',
};
/** States in which the request may still change and can be withdrawn. */
const OPEN_STATES = new Set(['pending', 'approved']);

// State: the newest handoff sent for each gallery item, and what each item's
// control says besides it (a refusal, or "already sent").
const sent = new Map(); // item id -> Handoff
const notes = new Map(); // item id -> {text, kind}
const inFlight = new Set(); // item ids with a send or withdraw under way
let followTimer = null;
let polling = false;

// ---------------------------------------------------------------- views

/** The control for one saved drawing (app.js puts it under the thumbnail). */
function sendControl(item) {
  const box = document.createElement('div');
  box.className = 'send';
  box.dataset.itemId = item.id;
  const send = document.createElement('button');
  send.type = 'button';
  send.className = 'send-button';
  send.textContent = 'Send to Clipmaker';
  send.addEventListener('click', () => sendDrawing(item));
  const words = document.createElement('p');
  words.className = 'send-state';
  words.id = `send-state-${item.id}`;
  words.setAttribute('role', 'status');
  words.setAttribute('aria-live', 'polite');
  send.setAttribute('aria-describedby', words.id);
  const withdraw = document.createElement('button');
  withdraw.type = 'button';
  withdraw.className = 'withdraw';
  withdraw.textContent = 'Withdraw';
  withdraw.addEventListener('click', () => withdrawHandoff(item.id));
  box.append(send, words, withdraw);
  showSend(item.id, box);
  return box;
}

/** Draws one item's control from the state above. */
function showSend(itemId, box = document.querySelector(`.send[data-item-id="${CSS.escape(itemId)}"]`)) {
  if (!box) return;
  const handoff = sent.get(itemId);
  const note = notes.get(itemId);
  const open = Boolean(handoff && OPEN_STATES.has(handoff.state));
  const busy = inFlight.has(itemId);
  const words = box.querySelector('.send-state');
  let text = '';
  let kind = 'info';
  if (note) ({ text, kind } = note);
  else if (handoff) text = `${STATE_WORDS[handoff.state] || handoff.state}.`;
  if (words.textContent !== text) words.textContent = text;
  words.dataset.kind = kind;
  words.dataset.state = handoff ? handoff.state : '';
  words.hidden = text === '';
  box.querySelector('.send-button').disabled = busy || open;
  const withdraw = box.querySelector('.withdraw');
  withdraw.hidden = !open;
  withdraw.disabled = busy;
}

/** Keeps a handoff as its item's newest; a change of state replaces any note. */
function track(handoff) {
  if (!handoff.item_id) return;
  const before = sent.get(handoff.item_id);
  if (before && before.id !== handoff.id && before.created_at > handoff.created_at) return;
  if (!before || before.id !== handoff.id || before.state !== handoff.state) notes.delete(handoff.item_id);
  sent.set(handoff.item_id, handoff);
  showSend(handoff.item_id);
  if (OPEN_STATES.has(handoff.state)) follow();
}

// ---------------------------------------------------------------- actions

/** Refusals of POST /handoffs in words (docs/api.md lists the codes). */
function refusalWords(err) {
  switch (err.code) {
    case 'not_installed':
      return "Clipmaker isn't installed: install it from Examples in the launcher.";
    case 'not_launchable': {
      const kinds = Array.isArray(err.details.accepts) ? err.details.accepts : [];
      return kinds.length
        ? `Clipmaker can't take a drawing: it takes ${kinds.join(', ')} only.`
        : "Clipmaker can't take work from other studios.";
    }
    case 'quota_exceeded':
      return 'Too many requests are waiting for your approval: answer some in the Backlot launcher first.';
    case 'not_found':
      return 'This drawing is no longer in the gallery.';
    default:
      return `Could not send it: ${describe(err)}`;
  }
}

async function sendDrawing(item) {
  inFlight.add(item.id);
  notes.set(item.id, { text: 'Sending…', kind: 'info' });
  showSend(item.id);
  try {
    const handoff = await api('/handoffs', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        to: SEND_TO,
        asset_ids: [item.asset_id],
        item_id: item.id,
        ...(item.title ? { note: item.title.slice(0, 500) } : {}),
      }),
    });
    notes.delete(item.id);
    track(handoff);
  } catch (err) {
    if (err instanceof ApiError && err.code === 'already_exists' && err.details.handoff) {
      await followExisting(item.id, err.details.handoff);
    } else {
      notes.set(item.id, { text: err instanceof ApiError ? refusalWords(err) : `Could not send it: ${describe(err)}`, kind: 'error' });
    }
  } finally {
    inFlight.delete(item.id);
    showSend(item.id);
  }
}

/** 409 already_exists: the same request is still open; follow it rather than make another. */
async function followExisting(itemId, handoffId) {
  try {
    const handoff = await api(`/handoffs/${encodeURIComponent(handoffId)}`);
    track(handoff);
    const text = handoff.state === 'approved'
      ? 'This drawing was already sent and approved: waiting for Clipmaker to open it.'
      : 'This drawing is already waiting for your approval in the Backlot launcher.';
    notes.set(itemId, { text, kind: 'info' });
  } catch (err) {
    notes.set(itemId, { text: `Already sent, but its state could not be read: ${describe(err)}`, kind: 'error' });
  }
}

async function withdrawHandoff(itemId) {
  const handoff = sent.get(itemId);
  if (!handoff) return;
  inFlight.add(itemId);
  showSend(itemId);
  try {
    await api(`/handoffs/${encodeURIComponent(handoff.id)}`, { method: 'DELETE' });
    track({ ...handoff, state: 'withdrawn' });
  } catch (err) {
    // 409 conflict: it was answered meanwhile; show what became of it.
    const now = await api(`/handoffs/${encodeURIComponent(handoff.id)}`).catch(() => null);
    if (now) track(now);
    const why = now ? `it is ${(STATE_WORDS[now.state] || now.state).toLowerCase()}` : describe(err);
    notes.set(itemId, { text: `Could not withdraw it: ${why}.`, kind: 'error' });
  } finally {
    inFlight.delete(itemId);
    showSend(itemId);
  }
}

// ---------------------------------------------------------------- following

function follow() {
  if (followTimer) return;
  followTimer = setInterval(pollOpen, FOLLOW_MS);
}

/** One GET per open request, only while someone can see the page. */
async function pollOpen() {
  if (polling || document.visibilityState !== 'visible') return;
  const open = [...sent.values()].filter((h) => OPEN_STATES.has(h.state));
  if (open.length === 0) {
    clearInterval(followTimer);
    followTimer = null;
    return;
  }
  polling = true;
  try {
    for (const h of open) {
      try {
        track(await api(`/handoffs/${encodeURIComponent(h.id)}`));
      } catch {
        // the service may be restarting; the next round asks again
      }
    }
  } finally {
    polling = false;
  }
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') pollOpen();
});

/** What was sent before this page was opened (newest first), so each drawing shows it. */
async function loadSent() {
  try {
    const page = await api('/handoffs?direction=sent&limit=100');
    for (const h of [...page.items].reverse()) track(h);
  } catch {
    // No list (an older Backlot): each control starts empty.
  }
}
