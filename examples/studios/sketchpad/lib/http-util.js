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

module.exports = { sendJson, sendError, portFromArgs };
