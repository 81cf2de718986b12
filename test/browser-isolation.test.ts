import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM, newContext, type PageFetch, pageFetch, runtimeToken, signIn, storedCredential } from './helpers/browser';
import { client } from './helpers/http';
import { CLIPMAKER, SKETCHPAD, type LauncherClient, startLauncher } from './helpers/launcher';
import type { TestService } from './helpers/service';

/**
 * Isolation (docs/security.md "Isolation") in a real Chromium (the machine's, through playwright-core), on top
 * of what test/browser-studios.test.ts already pins (sketchpad's page reading
 * clipmaker's origin, the launcher API, the API without its token; nothing of the
 * launcher's credential sent to a studio origin):
 *
 * - a page on another origin, in a browser signed in to the launcher: a same-site one
 *   (`http://127.0.0.1:OTHER`, which would get any cookie of 127.0.0.1) and a cross-site
 *   one (`http://evil.test:OTHER`), reads no answer of the service or of a studio's
 *   `/_backlot`, and its form posts (urlencoded, multipart, text/plain) change nothing:
 *   no studio stopped, no install started, no asset uploaded through `/_backlot`;
 * - DNS rebinding: a page served as `http://evil.test:PORT/` (the service's port, the
 *   name resolving to 127.0.0.1) reads only 403s from its own origin, and cannot spend
 *   a login code;
 * - a studio page (sketchpad, its CSP bypassed so only the service stands in the way)
 *   reaches neither `/login`, nor `/editor/events`, nor the service origin's API with
 *   the browser's credentials, and its form posts to clipmaker's `/_backlot` and to the
 *   launcher change nothing.
 */

/** Nothing readable: the fetch threw (no CORS), or was opaque (status 0, no body), or was a refusal without data. */
function assertNoData(r: PageFetch, what: string, secrets: string[], refused = [401, 403, 404]): void {
  if (r.error !== undefined) {
    assert.equal(r.error, 'TypeError', `${what}: ${r.message}`);
    return;
  }
  if (r.type === 'opaque') {
    assert.equal(r.status, 0, what);
    assert.equal(r.text, '', what);
    return;
  }
  assert.ok(refused.includes(r.status), `${what}: answered ${r.status} ${r.text.slice(0, 300)}`);
  for (const s of secrets) assert.ok(!r.text.includes(s), `${what}: the answer holds ${s}`);
}

const ENCTYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/**
 * Submits a real HTML form (POST) from the page into a hidden frame and returns the
 * status of the answer as Chromium saw it (the page cannot read it; the test can).
 */
async function postForm(page: Page, action: string, enctype: string, fields: Record<string, string>): Promise<number> {
  const answered = page.waitForResponse((r) => r.url() === action && r.request().method() === 'POST', { timeout: 15_000 });
  await page.evaluate(
    ([a, e, f]) => {
      const frame = document.createElement('iframe');
      frame.name = `f${Math.random().toString(36).slice(2)}`;
      document.body.appendChild(frame);
      const form = document.createElement('form');
      form.method = 'POST';
      form.action = a;
      form.enctype = e;
      form.target = frame.name;
      for (const [k, v] of Object.entries(f)) {
        const input = document.createElement('input');
        input.type = 'hidden';
        input.name = k;
        input.value = v;
        form.appendChild(input);
      }
      document.body.appendChild(form);
      form.submit();
    },
    [action, enctype, fields] as const,
  );
  return (await answered).status();
}

/** A text/plain form whose body is JSON text (`{"confirm":true,"x":"="}`), the classic trick against JSON APIs. */
const JSON_FIELDS = { '{"confirm":true,"source":"/tmp","purge":true,"x":"': '"}' };

describe('isolation in real Chromium: other origins, DNS rebinding, a studio page', { timeout: 180_000 }, () => {
  let svc: TestService;
  let l: LauncherClient;
  let browser: Browser | undefined;
  let attacker: Server;
  let attackerPort: number;
  let service: string;
  let sketchpad: string;
  let clipmaker: string;
  /** A context signed in to the launcher (its credential in 127.0.0.1:PORT's localStorage). */
  let signedIn: BrowserContext;
  const secrets: string[] = [];

  before(async () => {
    assert.ok(existsSync(CHROMIUM), 'Chromium at /usr/bin/chromium');
    ({ svc, l } = await startLauncher());
    for (const dir of [SKETCHPAD, CLIPMAKER]) {
      const r = svc.cli(['install', dir]);
      assert.equal(r.code, 0, `install ${dir}: ${r.stdout}${r.stderr}`);
    }
    for (const id of ['sketchpad', 'clipmaker']) {
      const r = svc.cli(['start', id]);
      assert.equal(r.code, 0, `start ${id}: ${r.stdout}${r.stderr}`);
    }
    service = `http://127.0.0.1:${svc.port}`;
    sketchpad = `http://sketchpad.localhost:${svc.port}`;
    clipmaker = `http://clipmaker.localhost:${svc.port}`;

    // Something of each studio's to look for in every answer.
    const sk = client(svc.port, runtimeToken('sketchpad', svc.dataDir));
    assert.equal((await sk.put('/kv/isolation/secret', { secret: 'sketchpad-secret-value' })).status, 200);
    secrets.push('sketchpad-secret-value', '"items"', '"capabilities"');

    // The attacker's server: any path is a small page with no CSP of its own.
    attacker = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<!doctype html><title>elsewhere</title><p>another origin</p>');
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', () => r()));
    attackerPort = (attacker.address() as AddressInfo).port;

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP evil.test 127.0.0.1',
        // Chromium's Private Network Access already stops a page that came from elsewhere (the rebound
        // one) from reaching 127.0.0.1; it is turned off so that the service's own refusals are what is tested.
        '--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks',
      ],
    });
    signedIn = await newContext(browser, 'light', { bypassCSP: true });
    const login = svc.cli(['login-url']);
    assert.equal(login.code, 0, login.stderr);
    const page = await signedIn.newPage();
    await signIn(page, login.stdout);
    assert.ok(await storedCredential(signedIn, service), 'signed in');
    await page.close();
  }, { timeout: 90_000 });

  after(async () => {
    await browser?.close();
    attacker?.close();
    await svc?.stop();
  }, { timeout: 30_000 });

  /** Nothing any page below may have done: both studios running, no job beyond the installs', no file uploaded. */
  async function assertNothingChanged(what: string): Promise<void> {
    for (const id of ['sketchpad', 'clipmaker']) assert.equal((await l.studio(id)).state, 'running', `${what}: ${id}`);
    const jobs = await l.get('/launcher/jobs?limit=100');
    assert.equal(jobs.status, 200);
    for (const j of jobs.json.items as { kind: string; state: string }[]) assert.ok(['install', 'download', 'build'].includes(j.kind), `${what}: a ${j.kind} job ran`);
    for (const id of ['sketchpad', 'clipmaker']) {
      const library = join(svc.dataDir, 'library', id);
      const files = existsSync(library) ? readdirSync(library) : [];
      assert.ok(!files.some((f) => /attack|form/.test(f)), `${what}: ${id}'s library has ${files.join(', ')}`);
    }
  }

  for (const [name, origin] of [
    ['a same-site page (127.0.0.1, another port: any cookie of 127.0.0.1 would go along)', () => `http://127.0.0.1:${attackerPort}`],
    ['a cross-site page (evil.test)', () => `http://evil.test:${attackerPort}`],
  ] as const) {
    test(`${name}: reads no answer, and its form posts change nothing`, async () => {
      const page = await signedIn.newPage();
      try {
        await page.goto(`${origin()}/`);
        const statuses: [string, number][] = [];
        page.on('response', (r) => {
          if (!r.url().startsWith(origin())) statuses.push([r.url(), r.status()]);
        });
        const targets = [
          `${service}/api/v1/openapi.json`,
          `${service}/api/v1/launcher/studios`,
          `${service}/api/v1/launcher/jobs`,
          `${service}/api/v1/kv/isolation/secret`,
          `${service}/editor/events`,
          `${service}/`,
          `${sketchpad}/_backlot/api/v1/kv/isolation/secret`,
          `${sketchpad}/api/v1/kv/isolation/secret`,
          `${clipmaker}/_backlot/api/v1/gallery/items`,
        ];
        for (const url of targets) {
          for (const init of [{}, { credentials: 'include' as const }, { mode: 'no-cors' as const, credentials: 'include' as const }]) {
            assertNoData(await pageFetch(page, url, init), `${url} ${JSON.stringify(init)}`, secrets);
          }
        }
        // Forms: stop a studio, start an install, uninstall, upload into a studio's library through /_backlot.
        const forms = [
          `${service}/api/v1/launcher/studios/sketchpad:stop`,
          `${service}/api/v1/launcher/studios/clipmaker:uninstall`,
          `${service}/api/v1/launcher/studios:install`,
          `${sketchpad}/_backlot/api/v1/assets?kind=other&filename=attack.txt`,
          `${sketchpad}/_backlot/api/v1/kv/isolation/secret`,
          `${clipmaker}/_backlot/api/v1/assets?kind=other&filename=attack.txt`,
        ];
        for (const action of forms) {
          for (const enctype of ENCTYPES) {
            const status = await postForm(page, action, enctype, enctype === 'text/plain' ? JSON_FIELDS : { confirm: 'true', source: '/tmp', form: 'attack' });
            assert.equal(status, 403, `${enctype} form to ${action}: ${status}`);
          }
        }
        await new Promise((r) => setTimeout(r, 200)); // the last response events
        for (const [url, status] of statuses) {
          // The OpenAPI document needs no token and holds no data: a same-site no-cors GET (no Origin sent) gets it,
          // opaque to the page (assertNoData above). Everything else is refused.
          if (url === `${service}/api/v1/openapi.json` && status === 200) continue;
          assert.ok([401, 403, 404].includes(status), `${url} answered ${status}`);
        }
        assert.ok(statuses.length >= targets.length, `the service was reached: ${JSON.stringify(statuses)}`);
        await assertNothingChanged(name);
        const kv = await client(svc.port, runtimeToken('sketchpad', svc.dataDir)).get('/kv/isolation/secret');
        assert.deepEqual(kv.json.value, { secret: 'sketchpad-secret-value' });
      } finally {
        await page.close();
      }
    });
  }

  test("DNS rebinding: a page served as evil.test on the service's port reads only 403s and cannot spend a login code", async () => {
    const context = await newContext(browser!, 'light');
    try {
      const rebound = `http://evil.test:${svc.port}`;
      const page = await context.newPage();
      // The attacker's page arrives first (from the attacker's address); later requests reach 127.0.0.1.
      await page.route(`${rebound}/`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><p>rebound</p>' }));
      await page.goto(`${rebound}/`);
      await page.unroute(`${rebound}/`); // from now on the name resolves to 127.0.0.1 only
      const code = new URL(svc.cli(['login-url']).stdout.trim()).searchParams.get('code')!;
      for (const path of [
        '/api/v1/openapi.json',
        '/api/v1/launcher/studios',
        '/api/v1/kv/isolation/secret',
        '/_backlot/api/v1/kv/isolation/secret',
        '/editor/events',
        '/',
        `/login?code=${code}`,
      ]) {
        const r = await pageFetch(page, path, { credentials: 'include' });
        assert.ok(r.error === undefined, `${path}: ${JSON.stringify(r)}`);
        // Same origin to the page, so it could read an answer: every one is the refusal.
        assert.equal(r.status, 403, `${path}: ${r.status} ${r.text.slice(0, 200)}`);
        assert.equal(JSON.parse(r.text).code, 'bad_origin');
        for (const s of [...secrets, 'openapi']) assert.ok(!r.text.includes(s), `${path}: ${r.text}`);
      }
      const form = await postForm(page, `${rebound}/api/v1/launcher/studios/sketchpad:stop`, 'text/plain', JSON_FIELDS);
      assert.equal(form, 403);
      assert.deepEqual(await context.cookies(), []);
      // The code was never spent: it still signs in, once, on the service's own origin.
      const real = await context.newPage();
      await signIn(real, `${service}/login?code=${code}`);
      assert.ok(await storedCredential(context, service));
      assert.deepEqual(await context.cookies(), [], 'and no cookie');
      await assertNothingChanged('rebinding');
    } finally {
      await context.close();
    }
  });

  test("a studio page reaches neither /login, nor /editor, nor the service origin's API with the browser's credentials; its forms change nothing", async () => {
    const page = await signedIn.newPage();
    try {
      await page.goto(`${sketchpad}/`);
      await page.locator('#live[data-state="connected"]').waitFor();
      const code = new URL(svc.cli(['login-url']).stdout.trim()).searchParams.get('code')!;
      const statuses: [string, number][] = [];
      page.on('response', (r) => {
        if (!r.url().startsWith(sketchpad)) statuses.push([r.url(), r.status()]);
      });
      // Spending the code from the studio's page: a JSON post needs a preflight nothing answers; refused either way.
      for (const init of [
        { method: 'POST', body: JSON.stringify({ code }), headers: { 'Content-Type': 'application/json' } },
        { method: 'POST', body: JSON.stringify({ code }), headers: { 'Content-Type': 'application/json' }, mode: 'no-cors' as const },
        { method: 'POST', body: JSON.stringify({ code }), headers: { 'Content-Type': 'text/plain' } },
      ]) {
        assertNoData(await pageFetch(page, `${service}/login`, init), `POST /login ${JSON.stringify(init)}`, [...secrets, 'bl_launcher_'], [400, 401, 403, 404]);
      }
      for (const url of [
        `${service}/login?code=${code}`,
        `${service}/editor/events`,
        `${service}/api/v1/kv/isolation/secret`,
        `${service}/api/v1/openapi.json`,
        `http://localhost:${svc.port}/api/v1/launcher/studios`,
        `http://localhost:${svc.port}/editor/events`,
        `${clipmaker}/_backlot/api/v1/kv/isolation/secret`,
      ]) {
        for (const init of [{}, { credentials: 'include' as const }, { mode: 'no-cors' as const, credentials: 'include' as const }]) {
          assertNoData(await pageFetch(page, url, init), `${url} ${JSON.stringify(init)}`, secrets);
        }
      }
      // Its own origin's service paths never pass it the launcher's side either.
      for (const path of ['/login', `/login?code=${code}`, '/editor/events', '/_backlot/editor/events', '/_backlot/login']) {
        const r = await pageFetch(page, path, { credentials: 'include' });
        assert.ok(r.error !== undefined || !r.text.includes('backlot_launcher'), `${path}: ${JSON.stringify(r)}`);
        if (r.error === undefined) assert.ok(r.status >= 400, `${path}: ${r.status} ${r.text.slice(0, 200)}`);
      }
      for (const action of [
        `${service}/login`,
        `${service}/api/v1/launcher/studios/clipmaker:stop`,
        `http://localhost:${svc.port}/api/v1/launcher/studios/clipmaker:stop`,
        `${clipmaker}/_backlot/api/v1/assets?kind=other&filename=attack.txt`,
      ]) {
        for (const enctype of ENCTYPES) {
          const status = await postForm(page, action, enctype, enctype === 'text/plain' ? JSON_FIELDS : { confirm: 'true', form: 'attack' });
          assert.equal(status, 403, `${enctype} form to ${action}`);
        }
      }
      await new Promise((r) => setTimeout(r, 200));
      for (const [url, status] of statuses) assert.ok([401, 403, 404].includes(status), `${url} answered ${status}`);
      // The code was not spent by any of that.
      const real = await newContext(browser!, 'light');
      try {
        const p = await real.newPage();
        await signIn(p, `${service}/login?code=${code}`);
      } finally {
        await real.close();
      }
      await assertNothingChanged('studio page');
    } finally {
      await page.close();
    }
  });
});
