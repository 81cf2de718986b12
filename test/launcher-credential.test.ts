import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { migrate } from '../service/db/migrate';
import { MIGRATIONS } from '../service/db/migrations';
import { createLauncherCredentials } from '../service/studios';
import { makePng, rawRequest, upload, type BytesResponse } from './helpers/assets';
import { send } from './helpers/http';
import { fixture, sleep, startLauncher, type LauncherClient } from './helpers/launcher';
import { loginCodeOf, spendLoginCode } from './helpers/login';
import { assertError } from './helpers/scenario';
import { type TestService } from './helpers/service';
import { openSse } from './helpers/sse';

/**
 * The launcher credential stays on the launcher's origin (docs/security.md
 * "The launcher credential", docs/api.md §Media URLs and §Sign-in):
 * - short-lived media URLs open one asset and variant for reading, with byte
 *   ranges and the stored-file headers, never on a studio origin, never once
 *   expired (BACKLOT_MEDIA_URL_TTL_MS shortens their life here) or once the
 *   credential they were minted for is revoked;
 * - a browser sign-in expires after 30 days unused (its last use is moved back
 *   in the database, as an old one would be), its use is written at most once
 *   a minute; `launcher-token --list` shows the live ones, `--revoke-all` ends
 *   them and their open streams (launcher events, job logs, the editor channel).
 */

const db = (svc: TestService) => new Database(join(svc.dataDir, 'backlot.db'));
const sha = (text: string) => createHash('sha256').update(text).digest();
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const DAY = 24 * 60 * 60 * 1000;

async function browserSignIn(svc: TestService): Promise<string> {
  const r = svc.cli(['login-url']);
  assert.equal(r.code, 0, r.stderr);
  const res = await spendLoginCode(svc.port, loginCodeOf(r.stdout));
  assert.equal(res.status, 200, res.text);
  return res.json.credential;
}

async function mint(svc: TestService, cred: string, assets: { id: string; variant: string }[]) {
  const r = await send(svc.port, { method: 'POST', path: '/api/v1/launcher/media-urls', token: cred, body: { assets } });
  assert.equal(r.status, 200, r.text);
  return r.json.items as { id: string; variant: string; url: string | null; expires_at: string }[];
}

const get = (svc: TestService, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<BytesResponse> =>
  rawRequest(svc.port, { method, path, headers });

describe('media URLs', { timeout: 120_000 }, () => {
  let svc: TestService;
  let l: LauncherClient;
  let token: string;
  const asset: Record<'png' | 'bin' | 'svg', { id: string; size: number; bytes: Buffer }> = {} as never;

  before(async () => {
    ({ svc, l } = await startLauncher({ env: { BACKLOT_MEDIA_URL_TTL_MS: '3000' } }));
    token = svc.studio('alpha', ['assets', 'gallery']);
    await l.installOk(fixture({ id: 'hosted' }));
    await l.startOk('hosted');
    const files: [keyof typeof asset, Buffer, string, string][] = [
      ['png', await makePng(64, 48, 3), 'kind=image&filename=a.png', 'image/png'],
      ['bin', Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251)), 'kind=other&filename=b.bin', 'application/octet-stream'],
      ['svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'kind=other&filename=c.svg', 'image/svg+xml'],
    ];
    for (const [name, bytes, q, type] of files) {
      const up = await upload(svc.port, token, bytes, q, type);
      assert.equal(up.status, 201, up.body.toString());
      asset[name] = { id: up.json.id, size: bytes.length, bytes };
    }
  }, { timeout: 120_000 });
  after(async () => {
    await svc?.stop();
  });

  test('minted for the launcher credential only; an asset no studio can read gets no URL', async () => {
    const body = { assets: [{ id: asset.png.id, variant: 'file' }] };
    for (const t of [null, token, 'bl_launcher_made-up']) {
      assertError(await send(svc.port, { method: 'POST', path: '/api/v1/launcher/media-urls', token: t, body }), 401, 'unauthenticated');
    }
    assertError(await send(svc.port, { method: 'POST', path: '/api/v1/launcher/media-urls', token: l.cred, body, headers: { Host: `hosted.localhost:${svc.port}` } }), 403, 'bad_origin');
    assertError(await send(svc.port, { method: 'POST', path: '/api/v1/launcher/media-urls', token: l.cred, body: { assets: [] } }), 400, 'bad_request');
    assertError(await send(svc.port, { method: 'POST', path: '/api/v1/launcher/media-urls', token: l.cred, body: { assets: [{ id: asset.png.id, variant: 'raw' }] } }), 400, 'bad_request');
    const items = await mint(svc, l.cred, [
      { id: asset.png.id, variant: 'file' },
      { id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', variant: 'file' },
    ]);
    assert.match(items[0]!.url!, /^\/api\/v1\/media\/[A-Za-z0-9._-]+$/);
    assert.ok(!items[0]!.url!.includes(l.cred) && !items[0]!.url!.includes(l.cred.slice(12, 30)), 'the URL holds nothing of the credential');
    const left = Date.parse(items[0]!.expires_at) - Date.now();
    assert.ok(left > 0 && left <= 3000, `${left} ms`);
    assert.equal(items[1]!.url, null);
  });

  test('a URL opens its asset, with byte ranges and the stored-file headers; HEAD; its thumbnail', async () => {
    const [file, thumb, svgFile] = await mint(svc, l.cred, [
      { id: asset.bin.id, variant: 'file' },
      { id: asset.png.id, variant: 'thumb' },
      { id: asset.svg.id, variant: 'file' },
    ]);
    const whole = await get(svc, file!.url!);
    assert.equal(whole.status, 200);
    assert.deepEqual(whole.body, asset.bin.bytes);
    assert.equal(whole.headers['accept-ranges'], 'bytes');
    assert.equal(whole.headers['x-content-type-options'], 'nosniff');
    assert.match(String(whole.headers['content-security-policy']), /(^|; )sandbox($|;)/);
    const part = await get(svc, file!.url!, { Range: 'bytes=100-199' });
    assert.equal(part.status, 206);
    assert.equal(part.headers['content-range'], `bytes 100-199/${asset.bin.size}`);
    assert.deepEqual(part.body, asset.bin.bytes.subarray(100, 200));
    const tail = await get(svc, file!.url!, { Range: 'bytes=-10' });
    assert.equal(tail.status, 206);
    assert.deepEqual(tail.body, asset.bin.bytes.subarray(asset.bin.size - 10));
    assert.equal((await get(svc, file!.url!, { Range: `bytes=${asset.bin.size + 5}-` })).status, 416);
    const head = await get(svc, file!.url!, {}, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    assert.equal(head.headers['content-length'], String(asset.bin.size));
    const t = await get(svc, thumb!.url!);
    assert.equal(t.status, 200);
    assert.equal(t.headers['content-type'], 'image/webp');
    assert.match(String(t.headers['content-security-policy']), /(^|; )sandbox($|;)/);
    const svg = await get(svc, svgFile!.url!);
    assert.equal(svg.status, 200);
    assert.match(String(svg.headers['content-disposition']), /^attachment/);
    // A Cookie or an Authorization header changes nothing.
    assert.equal((await get(svc, file!.url!, { Authorization: `Bearer ${token}`, Cookie: 'backlot_launcher=junk' })).status, 200);
  });

  test('a URL opens that asset and variant only: any change to it is 401', async () => {
    const [file, thumb] = await mint(svc, l.cred, [
      { id: asset.png.id, variant: 'file' },
      { id: asset.png.id, variant: 'thumb' },
    ]);
    const tokenOf = (url: string) => url.slice('/api/v1/media/'.length);
    const [id, variant, expiry, credId, mac] = tokenOf(file!.url!).split('.');
    const forged = [
      [asset.bin.id, variant, expiry, credId, mac], // another asset
      [id, 't', expiry, credId, mac], // another variant
      [id, variant, (parseInt(expiry!, 36) + 3600).toString(36), credId, mac], // a later expiry
      [id, variant, expiry, '000000000000', mac], // another credential
      [id, variant, expiry, credId, `${mac!.slice(0, -2)}AA`], // another MAC
      [id, variant, expiry, credId], // no MAC
    ];
    for (const parts of forged) {
      const r = await get(svc, `/api/v1/media/${parts.join('.')}`);
      assert.equal(r.status, 401, `${parts.join('.')}: ${r.status}`);
      assert.equal(r.json.code, 'unauthenticated');
    }
    for (const junk of ['x', 'a.b.c.d.e', '..', `${'A'.repeat(150)}`]) assert.equal((await get(svc, `/api/v1/media/${junk}`)).status, 401, junk);
    // The thumb URL is not the file's: the thumbnail comes back, never the file.
    const t = await get(svc, thumb!.url!);
    assert.equal(t.headers['content-type'], 'image/webp');
    assert.notDeepEqual(t.body, asset.png.bytes);
  });

  test('never on a studio origin, nor from a studio page', async () => {
    const [file] = await mint(svc, l.cred, [{ id: asset.png.id, variant: 'file' }]);
    for (const headers of <Record<string, string>[]>[
      { Host: `hosted.localhost:${svc.port}` },
      { Host: `alpha.localhost:${svc.port}` },
      { Origin: `http://hosted.localhost:${svc.port}` },
      { 'Sec-Fetch-Site': 'same-site' },
      { 'Sec-Fetch-Site': 'cross-site' },
    ]) {
      const r = await get(svc, file!.url!, headers);
      assert.equal(r.status, 403, `${JSON.stringify(headers)}: ${r.status}`);
      assert.equal(r.json.code, 'bad_origin');
    }
    // Through the studio's own API prefix (as that studio): refused too, never the bytes.
    const viaBacklot = await get(svc, `/_backlot${file!.url!}`, { Host: `hosted.localhost:${svc.port}` });
    assert.equal(viaBacklot.status, 403);
    assert.notDeepEqual(viaBacklot.body, asset.png.bytes);
  });

  test('a URL expires (here after 3 s; at most 10 minutes)', async () => {
    const [file] = await mint(svc, l.cred, [{ id: asset.png.id, variant: 'file' }]);
    assert.equal((await get(svc, file!.url!)).status, 200);
    await sleep(Date.parse(file!.expires_at) - Date.now() + 50);
    const late = await get(svc, file!.url!);
    assert.equal(late.status, 401);
    assert.equal(late.json.code, 'unauthenticated');
  });

  test('a URL stops working once its credential is revoked', async () => {
    const cred = await browserSignIn(svc);
    const [file] = await mint(svc, cred, [{ id: asset.png.id, variant: 'file' }]);
    assert.equal((await get(svc, file!.url!)).status, 200);
    assert.equal(svc.cli(['token', 'revoke', cred]).code, 0);
    assert.equal((await get(svc, file!.url!)).status, 401);
  });
});

describe('browser sign-ins: 30 days unused, --list, --revoke-all', { timeout: 120_000 }, () => {
  let svc: TestService;
  let l: LauncherClient;

  before(async () => {
    ({ svc, l } = await startLauncher());
  }, { timeout: 60_000 });
  after(async () => {
    await svc?.stop();
  });

  const setUse = (cred: string, createdAgo: number, usedAgo: number) => {
    const d = db(svc);
    try {
      d.prepare('UPDATE launcher_credentials SET created_at = ?, last_used_at = ? WHERE hash = ?').run(ago(createdAgo), ago(usedAgo), sha(cred));
    } finally {
      d.close();
    }
  };
  const lastUsed = (cred: string) => {
    const d = db(svc);
    try {
      return d.prepare('SELECT last_used_at FROM launcher_credentials WHERE hash = ?').pluck().get(sha(cred)) as string;
    } finally {
      d.close();
    }
  };
  const studios = (cred: string) => send(svc.port, { path: '/api/v1/launcher/studios', token: cred });

  test('a Cookie header never matters: a junk one beside the Bearer changes nothing, the credential as a cookie opens nothing', async () => {
    const cred = await browserSignIn(svc);
    const junk = 'backlot_launcher=junk; backlot_launcher=also-junk';
    assert.equal((await send(svc.port, { path: '/api/v1/launcher/studios', token: cred, headers: { Cookie: junk } })).status, 200);
    const editor = await openSse(svc.port, '!/editor/events', cred, { 'Sec-Fetch-Site': 'same-origin', Cookie: junk });
    try {
      assert.equal(editor.status, 200, editor.text());
    } finally {
      editor.close();
    }
    assertError(await send(svc.port, { path: '/api/v1/launcher/studios', headers: { Cookie: `backlot_launcher=${cred}` } }), 401, 'unauthenticated');
    assert.equal((await openSse(svc.port, '!/editor/events', undefined, { 'Sec-Fetch-Site': 'same-origin', Cookie: `backlot_launcher=${cred}` })).status, 401);
  });

  test('a browser sign-in unused for 30 days opens nothing; used within them it lives on, and the use is written at most once a minute', async () => {
    const stale = await browserSignIn(svc);
    const fresh = await browserSignIn(svc);
    setUse(stale, 40 * DAY, 30 * DAY + 60_000);
    setUse(fresh, 40 * DAY, 29 * DAY);
    assertError(await studios(stale), 401, 'unauthenticated');
    assert.equal((await openSse(svc.port, '!/editor/events', stale, { 'Sec-Fetch-Site': 'same-origin' })).status, 401);
    assert.equal((await studios(fresh)).status, 200);
    const touched = lastUsed(fresh);
    assert.ok(Date.now() - Date.parse(touched) < 10_000, `used now: ${touched}`);
    // Used again within the minute: not written again.
    setUse(fresh, 40 * DAY, 30_000);
    const before_ = lastUsed(fresh);
    for (let i = 0; i < 5; i++) assert.equal((await studios(fresh)).status, 200);
    assert.equal(lastUsed(fresh), before_, 'not written on every request');
    // A `launcher-token` credential does not expire by disuse (it lasts until revoked).
    const cli = svc.cli(['launcher-token']).stdout.trim();
    setUse(cli, 400 * DAY, 400 * DAY);
    assert.equal((await studios(cli)).status, 200);
  });

  test('--list shows the live ones (id, kind, created, last used, expiry), never a credential; --json', async () => {
    const browser = await browserSignIn(svc);
    const revoked = await browserSignIn(svc);
    assert.equal(svc.cli(['token', 'revoke', revoked]).code, 0);
    const json = svc.cli(['launcher-token', '--list', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const rows = JSON.parse(json.stdout) as any[];
    for (const row of rows) {
      assert.deepEqual(Object.keys(row).sort(), ['created_at', 'expires_at', 'id', 'kind', 'last_used_at']);
      assert.match(row.id, /^[0-9a-f]{12}$/);
      assert.ok(['browser', 'cli', 'command'].includes(row.kind));
    }
    const d = db(svc);
    const idOf = (cred: string) => d.prepare('SELECT id FROM launcher_credentials WHERE hash = ?').pluck().get(sha(cred)) as string;
    try {
      const mine = rows.find((r) => r.id === idOf(browser));
      assert.ok(mine, 'the new sign-in is listed');
      assert.equal(mine.kind, 'browser');
      assert.equal(Date.parse(mine.expires_at) - Date.parse(mine.last_used_at), 30 * DAY);
      assert.ok(!rows.some((r) => r.id === idOf(revoked)), 'a revoked one is not');
      const cli = rows.find((r) => r.id === idOf(l.cred));
      assert.equal(cli.kind, 'cli');
      assert.equal(cli.expires_at, null);
    } finally {
      d.close();
    }
    const table = svc.cli(['launcher-token', '--list']);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trim().split('\n');
    assert.match(lines[0]!, /^ID +KIND +CREATED +LAST USED +EXPIRES$/);
    assert.equal(lines.length, rows.length + 1);
    assert.ok(lines.some((line) => /^[0-9a-f]{12} +browser +\S+ +\S+ +\S+$/.test(line)), table.stdout);
    assert.ok(lines.some((line) => /^[0-9a-f]{12} +cli +\S+ +\S+ +when revoked$/.test(line)), table.stdout);
    for (const text of [table.stdout, json.stdout]) {
      assert.ok(!text.includes('bl_launcher_'), 'never a credential');
      assert.ok(!text.includes(sha(browser).toString('hex')), 'never a hash');
    }
    // The wrong flags.
    assert.equal(svc.cli(['launcher-token', '--list', '--revoke-all']).code, 2);
    assert.equal(svc.cli(['launcher-token', '--json']).code, 2);
    const help = svc.cli(['launcher-token', '--help']);
    assert.match(help.stdout, /--list/);
    assert.match(help.stdout, /--revoke-all/);
  });

  test('--revoke-all ends every credential and their open streams: launcher events, a job log, the editor channel', async () => {
    const browser = await browserSignIn(svc);
    const src = fixture({ id: 'slow', install: [{ name: 'wait', run: 'node tool.js sleep 30000' }] });
    const install = await l.post('/launcher/studios:install', { source: src });
    assert.equal(install.status, 202, install.text);
    const jobId = install.json.id as string;
    const events = await openSse(svc.port, '/launcher/events', browser);
    const log = await openSse(svc.port, `/launcher/jobs/${jobId}/logs`, browser);
    const editor = await openSse(svc.port, '!/editor/events', browser, { 'Sec-Fetch-Site': 'same-origin' });
    const cliEvents = await openSse(svc.port, '/launcher/events', l.cred);
    try {
      for (const s of [events, log, editor, cliEvents]) assert.equal(s.status, 200, s.text());
      await editor.waitFor((m) => m.event === 'hello');
      const r = svc.cli(['launcher-token', '--revoke-all']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^\d+ launcher credentials? revoked\.$/m);
      const deadline = (p: Promise<void>, what: string) =>
        Promise.race([p, sleep(5000).then(() => Promise.reject(new Error(`${what} still open 5 s after --revoke-all`)))]);
      await Promise.all([
        deadline(events.closed, 'launcher events'),
        deadline(log.closed, 'the job log'),
        deadline(editor.closed, 'the editor channel'),
        deadline(cliEvents.closed, "the launcher-token credential's events"),
      ]);
      for (const cred of [browser, l.cred]) assertError(await studios(cred), 401, 'unauthenticated');
      assert.equal(JSON.parse(svc.cli(['launcher-token', '--list', '--json']).stdout).length, 0);
      assert.match(svc.cli(['launcher-token', '--list']).stdout, /No live launcher credentials/);
    } finally {
      for (const s of [events, log, editor, cliEvents]) s.close();
      const fresh = svc.cli(['launcher-token']).stdout.trim();
      await send(svc.port, { method: 'POST', path: `/api/v1/launcher/jobs/${jobId}:cancel`, token: fresh });
    }
  });
});

test('migration 0012: credentials made before it become `cli`, each with its own id, last used when made, and still open; the id lookup is an index search', () => {
  const d = new Database(':memory:');
  d.pragma('foreign_keys = ON');
  migrate(d, MIGRATIONS.slice(0, 11));
  const old = ['bl_launcher_one', 'bl_launcher_two'];
  for (const c of old) d.prepare('INSERT INTO launcher_credentials (hash, created_at) VALUES (?, ?)').run(sha(c), '2026-01-02T03:04:05.678Z');
  assert.deepEqual(migrate(d, MIGRATIONS.slice(0, 12)), [12]);
  const rows = d.prepare('SELECT id, kind, created_at, last_used_at FROM launcher_credentials').all() as { id: string; kind: string; created_at: string; last_used_at: string }[];
  assert.equal(rows.length, 2);
  assert.notEqual(rows[0]!.id, rows[1]!.id);
  for (const r of rows) {
    assert.match(r.id, /^[0-9a-f]{12}$/);
    assert.equal(r.kind, 'cli');
    assert.equal(r.last_used_at, r.created_at);
  }
  const credentials = createLauncherCredentials(d as never, () => Date.parse('2027-06-01T00:00:00.000Z'));
  for (const c of old) assert.ok(credentials.resolve(sha(c)), 'a cli credential does not expire by disuse');
  assert.throws(() => d.prepare("UPDATE launcher_credentials SET kind = 'other'").run(), /CHECK/);
  const plan = (d.prepare("EXPLAIN QUERY PLAN SELECT hash FROM launcher_credentials WHERE id = ? AND revoked_at IS NULL").all('x') as { detail: string }[]).map((r) => r.detail);
  assert.deepEqual(plan, ['SEARCH launcher_credentials USING INDEX launcher_credentials_id (id=?)']);
  d.close();
});
