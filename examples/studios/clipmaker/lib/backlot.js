// A tiny client for Backlot's data API, from the studio's server side: it
// calls $BACKLOT_URL with the studio's token ($BACKLOT_TOKEN). (The page uses
// the same-origin /_backlot/api/v1 prefix instead and never sees the token.)
'use strict';

/** A non-2xx answer from Backlot, with its error body {code, message, details}. */
class BacklotError extends Error {
  constructor(method, path, status, body) {
    const code = (body && body.code) || `http_${status}`;
    super(`${method} ${path}: ${status} ${code}: ${(body && body.message) || 'no message'}`);
    this.status = status;
    this.code = code;
    this.apiMessage = (body && body.message) || ''; // Backlot's own wording, without method and path
    this.details = (body && body.details) || {};
  }
}

function createClient(baseUrl = process.env.BACKLOT_URL, token = process.env.BACKLOT_TOKEN) {
  if (!baseUrl || !token) return null;
  const base = baseUrl.replace(/\/+$/, '');

  /** Sends one request; resolves to the parsed JSON body (null for 204). */
  async function call(method, path, body) {
    const headers = { Authorization: `Bearer ${token}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed = null;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
    }
    if (!res.ok) throw new BacklotError(method, path, res.status, parsed);
    return parsed;
  }

  return {
    get: (path) => call('GET', path),
    post: (path, body = {}) => call('POST', path, body),
    patch: (path, body) => call('PATCH', path, body),
  };
}

module.exports = { createClient, BacklotError };
