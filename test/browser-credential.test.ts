import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import { makePng, upload } from './helpers/assets';
import { launchChromium, newContext, saveScreenshot, SCHEMES, signIn, storedCredential, watchPageErrors } from './helpers/browser';
import { send } from './helpers/http';
import { startLauncher, type LauncherClient } from './helpers/launcher';
import type { TestService } from './helpers/service';

/**
 * The launcher credential stays on the launcher's origin, in the machine's
 * Chromium (docs/security.md "The launcher credential"):
 * - a server on another port of 127.0.0.1, reached by a top-level navigation
 *   from a signed-in browser, receives nothing that opens /launcher: every
 *   header it got, and every cookie the browser holds, is tried against
 *   /api/v1/launcher/studios, as a Bearer and as a Cookie: all 401;
 * - cookies named like a Backlot credential, planted on 127.0.0.1 by a server
 *   on another port (a longer path first), change nothing: the launcher page,
 *   its thumbnails and the editor page still work;
 * - the login link: the code leaves the address bar; a used link says so and
 *   signs nothing in; thumbnails load through short-lived media URLs;
 * - `launcher-token --revoke-all` signs the page out.
 */

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

describe('the launcher credential in Chromium', { timeout: 240_000 }, () => {
  let svc: TestService;
  let l: LauncherClient;
  let browser: Browser;
  let other: Server;
  let otherUrl: string;
  let service: string;
  const seen: Seen[] = [];

  before(async () => {
    ({ svc, l } = await startLauncher());
    service = `http://127.0.0.1:${svc.port}`;
    const token = svc.studio('alpha', ['assets', 'gallery']);
    const png = await upload(svc.port, token, await makePng(96, 64, 11), 'kind=image&filename=tile.png', 'image/png');
    assert.equal(png.status, 201);
    const item = await send(svc.port, { method: 'POST', path: '/api/v1/gallery/items', token, body: { asset_id: png.json.id, title: 'A tile' } });
    assert.equal(item.status, 201, item.text);
    // Another program on 127.0.0.1: it records every request, and on /plant sets cookies named like Backlot's.
    other = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      const headers: Record<string, string | string[]> = { 'Content-Type': 'text/html' };
      if (req.url === '/plant') {
        headers['Set-Cookie'] = [
          'backlot_launcher=junk-longer-path; Path=/api/v1/launcher',
          'backlot_launcher=junk-root; Path=/',
          'backlot_launcher=junk-editor; Path=/editor',
          'backlot_launcher=junk-media; Path=/api/v1/media',
        ];
      }
      res.writeHead(200, headers);
      res.end('<!doctype html><title>elsewhere</title><p>another program on 127.0.0.1</p><img src="/pixel.png">');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', () => r()));
    otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, { timeout: 90_000 });

  after(async () => {
    await browser?.close();
    other?.close();
    await svc?.stop();
  }, { timeout: 30_000 });

  async function signedIn(scheme: 'light' | 'dark' = 'light'): Promise<{ context: BrowserContext; cred: string; page: import('playwright-core').Page }> {
    const context = await newContext(browser, scheme);
    const page = await context.newPage();
    const cred = await signIn(page, svc.cli(['login-url']).stdout);
    await page.getByRole('heading', { name: 'Studios' }).waitFor();
    return { context, cred, page };
  }

  /** Tries a value as a Bearer credential and as a Cookie header on /launcher: both must be 401. */
  async function assertOpensNothing(value: string, where: string): Promise<void> {
    for (const headers of [{ Authorization: `Bearer ${value}` }, { Cookie: value }]) {
      const r = await send(svc.port, { path: '/api/v1/launcher/studios', headers });
      assert.equal(r.status, 401, `${where}: ${JSON.stringify(headers).slice(0, 120)} opened /launcher`);
    }
  }

  test('a server on another 127.0.0.1 port, reached by top-level navigations from a signed-in browser, receives nothing that opens /launcher', async () => {
    const { context, cred, page } = await signedIn();
    try {
      seen.length = 0;
      // A link followed from the launcher page, a typed address, and a new window.
      await Promise.all([page.waitForURL(`${otherUrl}/from-launcher`), page.evaluate((u) => (location.href = u), `${otherUrl}/from-launcher`)]);
      await page.goto(`${otherUrl}/typed`);
      const popup = await context.newPage();
      await popup.goto(`${otherUrl}/window`);
      await page.waitForTimeout(300);
      assert.ok(seen.length >= 3, `the other server was reached: ${seen.map((s) => s.url).join(' ')}`);
      const values = new Set<string>();
      for (const s of seen) {
        for (const [name, value] of Object.entries(s.headers)) {
          for (const v of Array.isArray(value) ? value : [value ?? '']) {
            values.add(v);
            assert.ok(!v.includes(cred) && !v.includes('bl_launcher_'), `${s.url}: its ${name} header holds the credential`);
            if (name === 'cookie') {
              for (const part of v.split(';')) {
                values.add(part.trim());
                values.add(part.split('=').slice(1).join('=').trim());
              }
            }
          }
        }
      }
      for (const c of await context.cookies()) {
        values.add(c.value);
        values.add(`${c.name}=${c.value}`);
      }
      for (const v of values) if (v) await assertOpensNothing(v, 'a value the other server or the cookie jar saw');
      // The credential is kept by the service's origin only: another port's storage is its own.
      assert.equal(await storedCredential(context, service), cred);
      assert.equal(await storedCredential(context, otherUrl), null);
      assert.equal(await page.evaluate(() => localStorage.length), 0, "the other server's page sees no entry");
    } finally {
      await context.close();
    }
  });

  test('cookies named like the credential, planted on 127.0.0.1 by another port, change nothing: the page, its thumbnails and the editor work', async () => {
    const { context, page } = await signedIn();
    try {
      await page.goto(`${otherUrl}/plant`);
      const planted = (await context.cookies(`${service}/api/v1/launcher/studios`)).filter((c) => c.name === 'backlot_launcher');
      assert.ok(planted.length >= 2, `planted for the service's host too: ${JSON.stringify(planted)}`);
      const sentCookies: string[] = [];
      context.on('request', (r) => {
        // A request still in flight when the context closes has no headers left to read (its
        // promise rejects after the test): the checks below use those read before.
        if (r.url().startsWith(service)) r.allHeaders().then((h) => h.cookie && sentCookies.push(h.cookie), () => {});
      });
      const errors = watchPageErrors(page);
      await page.goto(`${service}/`);
      await page.getByRole('heading', { name: 'Studios' }).waitFor();
      const tile = page.locator('.g-tile img').first();
      await tile.waitFor();
      await page.waitForFunction(() => {
        const img = document.querySelector<HTMLImageElement>('.g-tile img');
        return img !== null && img.complete && img.naturalWidth > 0;
      }, undefined, { timeout: 15_000 });
      assert.match((await tile.getAttribute('src')) ?? '', /^\/api\/v1\/media\/[A-Za-z0-9._-]+$/, 'a thumbnail through a media URL');
      const editor = await context.newPage();
      await editor.goto(`${service}/editor/`);
      await editor.getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 15_000 });
      assert.deepEqual(errors, [], 'no refusal on the page');
      // The page's own calls send no cookie at all (credentials: 'omit'); what the browser sends by itself (the
      // pages, the thumbnails' media URLs) does carry the planted ones, and the service ignores them.
      for (const name of ['junk-root', 'junk-media', 'junk-editor']) {
        assert.ok(sentCookies.some((c) => c.includes(name)), `the planted ${name} reached the service: ${sentCookies.join(' | ')}`);
      }
    } finally {
      await context.close();
    }
  });

  test('the login link: the code leaves the address bar; used again it says so and signs nothing in', async () => {
    const login = svc.cli(['login-url']).stdout.trim();
    const first = await newContext(browser);
    try {
      const page = await first.newPage();
      await signIn(page, login);
      assert.equal(page.url(), `${service}/`);
      assert.ok(!(await page.evaluate(() => location.href)).includes('code='));
      assert.deepEqual(await first.cookies(), []);
    } finally {
      await first.close();
    }
    for (const scheme of SCHEMES) {
      for (const width of [1280, 800]) {
        const context = await newContext(browser, scheme, { viewport: { width, height: 700 } });
        try {
          const page = await context.newPage();
          await page.goto(login);
          await page.getByRole('alert').filter({ hasText: 'does not work' }).waitFor();
          const text = await page.locator('body').innerText();
          assert.match(text, /backlot login-url/);
          assert.doesNotMatch(text, /Jobs|Gallery/);
          assert.equal(page.url(), `${service}/`, 'the code left the address bar');
          assert.equal(await storedCredential(context, service), null);
          await saveScreenshot(page, `sign-in-used-link-${width}`, scheme);
        } finally {
          await context.close();
        }
      }
    }
  });

  test('launcher-token --revoke-all signs the page out', async () => {
    const { context, page } = await signedIn();
    try {
      const r = svc.cli(['launcher-token', '--revoke-all']);
      assert.equal(r.code, 0, r.stderr);
      await page.reload();
      await page.getByRole('heading', { name: 'Sign in to Backlot' }).waitFor();
      assert.doesNotMatch(await page.locator('body').innerText(), /Jobs|Gallery/);
    } finally {
      await context.close();
    }
    assert.equal((await l.get('/launcher/studios')).status, 401, 'every credential, the launcher-token one too');
  });
});
