import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { send } from './helpers/http';
import { type TestService } from './helpers/service';
import { fixture, startLauncher, type LauncherClient } from './helpers/launcher';

/**
 * Upgrades (WebSocket) on a studio's origin (docs/security.md, Studios): the
 * paths the service answers itself there, `/_backlot` and `/api/v1` and
 * everything under them, are the service's for upgrades too. They get the
 * service's 404 with the JSON error body and never reach the studio's server;
 * every other path still does. The prefix is matched on the raw path, exactly
 * as for plain requests, so a variant (`/%5Fbacklot/`, `/_BACKLOT/`,
 * `//_backlot/`) goes to the studio for both kinds alike.
 */

/** The studio's server: answers every upgrade with 101 and remembers every path it saw. */
const SERVER_JS = `'use strict';
const http = require('node:http');
const port = Number(process.argv[process.argv.indexOf('--port') + 1]);
const seen = { upgrades: [], requests: [] };
const server = http.createServer((req, res) => {
  if (req.url === '/seen') { res.setHeader('Content-Type', 'application/json'); return res.end(JSON.stringify(seen)); }
  seen.requests.push(req.url);
  res.end('studio page');
});
server.on('upgrade', (req, socket) => {
  seen.upgrades.push(req.url);
  socket.end('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nX-Studio: yes\\r\\n\\r\\n');
});
server.listen(port, '127.0.0.1', () => console.log('listening on ' + port));
`;

const ID = 'wsprefix';
let svc: TestService;
let l: LauncherClient;

before(async () => {
  ({ svc, l } = await startLauncher());
  await l.installOk(fixture({ id: ID }, { 'server.js': SERVER_JS }));
  await l.startOk(ID);
});
after(async () => {
  await svc.stop();
});

/** A raw upgrade request on the studio's origin through the service's port: the status line and the body, once the answer ended. */
function upgrade(path: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(svc.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const at = text.indexOf('\r\n\r\n');
      const head = at < 0 ? text : text.slice(0, at);
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), headers: head, body: at < 0 ? '' : text.slice(at + 4) });
    });
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${ID}.localhost:${svc.port}\r\nOrigin: http://${ID}.localhost:${svc.port}\r\n` +
        'Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
    );
  });
}

async function seen(): Promise<{ upgrades: string[]; requests: string[] }> {
  const r = await send(svc.port, { path: '/seen', headers: { Host: `${ID}.localhost:${svc.port}` } });
  assert.equal(r.status, 200, r.text);
  return r.json;
}

test("upgrades under /_backlot (and /api/v1) on a studio's origin: 404 with the error body, and the studio's server sees none", async () => {
  const paths = [
    '/_backlot',
    '/_backlot/',
    '/_backlot?x=1',
    '/_backlot/x',
    '/_backlot/api/v1/kv/settings',
    '/_backlot/api/v1/events',
    '/_backlot/api/v1/editor/events',
    '/_backlot/../ws',
    '/api/v1',
    '/api/v1/events',
  ];
  for (const path of paths) {
    const r = await upgrade(path);
    assert.equal(r.status, 404, `${path}: ${r.headers}`);
    assert.match(r.headers, /Content-Type: application\/json/, path);
    assert.equal(JSON.parse(r.body).code, 'not_found', path);
  }
  assert.deepEqual((await seen()).upgrades, []);
});

test("upgrades elsewhere on the studio's origin still reach its server", async () => {
  for (const path of ['/ws', '/', '/_backlotx', '/x/_backlot/y', '/ws?next=/_backlot/']) {
    const r = await upgrade(path);
    assert.equal(r.status, 101, `${path}: ${r.headers}`);
    assert.match(r.headers, /X-Studio: yes/, path);
  }
  const { upgrades } = await seen();
  assert.deepEqual(upgrades.slice(-5), ['/ws', '/', '/_backlotx', '/x/_backlot/y', '/ws?next=/_backlot/']);
});

test('variants of the prefix (percent-encoded, upper case, a doubled slash) go where a plain request with that path goes: the studio', async () => {
  for (const path of ['/%5Fbacklot/api/v1/kv/settings', '/%5fbacklot/x', '/_BACKLOT/x', '/_Backlot/api/v1/kv/settings', '//_backlot/x']) {
    const before = await seen();
    const plain = await send(svc.port, { path, headers: { Host: `${ID}.localhost:${svc.port}` } });
    assert.equal(plain.status, 200, `${path}: ${plain.text}`);
    assert.equal(plain.text, 'studio page', path);
    const r = await upgrade(path);
    assert.equal(r.status, 101, `${path}: ${r.headers}`);
    const after = await seen();
    assert.deepEqual(after.requests.slice(before.requests.length), [path]);
    assert.deepEqual(after.upgrades.slice(before.upgrades.length), [path]);
  }
});

test("the service's own origin still refuses every upgrade (404), the studio sees none", async () => {
  const before = (await seen()).upgrades.length;
  for (const path of ['/ws', '/_backlot/x', '/editor/events']) {
    const r = await new Promise<string>((resolve, reject) => {
      const socket = connect(svc.port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${svc.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`);
    });
    assert.match(r, /^HTTP\/1\.1 404 /, path);
  }
  assert.equal((await seen()).upgrades.length, before);
});
