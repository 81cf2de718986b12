'use strict';
// The launcher page. Plain script, no build step, no imports: it reaches the
// service through `window.backlot` (main/bridge.ts: {apiUrl, dataDir,
// checkService()}) when Electron shows it, or through its own origin when the
// service itself serves it over http.

(function () {
  const bridge = window.backlot;
  const overHttp = location.protocol === 'http:' || location.protocol === 'https:';
  const apiUrl = bridge ? bridge.apiUrl : overHttp ? `${location.origin}/api/v1` : null;

  const statusEl = document.getElementById('status');
  const statusText = document.getElementById('status-text');
  const recheck = document.getElementById('recheck');
  document.getElementById('api-url').textContent = apiUrl || 'unknown';
  document.getElementById('data-dir').textContent = (bridge && bridge.dataDir) || 'unknown';

  // Same shape as ServiceCheck in main/bridge.ts.
  async function checkSameOrigin() {
    try {
      const res = await fetch(`${apiUrl}/openapi.json`, { cache: 'no-store' });
      if (!res.ok) return { ok: false, error: `HTTP ${res.status}` };
      const doc = await res.json();
      const info = (doc && doc.info) || {};
      return { ok: true, title: String(info.title || ''), version: String(info.version || '') };
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
  }

  function show(state, text) {
    statusEl.dataset.state = state;
    statusText.textContent = text;
  }

  async function check() {
    if (!apiUrl) {
      show('down', 'Not connected: open this page from the Backlot app (npm start).');
      recheck.disabled = true;
      return;
    }
    recheck.disabled = true;
    show('checking', 'Checking…');
    const result = bridge ? await bridge.checkService() : await checkSameOrigin();
    if (result.ok) {
      const name = [result.title || 'Backlot API', result.version].filter(Boolean).join(' ');
      show('ok', `Answering: ${name}`);
    } else {
      show('down', `Not answering: ${result.error}`);
    }
    recheck.disabled = false;
  }

  recheck.addEventListener('click', check);
  void check();
})();
