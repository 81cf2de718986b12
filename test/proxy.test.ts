import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, request, type IncomingMessage, type OutgoingHttpHeaders, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createStudioProxy, type StudioProxyOptions, type StudioTarget } from '../service/proxy';

/**
 * The studio-origin reverse proxy (docs/api.md "The studio origin") over real sockets: a tiny studio
 * server written here, a front server that hands every request to the proxy the way
 * app.ts does, and raw clients.
 */

const MiB = 1024 * 1024;
const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC11B07';

const listen = (s: Server) =>
  new Promise<number>((resolve) => s.listen(0, '127.0.0.1', () => resolve((s.address() as AddressInfo).port)));
const shut = (s: Server) =>
  new Promise<void>((resolve) => {
    s.closeAllConnections();
    s.close(() => resolve());
  });
const once = <T>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};
const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms).unref())]);

// ---- the studio's own server --------------------------------------------------------

interface Upstream {
  server: Server;
  port: number;
  /** Resolved when the named route's request or response closes. */
  closed: Map<string, ReturnType<typeof once<void>>>;
  upload: { clientFinished: boolean; arrivedEarly: boolean | null; received: number };
}

function watchClose(up: Upstream, name: string, req: IncomingMessage): void {
  const c = once<void>();
  up.closed.set(name, c);
  req.socket.once('close', () => c.resolve());
}

async function startUpstream(): Promise<Upstream> {
  const up = { closed: new Map(), upload: { clientFinished: false, arrivedEarly: null, received: 0 } } as unknown as Upstream;
  up.server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]!;
    if (path.startsWith('/echo')) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('X-Hop', 'dropped');
        res.setHeader('Proxy-Thing', 'dropped');
        res.setHeader('Connection', 'keep-alive, X-Hop');
        res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() }));
      });
    } else if (path === '/sse') {
      watchClose(up, 'sse', req);
      res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
      res.flushHeaders();
      let n = 0;
      const timer = setInterval(() => {
        res.write(`data: ${++n}\n\n`);
        if (n === 50) {
          clearInterval(timer);
          res.end();
        }
      }, 100);
      res.on('close', () => clearInterval(timer));
    } else if (path === '/slow' || path === '/hang') {
      watchClose(up, path.slice(1), req); // never answers
    } else if (path === '/cookies') {
      res.setHeader('Set-Cookie', ['a=1; Domain=localhost; Path=/', 'b=2; Path=/; domain=sketchpad.localhost; HttpOnly', 'c=3; Max-Age=60']);
      res.end('ok');
    } else if (path === '/cors') {
      res.writeHead(200, {
        'Access-Control-Allow-Origin': '*',
        'Access-Control-Allow-Credentials': 'true',
        'access-control-expose-headers': 'X-Other',
        'X-Other': 'kept',
      });
      res.end('ok');
    } else if (path === '/upload') {
      const hash = createHash('sha256');
      let bytes = 0;
      req.on('data', (c: Buffer) => {
        bytes += c.length;
        up.upload.received = bytes;
        hash.update(c);
        if (up.upload.arrivedEarly === null && bytes >= 8 * MiB) up.upload.arrivedEarly = !up.upload.clientFinished;
      });
      req.on('end', () => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ bytes, sha256: hash.digest('hex') }));
      });
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  // A raw WebSocket echo: RFC 6455 handshake, then every single-frame text message back.
  up.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    watchClose(up, 'ws', req);
    const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}${WS_GUID}`).digest('base64');
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Accept: ${accept}\r\nX-Seen-Host: ${req.headers.host}\r\n` +
        `X-Seen-Forwarded: ${req.headers['x-forwarded-host']}|${req.headers['x-forwarded-proto']}|${req.headers['x-forwarded-for']}\r\n\r\n`,
    );
    let buffered = head;
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (buffered.length < 2) return;
        const len = buffered[1]! & 0x7f; // tests send < 126 bytes
        if (buffered.length < 6 + len) return;
        const mask = buffered.subarray(2, 6);
        const payload = Buffer.from(buffered.subarray(6, 6 + len).map((b, i) => b ^ mask[i % 4]!));
        buffered = buffered.subarray(6 + len);
        socket.write(Buffer.concat([Buffer.from([0x81, payload.length]), payload]));
      }
    };
    socket.on('data', onData);
    // As WebSocket servers do: the peer's end of the stream ends ours (the socket allows half-open).
    socket.on('end', () => socket.end());
    socket.on('error', () => socket.destroy());
    if (head.length > 0) onData(Buffer.alloc(0));
  });
  up.port = await listen(up.server);
  return up;
}

// ---- the front: what app.ts does with a studio origin ------------------------------

interface Front {
  server: Server;
  port: number;
  host: string;
  proxy: ReturnType<typeof createStudioProxy>;
  /** What lookup answers; tests change it. */
  target: StudioTarget;
  studioId: string;
}

async function startFront(options: Partial<StudioProxyOptions> = {}): Promise<Front> {
  const front = { studioId: 'sketchpad' } as Front;
  front.proxy = createStudioProxy({ lookup: () => front.target, servicePort: () => front.port, ...options });
  front.server = createServer((req, res) => front.proxy.handle(front.studioId, req, res));
  front.server.on('upgrade', (req, socket, head) => front.proxy.upgrade(front.studioId, req, socket, head));
  front.port = await listen(front.server);
  front.host = `sketchpad.localhost:${front.port}`;
  return front;
}

// ---- clients ------------------------------------------------------------------------

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  text: string;
}

function send(front: Front, method: string, path: string, headers: OutgoingHttpHeaders = {}, body?: (string | Buffer)[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port: front.port, method, path, agent: false, setHost: false, headers: { Host: front.host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      res.on('error', reject);
    });
    r.on('error', reject);
    for (const part of body ?? []) r.write(part);
    r.end();
  });
}

/** Opens a raw socket, sends an upgrade, and resolves with the answer's head and the socket. */
function openWebSocket(front: Front, key = randomBytes(16).toString('base64')) {
  return new Promise<{ socket: Socket; head: string; rest: Buffer; key: string }>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: front.port });
    let buffered = Buffer.alloc(0);
    const onData = (c: Buffer) => {
      buffered = Buffer.concat([buffered, c]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      resolve({ socket, head: buffered.subarray(0, end).toString('latin1'), rest: buffered.subarray(end + 4), key });
    };
    socket.on('data', onData);
    socket.on('error', reject);
    socket.on('end', () => (buffered.indexOf('\r\n\r\n') === -1 ? reject(new Error(`closed: ${buffered}`)) : undefined));
    socket.write(
      `GET /ws?room=1 HTTP/1.1\r\nHost: ${front.host}\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n` +
        `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
}

function maskedFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!))]);
}

function readFrame(socket: Socket, already: Buffer): Promise<string> {
  return new Promise((resolve) => {
    let buffered = already;
    const check = () => {
      if (buffered.length >= 2 && buffered.length >= 2 + buffered[1]!) {
        socket.off('data', onData);
        resolve(buffered.subarray(2, 2 + buffered[1]!).toString());
      }
    };
    const onData = (c: Buffer) => {
      buffered = Buffer.concat([buffered, c]);
      check();
    };
    socket.on('data', onData);
    check();
  });
}

/** Everything a socket receives until it closes. */
function drain(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => resolve(text));
  });
}

/** Opens the SSE route and resolves once the first event arrived. */
function openSse(front: Front) {
  return new Promise<{ res: IncomingMessage; destroy: () => void; events: { data: string; at: number }[]; started: number }>((resolve, reject) => {
    const started = Date.now();
    const events: { data: string; at: number }[] = [];
    const r = request({ host: '127.0.0.1', port: front.port, path: '/sse', agent: false, setHost: false, headers: { Host: front.host, Accept: 'text/event-stream' } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        for (const m of chunk.matchAll(/data: (\d+)\n\n/g)) events.push({ data: m[1]!, at: Date.now() });
        if (events.length === 1) resolve({ res, destroy: () => r.destroy(), events, started });
      });
      res.on('error', () => {});
    });
    r.on('error', reject);
    r.end();
  });
}

// ---- the tests ----------------------------------------------------------------------

describe('studio proxy: plain requests', { timeout: 60_000 }, () => {
  let up: Upstream;
  let front: Front;
  before(async () => {
    up = await startUpstream();
    front = await startFront();
    front.target = { kind: 'running', port: up.port };
  });
  after(async () => {
    front.proxy.close();
    await Promise.all([shut(front.server), shut(up.server)]);
  });

  test('method, path, query and body pass through; Host kept; X-Forwarded-* set by the proxy', async () => {
    const a = await send(front, 'PUT', '/echo/a%20b?x=1&y=%2F', { 'Content-Type': 'text/plain', Authorization: 'Bearer page-own', Cookie: 'sid=1', 'X-Forwarded-For': '6.6.6.6', 'X-Forwarded-Host': 'evil.example' }, ['hello ', 'body']);
    assert.equal(a.status, 200);
    const seen = JSON.parse(a.text);
    assert.equal(seen.method, 'PUT');
    assert.equal(seen.url, '/echo/a%20b?x=1&y=%2F');
    assert.equal(seen.body, 'hello body');
    assert.equal(seen.headers.host, front.host);
    assert.equal(seen.headers['x-forwarded-host'], front.host);
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen.headers.authorization, 'Bearer page-own');
    assert.equal(seen.headers.cookie, 'sid=1');
    assert.equal(seen.headers['content-type'], 'text/plain');

    const g = JSON.parse((await send(front, 'GET', '/echo?q=%E2%9C%93')).text);
    assert.deepEqual([g.method, g.url, g.body], ['GET', '/echo?q=%E2%9C%93', '']);
    const d = JSON.parse((await send(front, 'DELETE', '/echo/1', { 'Content-Length': '3' }, ['abc'])).text);
    assert.deepEqual([d.method, d.body, d.headers['content-length']], ['DELETE', 'abc', '3']);
    const h = await send(front, 'HEAD', '/echo');
    assert.deepEqual([h.status, h.text, h.headers['content-type']], [200, '', 'application/json']);
  });

  test('hop-by-hop headers are not forwarded, either way', async () => {
    const a = await send(front, 'POST', '/echo', {
      Connection: 'keep-alive, X-Drop',
      'X-Drop': '1',
      'Keep-Alive': 'timeout=300',
      'Proxy-Authorization': 'Basic eA==',
      TE: 'trailers',
      Upgrade: 'h2c',
      'Transfer-Encoding': 'chunked',
      'X-Kept': 'yes',
    }, ['chunk-1,', 'chunk-2']);
    const seen = JSON.parse(a.text);
    for (const h of ['x-drop', 'keep-alive', 'proxy-authorization', 'te', 'upgrade']) assert.equal(seen.headers[h], undefined, h);
    assert.equal(seen.headers['x-kept'], 'yes');
    assert.equal(seen.body, 'chunk-1,chunk-2');
    assert.equal(a.headers['x-hop'], undefined);
    assert.equal(a.headers['proxy-thing'], undefined);
    assert.equal(a.headers['content-type'], 'application/json');
  });

  test('Set-Cookie loses its Domain attribute (every cookie host-only)', async () => {
    const a = await send(front, 'GET', '/cookies');
    assert.deepEqual(a.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/; HttpOnly', 'c=3; Max-Age=60']);
  });

  test('CORS headers from the studio are dropped', async () => {
    const a = await send(front, 'GET', '/cors');
    assert.equal(a.status, 200);
    assert.equal(a.headers['x-other'], 'kept');
    assert.deepEqual(Object.keys(a.headers).filter((h) => h.startsWith('access-control-')), []);
  });

  test('a 100 MiB upload streams: the studio has bytes before the page finished sending', async () => {
    up.upload = { clientFinished: false, arrivedEarly: null, received: 0 };
    let inFlight = 0; // the most the page had sent that the studio had not yet received
    const hash = createHash('sha256');
    // Sixteen distinct chunks made up front and sent in turn, so the page's own allocations do not count.
    const chunks = Array.from({ length: 16 }, (_, i) => Buffer.alloc(MiB, i + 1));
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
    const answer = await new Promise<Answer>((resolve, reject) => {
      const r = request({ host: '127.0.0.1', port: front.port, method: 'PUT', path: '/upload', agent: false, setHost: false, headers: { Host: front.host, 'Content-Length': String(100 * MiB) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString() }));
      });
      r.on('error', reject);
      (async () => {
        for (let i = 0; i < 100; i++) {
          const chunk = chunks[i % 16]!;
          hash.update(chunk);
          inFlight = Math.max(inFlight, i * MiB - up.upload.received);
          if (!r.write(chunk)) await new Promise((d) => r.once('drain', d));
        }
        up.upload.clientFinished = true;
        r.end();
      })().catch(reject);
    });
    clearInterval(sampler);
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.text), { bytes: 100 * MiB, sha256: hash.digest('hex') });
    assert.equal(up.upload.arrivedEarly, true);
    const grew = (rssPeak - rssBefore) / MiB;
    // Buffering the body would hold about 100 MiB; streaming holds a few socket buffers
    // (the rest of the rss growth is garbage not yet collected).
    assert.ok(inFlight < 32 * MiB, `${(inFlight / MiB).toFixed(1)} MiB in flight`);
    assert.ok(grew < 80, `rss grew by ${grew.toFixed(1)} MiB`);
  });

  test('server-sent events arrive one by one, headers at once', async () => {
    const sse = await within(openSse(front), 1000, 'first event');
    assert.equal(sse.res.headers['content-type'], 'text/event-stream');
    assert.equal(sse.res.headers['content-encoding'], undefined);
    while (sse.events.length < 3) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(sse.events.slice(0, 3).map((e) => e.data), ['1', '2', '3']);
    assert.ok(sse.events[2]!.at - sse.events[0]!.at >= 100, 'events came as they were sent, not in one piece');
    assert.equal(sse.res.complete, false, 'the stream is still open');
    // The page going away ends the studio's stream too.
    sse.destroy();
    await within(up.closed.get('sse')!.promise, 2000, 'studio saw the close');
  });

  test('the page going away before any answer aborts the studio request', async () => {
    const r = request({ host: '127.0.0.1', port: front.port, path: '/hang', agent: false, setHost: false, headers: { Host: front.host } });
    r.on('error', () => {});
    r.end();
    while (!up.closed.has('hang')) await new Promise((res) => setTimeout(res, 10));
    r.destroy();
    await within(up.closed.get('hang')!.promise, 2000, 'studio saw the close');
  });

  test('a studio server that is down: 502 page', async () => {
    const probe = createServer();
    const deadPort = await listen(probe);
    await shut(probe);
    front.target = { kind: 'running', port: deadPort };
    try {
      const a = await send(front, 'GET', '/');
      assert.equal(a.status, 502);
      assert.match(a.headers['content-type']!, /^text\/html/);
      assert.match(a.text, /sketchpad did not answer/);
    } finally {
      front.target = { kind: 'running', port: up.port };
    }
  });

  test('not running: 503 page, escaped, styled, locked down', async () => {
    front.target = { kind: 'not_running', name: '<script>alert(1)</script>', state: 'fail"ed' };
    try {
      const a = await send(front, 'GET', '/anything');
      assert.equal(a.status, 503);
      assert.equal(a.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(a.headers['content-security-policy'], "default-src 'none'; style-src 'unsafe-inline'");
      assert.equal(a.headers['cache-control'], 'no-store');
      assert.ok(!a.text.includes('<script>'), 'nothing unescaped');
      assert.match(a.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt; is not running/);
      assert.match(a.text, /fail&quot;ed/);
      assert.match(a.text, /bin\/backlot start sketchpad/);
      assert.match(a.text, /prefers-color-scheme: ?dark/);
      const head = await send(front, 'HEAD', '/');
      assert.deepEqual([head.status, head.text], [503, '']);
    } finally {
      front.target = { kind: 'running', port: up.port };
    }
  });

  test('unknown: 404 page naming the id, escaped', async () => {
    front.target = { kind: 'unknown' };
    front.studioId = 'x<img src=y>';
    try {
      const a = await send(front, 'POST', '/upload', { 'Content-Length': '5' }, ['hello']);
      assert.equal(a.status, 404);
      assert.equal(a.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(a.text, /No studio named x&lt;img src=y&gt;/);
      assert.ok(!a.text.includes('<img'));
    } finally {
      front.target = { kind: 'running', port: up.port };
      front.studioId = 'sketchpad';
    }
  });

  test('WebSocket echo through the proxy (raw client)', async () => {
    const ws = await openWebSocket(front);
    const lines = ws.head.split('\r\n');
    assert.equal(lines[0], 'HTTP/1.1 101 Switching Protocols');
    const accept = createHash('sha1').update(`${ws.key}${WS_GUID}`).digest('base64');
    assert.ok(lines.includes(`Sec-WebSocket-Accept: ${accept}`));
    assert.ok(lines.includes(`X-Seen-Host: ${front.host}`));
    assert.ok(lines.includes(`X-Seen-Forwarded: ${front.host}|http|127.0.0.1`));
    ws.socket.write(maskedFrame('hello'));
    assert.equal(await readFrame(ws.socket, ws.rest), 'hello');
    ws.socket.write(maskedFrame('again ✓'));
    assert.equal(await readFrame(ws.socket, Buffer.alloc(0)), 'again ✓');
    ws.socket.destroy();
    await within(up.closed.get('ws')!.promise, 2000, 'studio saw the close');
  });

  test('upgrade for a studio that is not running: 503 and closed; unknown: 404', async () => {
    for (const [target, status] of [[{ kind: 'not_running', name: 'Sketchpad', state: 'stopped' }, 503], [{ kind: 'unknown' }, 404]] as const) {
      front.target = target;
      const socket = connect({ host: '127.0.0.1', port: front.port });
      const text = drain(socket);
      socket.write(`GET /ws HTTP/1.1\r\nHost: ${front.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      const got = await within(text, 2000, 'socket closed');
      assert.ok(got.startsWith(`HTTP/1.1 ${status} `), got);
      assert.match(got, /\r\nConnection: close\r\n/);
    }
    front.target = { kind: 'running', port: up.port };
  });
});

describe('studio proxy: timeouts and close()', { timeout: 30_000 }, () => {
  let up: Upstream;
  before(async () => {
    up = await startUpstream();
  });
  after(() => shut(up.server));

  test('no headers within headersTimeoutMs: 504 page, studio request ended', async () => {
    const front = await startFront({ headersTimeoutMs: 300 });
    front.target = { kind: 'running', port: up.port };
    try {
      const started = Date.now();
      const a = await send(front, 'GET', '/slow');
      assert.equal(a.status, 504);
      assert.match(a.headers['content-type']!, /^text\/html/);
      assert.ok(Date.now() - started >= 290);
      await within(up.closed.get('slow')!.promise, 2000, 'studio saw the close');
      // An established stream outlives that timeout.
      const sse = await openSse(front);
      await new Promise((r) => setTimeout(r, 600));
      assert.ok(sse.events.length >= 4 && !sse.res.complete);
      sse.destroy();
    } finally {
      front.proxy.close();
      await shut(front.server);
    }
  });

  test('close() ends open event streams and WebSockets', async () => {
    const front = await startFront();
    front.target = { kind: 'running', port: up.port };
    const sse = await openSse(front);
    const sseClosed = new Promise<void>((r) => sse.res.on('close', () => r()));
    const ws = await openWebSocket(front);
    const wsClosed = drain(ws.socket);
    front.proxy.close();
    await within(Promise.all([sseClosed, wsClosed]), 2000, 'client connections ended');
    assert.equal(sse.res.complete, false);
    await within(Promise.all([up.closed.get('sse')!.promise, up.closed.get('ws')!.promise]), 2000, 'studio connections ended');
    // After close, nothing new is passed on.
    const a = await send(front, 'GET', '/echo');
    assert.equal(a.status, 503);
    await shut(front.server);
  });
});
