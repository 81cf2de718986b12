// Sketchpad page. Talks to its own server for /live (server-sent events) and
// /ws (WebSocket echo), and to Backlot's data API at the same-origin prefix
// /_backlot/api/v1, where the service adds the studio's token: the page never
// holds one.
'use strict';

const API = '/_backlot/api/v1';
const DEFAULT_BRUSH = { color: '#1f6feb', size: 6 };
const BACKGROUND = '#ffffff'; // drawings are saved on white, in light and dark mode

const $ = (id) => document.getElementById(id);
const canvas = $('canvas');
const ctx = canvas.getContext('2d');
const brush = { ...DEFAULT_BRUSH };

// ---------------------------------------------------------------- status line

function setStatus(text, kind = 'info') {
  const el = $('status');
  el.textContent = text;
  el.dataset.kind = kind;
}

/** An API failure carries Backlot's error body {code, message, details}. */
class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code ? body.code : 'http_' + status;
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
    // not JSON: fall through with body = null
  }
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

function describe(err) {
  return err instanceof ApiError ? `${err.message} (${err.code})` : String(err.message || err);
}

// ---------------------------------------------------------------- drawing

function clearCanvas() {
  ctx.fillStyle = BACKGROUND;
  ctx.fillRect(0, 0, canvas.width, canvas.height);
}

/** Pointer position in canvas pixels (the canvas is scaled by CSS). */
function point(e) {
  const r = canvas.getBoundingClientRect();
  return { x: ((e.clientX - r.left) * canvas.width) / r.width, y: ((e.clientY - r.top) * canvas.height) / r.height };
}

// The last point of each stroke in progress, by pointer (two fingers draw two lines).
const strokes = new Map();

function strokeTo(pointerId, e) {
  const from = strokes.get(pointerId);
  const p = point(e);
  // Pens report pressure; mice report 0.5 while pressed.
  const pressure = e.pointerType === 'pen' && e.pressure > 0 ? e.pressure * 2 : 1;
  ctx.strokeStyle = brush.color;
  ctx.lineWidth = Math.max(1, brush.size * pressure * (canvas.width / canvas.getBoundingClientRect().width));
  ctx.lineCap = 'round';
  ctx.lineJoin = 'round';
  ctx.beginPath();
  ctx.moveTo(from.x, from.y);
  ctx.lineTo(p.x + 0.01, p.y); // a zero-length line would draw nothing for a tap
  ctx.stroke();
  strokes.set(pointerId, p);
}

canvas.addEventListener('pointerdown', (e) => {
  if (e.button !== 0) return;
  canvas.setPointerCapture(e.pointerId);
  strokes.set(e.pointerId, point(e));
  strokeTo(e.pointerId, e);
});
canvas.addEventListener('pointermove', (e) => {
  if (!strokes.has(e.pointerId)) return;
  // Coalesced events give the full path of fast strokes, not one point per frame.
  const events = e.getCoalescedEvents ? e.getCoalescedEvents() : [];
  for (const ev of events.length ? events : [e]) strokeTo(e.pointerId, ev);
});
for (const type of ['pointerup', 'pointercancel']) {
  canvas.addEventListener(type, (e) => strokes.delete(e.pointerId));
}

$('clear').addEventListener('click', () => {
  clearCanvas();
  setStatus('Canvas cleared.');
});

// ---------------------------------------------------------------- brush settings (KV)

function showBrush() {
  $('color').value = brush.color;
  $('size').value = String(brush.size);
  $('size-value').textContent = String(brush.size);
}

async function loadBrush() {
  try {
    const doc = await api('/kv/settings/brush');
    const v = doc.value || {};
    if (/^#[0-9a-f]{6}$/i.test(v.color)) brush.color = v.color;
    if (Number.isFinite(v.size)) brush.size = Math.min(48, Math.max(1, Math.round(v.size)));
  } catch (err) {
    // 404: never saved, keep the defaults. Anything else is worth showing.
    if (!(err instanceof ApiError && err.status === 404)) setStatus(`Could not load brush settings: ${describe(err)}`, 'error');
  }
  showBrush();
}

let saveTimer = null;
function saveBrushSoon() {
  clearTimeout(saveTimer);
  saveTimer = setTimeout(async () => {
    try {
      await api('/kv/settings/brush', {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ color: brush.color, size: brush.size }),
      });
    } catch (err) {
      setStatus(`Could not save brush settings: ${describe(err)}`, 'error');
    }
  }, 400);
}

$('color').addEventListener('input', (e) => {
  brush.color = e.target.value;
  saveBrushSoon();
});
$('size').addEventListener('input', (e) => {
  brush.size = Number(e.target.value);
  $('size-value').textContent = e.target.value;
  saveBrushSoon();
});

// ---------------------------------------------------------------- save to gallery

function parseTags(text) {
  const tags = text.split(',').map((t) => t.trim()).filter((t) => t.length > 0 && t.length <= 100);
  return [...new Set(tags)];
}

$('save-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const button = $('save');
  button.disabled = true;
  setStatus('Saving…');
  try {
    const png = await new Promise((resolve, reject) =>
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('The canvas could not be encoded'))), 'image/png'),
    );
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const filename = `drawing-${stamp}.png`;
    const asset = await api(`/assets?kind=image&filename=${encodeURIComponent(filename)}`, {
      method: 'POST',
      headers: { 'Content-Type': 'image/png' },
      body: png,
    });
    const prompt = $('prompt').value.trim();
    const item = await api('/gallery/items', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        asset_id: asset.id,
        title: prompt || `Drawing ${new Date().toLocaleString()}`,
        tags: parseTags($('tags').value),
        params: { prompt },
      }),
    });
    setStatus(`Saved to the gallery (item ${item.id}).`, 'ok');
    await loadGallery();
  } catch (err) {
    setStatus(`Save failed: ${describe(err)}`, 'error');
  } finally {
    button.disabled = false;
  }
});

// ---------------------------------------------------------------- gallery strip

async function loadGallery() {
  const gallery = $('gallery');
  try {
    const page = await api('/gallery/items?limit=24'); // newest first
    gallery.replaceChildren(...page.items.map(thumbnail));
    if (page.items.length === 0) {
      const empty = document.createElement('p');
      empty.className = 'empty';
      empty.textContent = 'Nothing saved yet. Draw something and press Save.';
      gallery.append(empty);
    }
  } catch (err) {
    setStatus(`Could not load the gallery: ${describe(err)}`, 'error');
  }
}

/** One saved drawing: its thumbnail, its title and the Send to Clipmaker control (send.js). */
function thumbnail(item) {
  const card = document.createElement('figure');
  card.className = 'card';
  card.dataset.itemId = item.id;
  const link = document.createElement('a');
  link.href = `${API}/assets/${encodeURIComponent(item.asset_id)}`;
  link.target = '_blank';
  link.rel = 'noopener';
  const img = document.createElement('img');
  img.src = `${API}/assets/${encodeURIComponent(item.asset_id)}/thumb`;
  img.alt = item.title || 'Untitled drawing';
  img.title = [item.title, item.tags.length ? `#${item.tags.join(' #')}` : ''].filter(Boolean).join('\n');
  img.dataset.itemId = item.id;
  img.loading = 'lazy';
  img.width = 160;
  img.height = 96;
  // A thumbnail that cannot load (asset reclaimed, say) keeps its alt text visible.
  img.addEventListener('error', () => img.classList.add('broken'));
  link.append(img);
  const caption = document.createElement('figcaption');
  caption.textContent = item.title || 'Untitled drawing';
  caption.title = caption.textContent;
  card.append(link, caption, sendControl(item));
  return card;
}

// ---------------------------------------------------------------- live indicators

function connectLive() {
  const el = $('live');
  // #live is a live region: change its text only when the state changes.
  const show = (state, text) => {
    if (el.dataset.state === state) return;
    el.dataset.state = state;
    el.textContent = text;
  };
  const source = new EventSource('/live');
  source.addEventListener('open', () => show('connected', 'Connected'));
  source.addEventListener('tick', (e) => {
    show('connected', 'Connected');
    el.title = `Server time ${JSON.parse(e.data).time}`;
  });
  // EventSource reconnects by itself (the server asks for 2 s).
  source.addEventListener('error', () => show('offline', 'Reconnecting…'));
}

function connectEcho(delay = 1000) {
  const out = $('ws-rtt');
  const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`);
  let timer = null;
  ws.addEventListener('open', () => {
    delay = 1000;
    const ping = () => ws.send(JSON.stringify({ sent: performance.now() }));
    ping();
    timer = setInterval(ping, 2000);
  });
  ws.addEventListener('message', (e) => {
    const { sent } = JSON.parse(e.data);
    out.textContent = `${(performance.now() - sent).toFixed(1)} ms`;
  });
  ws.addEventListener('close', () => {
    clearInterval(timer);
    out.textContent = 'offline';
    setTimeout(() => connectEcho(Math.min(delay * 2, 15000)), delay);
  });
}

// ---------------------------------------------------------------- start

clearCanvas();
showBrush();
connectLive();
connectEcho();
loadBrush();
loadGallery();
loadSent();
