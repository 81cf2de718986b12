// Small helpers shared by the studio's routes.
'use strict';

/** Sends a JSON body; errors use Backlot's shape {code, message, details}. */
function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  res.end(text);
}

function sendError(res, status, code, message, details = {}) {
  sendJson(res, status, { code, message, details });
}

/** An error that becomes a JSON error response. */
class HttpError extends Error {
  constructor(status, code, message, details = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** Reads a small JSON object body; throws HttpError 400 or 413. */
async function readJson(req, limit = 16 * 1024) {
  const type = (req.headers['content-type'] || 'application/json').split(';')[0].trim().toLowerCase();
  if (type !== 'application/json') throw new HttpError(400, 'bad_request', 'Send the body as application/json');
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > limit) throw new HttpError(413, 'too_large', `The body is over ${limit} bytes`, { limit });
    chunks.push(chunk);
  }
  let body;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
  } catch {
    throw new HttpError(400, 'bad_request', 'The body is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HttpError(400, 'bad_request', 'The body must be a JSON object');
  }
  return body;
}

/** The port: `--port N` on the command line, else $PORT. */
function portFromArgs(argv = process.argv.slice(2), env = process.env) {
  const i = argv.indexOf('--port');
  const raw = i >= 0 ? argv[i + 1] : env.PORT;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`No usable port: give --port N or set PORT (got ${JSON.stringify(raw)})`);
  }
  return port;
}

module.exports = { sendJson, sendError, HttpError, readJson, portFromArgs };
