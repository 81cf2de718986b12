// Sketchpad's server: the page (public/), a server-sent-events clock at /live
// and a WebSocket echo at /ws. Everything else the page needs (KV, assets,
// gallery) it asks of Backlot itself at /_backlot/api/v1/... on the same origin.
'use strict';

const http = require('node:http');
const path = require('node:path');
const { serveStatic } = require('./lib/static');
const { acceptEcho } = require('./lib/websocket');
const { sendError, portFromArgs } = require('./lib/http-util');

const PUBLIC = path.join(__dirname, 'public');
const TICK_MS = Number(process.env.SKETCHPAD_TICK_MS) || 1000;

/** GET /live: one `tick` event per interval until the client goes away. */
function live(req, res) {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    // Keeps buffering proxies (nginx-style) from holding events back.
    'X-Accel-Buffering': 'no',
  });
  res.write('retry: 2000\n\n');
  const tick = () => res.write(`event: tick\ndata: ${JSON.stringify({ time: new Date().toISOString() })}\n\n`);
  tick();
  const timer = setInterval(tick, TICK_MS);
  req.on('close', () => clearInterval(timer));
}

async function handle(req, res) {
  const url = new URL(req.url, 'http://localhost');
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    return sendError(res, 405, 'method_not_allowed', `${req.method} is not allowed here`);
  }
  if (url.pathname === '/live') return live(req, res);
  if (url.pathname.startsWith('/_backlot/') || url.pathname.startsWith('/api/v1/')) {
    // Behind Backlot these paths never reach us; this is someone opening the
    // studio's port directly.
    return sendError(res, 404, 'not_found',
      'The Backlot data API is only reachable when the studio is opened through Backlot, e.g. http://sketchpad.localhost:7380/');
  }
  if (await serveStatic(PUBLIC, req, res, url.pathname)) return;
  sendError(res, 404, 'not_found', `Nothing at ${url.pathname}`);
}

const server = http.createServer((req, res) => {
  handle(req, res).catch((err) => {
    console.error(err);
    if (!res.headersSent) sendError(res, 500, 'internal', 'Unexpected error');
    else res.destroy();
  });
});

server.on('upgrade', (req, socket) => {
  const { pathname } = new URL(req.url, 'http://localhost');
  if (pathname === '/ws' && acceptEcho(req, socket)) return;
  socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
});

const port = portFromArgs();
server.listen(port, '127.0.0.1', () => {
  console.log(`Sketchpad listening on http://127.0.0.1:${server.address().port}`);
  if (process.env.BACKLOT_URL) console.log(`Backlot API: ${process.env.BACKLOT_URL}`);
});

// The launcher stops a studio with SIGTERM; close promptly (SSE streams and
// sockets would otherwise hold the server open).
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
