import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Agent, createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { DEFAULT_LIMITS, DEFAULT_MAX_CONNECTIONS, guardConnections, serverOptions, type ConnectionLimits } from '../service/core/connections';
import { createStudioProxy } from '../service/proxy';
import { launchChromium } from './helpers/browser';
import { client, send } from './helpers/http';
import { startService, type TestService } from './helpers/service';

/**
 * Connection limits (core/connections.ts, docs/api.md "Connections and
 * limits"): floods of half-sent requests, slow and stalled bodies, malformed HTTP,
 * refused bodies answered without a reset, kept-alive connections reused after an
 * idle pause, upgrades under the cap, and the depth check before JSON.parse.
 * Counts and orderings are asserted, never tight timings: the machine is shared.
 */

const MiB = 1024 * 1024;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(ok: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

/** Open descriptors of a process (Linux). */
const openFiles = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

interface RawConnection {
  socket: Socket;
  /** What the server sent. */
  received(): string;
  /** When the server's side closed (ms since connecting), or null while open. */
  closedAfter(): number | null;
}

/** A raw socket that writes `text` (if any) once connected and records what comes back. */
function rawConnection(port: number, text?: string | Buffer): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let closedAt: number | null = null;
    const chunks: Buffer[] = [];
    const socket = connect({ host: '127.0.0.1', port });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined); // a reset shows as the close
    socket.on('close', () => (closedAt = Date.now() - started));
    socket.once('connect', () => {
      if (text !== undefined) socket.write(text);
      resolve({ socket, received: () => Buffer.concat(chunks).toString('latin1'), closedAfter: () => closedAt });
    });
    socket.once('error', reject);
  });
}

/** `n` raw connections, opened 100 at a time. */
async function openMany(port: number, n: number, text?: string): Promise<RawConnection[]> {
  const out: RawConnection[] = [];
  while (out.length < n) {
    const batch = Math.min(100, n - out.length);
    out.push(...(await Promise.all(Array.from({ length: batch }, () => rawConnection(port, text)))));
  }
  return out;
}

const closedCount = (cs: RawConnection[]) => cs.filter((c) => c.closedAfter() !== null).length;
const endAll = (cs: RawConnection[]) => cs.forEach((c) => c.socket.destroy());

const head = (port: number, lines: string[]) => `${lines.join('\r\n')}\r\nHost: 127.0.0.1:${port}\r\n`;

/** Sends a request with node:http, reporting any error event besides the answer. */
function nodeRequest(
  port: number,
  o: { method: string; path: string; headers: Record<string, string>; body: Buffer; chunked?: boolean },
): Promise<{ status: number; json: any; connection: string | undefined; errors: string[] }> {
  return new Promise((resolve) => {
    const errors: string[] = [];
    let answer: { status: number; json: any; connection: string | undefined } | null = null;
    const headers = { ...o.headers, ...(o.chunked ? {} : { 'Content-Length': String(o.body.length) }) };
    const req = request({ host: '127.0.0.1', port, method: o.method, path: o.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => errors.push(`response: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        answer = { status: res.statusCode!, json: text ? JSON.parse(text) : null, connection: res.headers.connection };
      });
    });
    req.on('error', (err) => errors.push(`request: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
    req.on('close', () => {
      // Errors after the close would be reported too: give the socket a moment to settle.
      setTimeout(() => resolve({ ...(answer ?? { status: 0, json: null, connection: undefined }), errors }), 200);
    });
    if (o.chunked) {
      for (let at = 0; at < o.body.length; at += 64 * 1024) req.write(o.body.subarray(at, at + 64 * 1024));
      req.end();
    } else {
      req.end(o.body);
    }
  });
}

describe('a flood of half-sent requests (default limits)', () => {
  let s: TestService;
  let token: string;
  before(async () => {
    s = await startService();
    token = s.studio('flood', ['kv']);
  });
  after(() => s.stop());

  test(`3,000 connections that never finish their headers: the service holds at most ${DEFAULT_MAX_CONNECTIONS}, evicts the oldest, and a real request is answered`, async () => {
    const before = openFiles(s.child.pid!);
    const flood = await openMany(s.port, 3000, head(s.port, ['PUT /api/v1/kv/ns/k HTTP/1.1']));
    try {
      // Every connection past the cap pushed out the oldest waiting one.
      await until(() => closedCount(flood) >= 3000 - DEFAULT_MAX_CONNECTIONS, 60_000, 'evictions');
      const held = openFiles(s.child.pid!) - before;
      assert.ok(held <= DEFAULT_MAX_CONNECTIONS + 16, `the service holds ${held} more descriptors`);
      // The oldest went first: the first opened are closed, the last opened still open.
      assert.ok(flood.slice(0, 500).every((c) => c.closedAfter() !== null), 'the oldest were evicted');
      assert.ok(flood.slice(-500).every((c) => c.closedAfter() === null), 'the newest are still open');
      const started = Date.now();
      const r = await client(s.port, token).put('/kv/ns/real', { ok: true });
      assert.equal(r.status, 200, r.text);
      assert.ok(Date.now() - started < 15_000, 'answered promptly');
      assert.equal((await client(s.port, token).get('/kv/ns/real')).status, 200);
    } finally {
      endAll(flood);
    }
  });

  test('the answer announces the keep-alive timeout (310 s)', async () => {
    const r = await client(s.port, token).get('/kv/ns/real');
    assert.equal(r.headers['keep-alive'], `timeout=${DEFAULT_LIMITS.keepAliveTimeoutMs / 1000}`);
  });
});

describe('header time, idle body time (shortened for the test)', () => {
  let s: TestService;
  let token: string;
  before(async () => {
    s = await startService({
      env: { BACKLOT_HEADERS_TIMEOUT_MS: '1500', BACKLOT_BODY_IDLE_TIMEOUT_MS: '2000' },
      args: ['--upload-limit', String(MiB)],
    });
    token = s.studio('slow', ['kv', 'assets']);
  });
  after(() => s.stop());

  test('silent connections, half-sent headers and a kept-alive connection dripping its next request are closed after the header time (408)', async () => {
    const silent = await openMany(s.port, 100);
    const half = await openMany(s.port, 100, head(s.port, ['GET /api/v1/kv/ns HTTP/1.1']));
    // A whole request first, then a second one dripped a byte a second: the drip does not extend the header time.
    const kept = await rawConnection(s.port, `${head(s.port, ['GET /api/v1/openapi.json HTTP/1.1'])}\r\n`);
    await until(() => kept.received().includes('\r\n\r\n'), 10_000, 'first answer');
    kept.socket.write('GET /api/v1/kv/ns HTTP/1.1\r\nX-Drip: ');
    const drip = setInterval(() => kept.socket.writable && kept.socket.write('d'), 300);
    try {
      const all = [...silent, ...half, kept];
      await until(() => closedCount(all) === all.length, 30_000, 'all closed');
      for (const c of half) assert.match(c.received(), /^HTTP\/1\.1 408 /);
      assert.match(kept.received().slice(-200), /HTTP\/1\.1 408 /);
      // Never before the header time.
      for (const c of all) assert.ok(c.closedAfter()! >= 1000, `closed after ${c.closedAfter()} ms`);
    } finally {
      clearInterval(drip);
      endAll([...silent, ...half, kept]);
    }
    assert.equal((await client(s.port, token).get('/kv/ns')).status, 200);
  });

  test('a stalled JSON body and a stalled upload are dropped after the idle time; nothing is stored', async () => {
    const json = await rawConnection(
      s.port,
      `${head(s.port, ['PUT /api/v1/kv/ns/stalled HTTP/1.1', `Authorization: Bearer ${token}`, 'Content-Type: application/json', 'Content-Length: 100'])}\r\n{"a":`,
    );
    const upload = await rawConnection(
      s.port,
      `${head(s.port, ['POST /api/v1/assets?kind=other HTTP/1.1', `Authorization: Bearer ${token}`, 'Content-Length: 1000'])}\r\n0123456789`,
    );
    try {
      await until(() => json.closedAfter() !== null && upload.closedAfter() !== null, 30_000, 'stalled bodies dropped');
      for (const c of [json, upload]) assert.ok(c.closedAfter()! >= 1500, `closed after ${c.closedAfter()} ms, before the idle time`);
    } finally {
      endAll([json, upload]);
    }
    assert.equal((await client(s.port, token).get('/kv/ns/stalled')).status, 404);
  });

  test('a slow but steadily moving upload (a byte every 300 ms for 9 s, well past the idle time) is stored', async () => {
    const bytes = randomBytes(30);
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: s.port,
          method: 'POST',
          path: '/api/v1/assets?kind=other',
          headers: { Authorization: `Bearer ${token}`, 'Content-Length': String(bytes.length) },
          agent: false,
        },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        },
      );
      req.on('error', reject);
      let i = 0;
      const timer = setInterval(() => {
        req.write(bytes.subarray(i, i + 1));
        if (++i === bytes.length) {
          clearInterval(timer);
          req.end();
        }
      }, 300);
    });
    assert.equal(answer.status, 201, answer.text);
    assert.equal(JSON.parse(answer.text).sha256, createHash('sha256').update(bytes).digest('hex'));
  });

  test('a slow but moving JSON body (a byte every 300 ms) is read', async () => {
    const body = Buffer.from(JSON.stringify({ slow: 'yes', n: 12345 }));
    const conn = await rawConnection(
      s.port,
      `${head(s.port, ['PUT /api/v1/kv/ns/slow HTTP/1.1', `Authorization: Bearer ${token}`, 'Content-Type: application/json', `Content-Length: ${body.length}`, 'Connection: close'])}\r\n`,
    );
    for (const byte of body) {
      conn.socket.write(Buffer.from([byte]));
      await sleep(300);
    }
    await until(() => conn.closedAfter() !== null, 20_000, 'answer');
    assert.match(conn.received(), /^HTTP\/1\.1 200 /);
  });
});

describe('the cap never cuts a request in progress (cap 64)', () => {
  let s: TestService;
  let token: string;
  before(async () => {
    s = await startService({ env: { BACKLOT_MAX_CONNECTIONS: '64' } });
    token = s.studio('cap', ['kv', 'assets']);
  });
  after(() => s.stop());

  test('a dripping upload survives 500 newcomers; idle and half-sent connections are evicted instead', async () => {
    const bytes = randomBytes(20);
    const upload = new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: s.port,
          method: 'POST',
          path: '/api/v1/assets?kind=other',
          headers: { Authorization: `Bearer ${token}`, 'Content-Length': String(bytes.length) },
          agent: false,
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', reject);
      void (async () => {
        for (let i = 0; i < bytes.length; i++) {
          req.write(bytes.subarray(i, i + 1));
          await sleep(200);
        }
        req.end();
      })();
    });
    await sleep(500);
    const flood: RawConnection[] = [];
    try {
      for (let round = 0; round < 5; round++) {
        flood.push(...(await openMany(s.port, 100, head(s.port, ['GET /api/v1/kv/ns HTTP/1.1']))));
        await sleep(200);
      }
      assert.equal(await upload, 201);
      await until(() => closedCount(flood) >= 500 - 64, 30_000, 'evictions');
      const r = await client(s.port, token).get('/kv/ns');
      assert.equal(r.status, 200);
    } finally {
      endAll(flood);
    }
  });
});

describe('malformed HTTP: the connection is dropped, the service keeps serving', () => {
  let s: TestService;
  let token: string;
  before(async () => {
    s = await startService();
    token = s.studio('malformed', ['kv']);
  });
  after(() => s.stop());

  const auth = () => `Authorization: Bearer ${token}`;
  const cases: [name: string, text: () => string, status: RegExp][] = [
    ['bad chunk size', () => `${head(s.port, ['PUT /api/v1/kv/ns/x HTTP/1.1', auth(), 'Content-Type: application/json', 'Transfer-Encoding: chunked'])}\r\nzz\r\n{}\r\n0\r\n\r\n`, /^HTTP\/1\.1 400 /],
    ['a chunk longer than its size', () => `${head(s.port, ['PUT /api/v1/kv/ns/x HTTP/1.1', auth(), 'Content-Type: application/json', 'Transfer-Encoding: chunked'])}\r\n2\r\n{"a":1}\r\n0\r\n\r\n`, /^HTTP\/1\.1 400 /],
    ['Content-Length and Transfer-Encoding together', () => `${head(s.port, ['POST /api/v1/kv/ns/x HTTP/1.1', 'Content-Length: 2', 'Transfer-Encoding: chunked'])}\r\n2\r\n{}\r\n0\r\n\r\n`, /^HTTP\/1\.1 400 /],
    ['a Content-Length that is not a number', () => `${head(s.port, ['PUT /api/v1/kv/ns/x HTTP/1.1', 'Content-Length: ten'])}\r\n`, /^HTTP\/1\.1 400 /],
    ['two different Content-Lengths', () => `${head(s.port, ['PUT /api/v1/kv/ns/x HTTP/1.1', 'Content-Length: 2', 'Content-Length: 3'])}\r\n{}`, /^HTTP\/1\.1 400 /],
    ['a header flood (2,000 header lines)', () => `${head(s.port, ['GET /api/v1/kv/ns HTTP/1.1', ...Array.from({ length: 2000 }, (_, i) => `X-Flood-${i}: ${'v'.repeat(20)}`)])}\r\n`, /^HTTP\/1\.1 431 /],
    ['one header of 64 KiB', () => `${head(s.port, ['GET /api/v1/kv/ns HTTP/1.1', `X-Big: ${'b'.repeat(64 * 1024)}`])}\r\n`, /^HTTP\/1\.1 431 /],
    ['a request line of garbage', () => '\x00\x01\x02 garbage \xff\r\n\r\n', /^HTTP\/1\.1 400 /],
    ['a control character in a header value', () => `${head(s.port, ['GET /api/v1/kv/ns HTTP/1.1', 'X-Bad: a\x00b'])}\r\n`, /^HTTP\/1\.1 400 /],
    ['an unknown HTTP version', () => `GET /api/v1/kv/ns HTTP/7.3\r\nHost: 127.0.0.1:${s.port}\r\n\r\n`, /^HTTP\/1\.1 (400|505) /],
  ];
  for (const [name, text, status] of cases) {
    test(`${name}: answered ${status.source.replace(/[\\^$]/g, '')} and closed, 20 at once; a real request still works`, async () => {
      const conns = await Promise.all(Array.from({ length: 20 }, () => rawConnection(s.port, text())));
      try {
        await until(() => closedCount(conns) === conns.length, 30_000, 'closed');
        for (const c of conns) assert.match(c.received().slice(0, 20), status);
      } finally {
        endAll(conns);
      }
      const r = await client(s.port, token).get('/kv/ns');
      assert.equal(r.status, 200, r.text);
    });
  }

  test('the service logged no failure for any of them', () => {
    assert.doesNotMatch(s.stderr(), /failed:|Error/);
  });
});

describe('a refused body is answered, never reset (lingering close)', () => {
  let s: TestService;
  let full: TestService;
  let token: string;
  let fullToken: string;
  let browser: Browser;
  before(async () => {
    [s, full] = await Promise.all([
      startService({ args: ['--upload-limit', String(MiB)] }),
      startService({ args: ['--disk-headroom', String(2 ** 52)] }),
    ]);
    token = s.studio('big', ['kv', 'assets']);
    fullToken = full.studio('full', ['assets']);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await Promise.all([s?.stop(), full?.stop()]);
  });

  const json6 = () => Buffer.from(JSON.stringify({ pad: 'x'.repeat(6 * MiB) }));
  const rows: [name: string, service: () => TestService, o: () => Parameters<typeof nodeRequest>[1], status: number, code: string][] = [
    ['a 6 MiB JSON body (limit 4 MiB), Content-Length', () => s, () => ({ method: 'PUT', path: '/api/v1/kv/ns/big', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: json6() }), 413, 'too_large'],
    ['a 6 MiB JSON body, chunked', () => s, () => ({ method: 'PUT', path: '/api/v1/kv/ns/big', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: json6(), chunked: true }), 413, 'too_large'],
    ['an 8 MiB upload (limit 1 MiB), Content-Length', () => s, () => ({ method: 'POST', path: '/api/v1/assets?kind=other', headers: { Authorization: `Bearer ${token}` }, body: randomBytes(8 * MiB) }), 413, 'too_large'],
    ['an 8 MiB upload, chunked', () => s, () => ({ method: 'POST', path: '/api/v1/assets?kind=other', headers: { Authorization: `Bearer ${token}` }, body: randomBytes(8 * MiB), chunked: true }), 413, 'too_large'],
    ['an 8 MiB upload without the disk space (507 before reading), Content-Length', () => full, () => ({ method: 'POST', path: '/api/v1/assets?kind=other', headers: { Authorization: `Bearer ${fullToken}` }, body: randomBytes(8 * MiB) }), 507, 'disk_space'],
    ['an 8 MiB upload without the disk space, chunked', () => full, () => ({ method: 'POST', path: '/api/v1/assets?kind=other', headers: { Authorization: `Bearer ${fullToken}` }, body: randomBytes(8 * MiB), chunked: true }), 507, 'disk_space'],
    ['an 8 MiB upload without a token (401 before reading)', () => s, () => ({ method: 'POST', path: '/api/v1/assets?kind=other', headers: {}, body: randomBytes(8 * MiB) }), 401, 'unauthenticated'],
  ];
  for (const [name, service, o, status, code] of rows) {
    test(`node:http, ${name}: ${status} ${code} with Connection: close, no EPIPE or reset (3 rounds)`, async () => {
      for (let round = 0; round < 3; round++) {
        const r = await nodeRequest(service().port, o());
        assert.equal(r.status, status, JSON.stringify(r));
        assert.equal(r.json.code, code);
        assert.equal(r.connection, 'close');
        assert.deepEqual(r.errors, [], `round ${round}`);
      }
    });
  }

  test('fetch in Chromium: 413 for a 6 MiB JSON body and an 8 MiB upload, 507 for an upload without space (2 rounds each)', async () => {
    const page = await browser.newPage();
    try {
      const inPage = (args: { path: string; token: string; size: number; json: boolean }) =>
        page.evaluate(async ({ path, token, size, json }) => {
          const body = json ? JSON.stringify({ pad: 'x'.repeat(size) }) : new Uint8Array(size);
          const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
          if (json) headers['Content-Type'] = 'application/json';
          try {
            const res = await fetch(path, { method: json ? 'PUT' : 'POST', headers, body });
            return { status: res.status, code: (await res.json()).code as string };
          } catch (err) {
            return { status: 0, code: String(err) };
          }
        }, args);
      await page.goto(`${s.origin}/api/v1/openapi.json`);
      for (let round = 0; round < 2; round++) {
        assert.deepEqual(await inPage({ path: '/api/v1/kv/ns/big', token, size: 6 * MiB, json: true }), { status: 413, code: 'too_large' });
        assert.deepEqual(await inPage({ path: '/api/v1/assets?kind=other', token, size: 8 * MiB, json: false }), { status: 413, code: 'too_large' });
      }
      await page.goto(`${full.origin}/api/v1/openapi.json`);
      for (let round = 0; round < 2; round++) {
        assert.deepEqual(await inPage({ path: '/api/v1/assets?kind=other', token: fullToken, size: 8 * MiB, json: false }), { status: 507, code: 'disk_space' });
      }
    } finally {
      await page.close();
    }
  });
});

describe('kept-alive connections', () => {
  let s: TestService;
  let token: string;
  before(async () => {
    s = await startService();
    token = s.studio('keep', ['kv']);
  });
  after(() => s.stop());

  test('reused after 6.5 s idle: the same sockets answer, no "socket hang up"', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 4 });
    const get = () =>
      new Promise<{ reused: boolean; status: number }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port: s.port, path: '/api/v1/kv/ns', headers: { Authorization: `Bearer ${token}` }, agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ reused: req.reusedSocket, status: res.statusCode! }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      const first = await Promise.all(Array.from({ length: 4 }, get));
      assert.ok(first.every((r) => r.status === 200));
      await sleep(6500);
      const second = await Promise.all(Array.from({ length: 4 }, get));
      assert.ok(second.every((r) => r.status === 200));
      assert.deepEqual(second.map((r) => r.reused), [true, true, true, true]);
    } finally {
      agent.destroy();
    }
  });
});

describe('the depth of a JSON body is checked before it is parsed', () => {
  let s: TestService;
  let token: string;
  before(async () => {
    s = await startService();
    token = s.studio('deep', ['kv']);
  });
  after(() => s.stop());

  const deepBody = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

  test('4 MiB bodies of nested objects and of brackets: 400 invalid_document, four of them in well under the time one took to parse', async () => {
    const objects = deepBody(Math.floor((4 * MiB - 10) / 6));
    const brackets = `${'['.repeat(2 * MiB - 1)}${']'.repeat(2 * MiB - 1)}`;
    const started = Date.now();
    for (const raw of [objects, brackets, objects, brackets]) {
      const deep = await send(s.port, { method: 'PUT', path: '/api/v1/kv/ns/deep', token, raw });
      assert.equal(deep.status, 400, deep.text);
      assert.equal(deep.json.code, 'invalid_document');
      assert.match(deep.json.message, /nested deeper than 100 levels/);
    }
    // Parsed first, each took 2-3 s of the event loop; scanned, all four take a fraction of it.
    assert.ok(Date.now() - started < 8000, `${Date.now() - started} ms`);
  });

  test('a document of 100 levels is stored; brackets inside strings do not count', async () => {
    const c = client(s.port, token);
    assert.equal((await send(s.port, { method: 'PUT', path: '/api/v1/kv/ns/d100', token, raw: deepBody(100) })).status, 200);
    const r101 = await send(s.port, { method: 'PUT', path: '/api/v1/kv/ns/d101', token, raw: deepBody(101) });
    assert.equal(r101.status, 400);
    assert.equal(r101.json.code, 'invalid_document');
    const r = await c.put('/kv/ns/strings', { s: '['.repeat(MiB), t: '{'.repeat(1000) });
    assert.equal(r.status, 200, r.text);
  });
});

describe('upgrades and the proxy under the cap (the front app.ts builds)', () => {
  const limits: ConnectionLimits = { ...DEFAULT_LIMITS, maxConnections: 8 };
  let upstream: Server;
  let front: Server;
  let frontPort: number;
  const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC11B07';

  before(async () => {
    upstream = createServer((_req, res) => res.end('plain'));
    upstream.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
      const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}${WS_GUID}`).digest('base64');
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
      socket.on('data', (d: Buffer) => socket.write(d)); // raw echo: enough to see the tunnel live
      socket.on('end', () => socket.end());
      socket.on('error', () => socket.destroy());
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    const upstreamPort = (upstream.address() as AddressInfo).port;
    front = createServer(serverOptions(limits));
    const guard = guardConnections(front, limits);
    const proxy = createStudioProxy({
      lookup: () => ({ kind: 'running', port: upstreamPort }),
      servicePort: () => frontPort,
      maxSockets: limits.maxConnections,
      admitUpgrade: (req) => guard.admitUpgrade(req),
    });
    front.on('request', (req, res) => proxy.handle('sketchpad', req, res));
    front.on('upgrade', (req, socket, head) => proxy.upgrade('sketchpad', req, socket, head));
    front.on('close', () => {
      guard.stop();
      proxy.close();
    });
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', () => r()));
    frontPort = (front.address() as AddressInfo).port;
  });
  after(async () => {
    front.closeAllConnections();
    await new Promise((r) => front.close(r));
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
  });

  const upgradeText = () =>
    `GET /ws HTTP/1.1\r\nHost: sketchpad.localhost:${frontPort}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`;

  test('at most half the cap is upgraded (503 past it); tunnels are not evicted by newcomers; a plain request still passes', async () => {
    const tunnels = await Promise.all(Array.from({ length: 4 }, () => rawConnection(frontPort, upgradeText())));
    await until(() => tunnels.every((t) => t.received().includes('101 Switching')), 10_000, 'four tunnels');
    const fifth = await rawConnection(frontPort, upgradeText());
    await until(() => fifth.closedAfter() !== null, 10_000, 'fifth refused');
    assert.match(fifth.received(), /^HTTP\/1\.1 503 /);
    // Twenty half-sent newcomers: evicted among themselves, the tunnels stay.
    const flood = await openMany(frontPort, 20, `GET / HTTP/1.1\r\nHost: sketchpad.localhost:${frontPort}\r\n`);
    await until(() => closedCount(flood) >= 20 - 4, 10_000, 'evictions');
    for (const t of tunnels) {
      assert.equal(t.closedAfter(), null);
      t.socket.write('ping');
    }
    await until(() => tunnels.every((t) => t.received().endsWith('ping')), 10_000, 'echo through every tunnel');
    const plain = await rawConnection(frontPort, `GET /x HTTP/1.1\r\nHost: sketchpad.localhost:${frontPort}\r\nConnection: close\r\n\r\n`);
    await until(() => plain.closedAfter() !== null, 10_000, 'plain answer');
    assert.match(plain.received(), /^HTTP\/1\.1 200 [\s\S]*plain$/);
    // One tunnel closes: an upgrade is admitted again.
    tunnels[0]!.socket.destroy();
    await sleep(200);
    const again = await rawConnection(frontPort, upgradeText());
    await until(() => again.received().includes('\r\n\r\n'), 10_000, 'answer');
    assert.match(again.received(), /^HTTP\/1\.1 101 /);
    endAll([...tunnels, fifth, ...flood, again, plain]);
  });
});
