import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import type { Browser, Page } from 'playwright-core';
import { CREDENTIAL_KEY, launchChromium, newContext, type PageFetch, pageFetch, runtimeToken, saveScreenshot, SCHEMES, signIn, storedCredential, watchPageErrors } from './helpers/browser';
import { client, send } from './helpers/http';
import { ROOT, startService, type TestService } from './helpers/service';

/**
 * The launcher in a real browser: the two example studios installed and started through
 * the CLI on a real service, each opened on its own origin `http://<id>.localhost:PORT/`
 * in the machine's Chromium (playwright-core, /usr/bin/chromium). Sketchpad draws,
 * saves and shows thumbnails through `/_backlot`; clipmaker renders a clip with the real
 * ffmpeg; a studio's page reaches neither another studio, nor the launcher, nor the API
 * without its own token; WebSocket and server-sent events pass the proxy; stopped and
 * unknown studios get the proxy's pages. Screenshots (light and dark) go to
 * test-results/.
 */

const EXAMPLES = join(ROOT, 'examples', 'studios');
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** A fetch that got nothing: it threw (no CORS), or was opaque, or was refused; never a body with `secret` in it. */
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

async function until<T>(fn: () => Promise<T | undefined | null | false>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms${last ? ` (${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Strokes on sketchpad's canvas with the mouse, in page coordinates of the canvas box. */
async function drawStrokes(page: Page, strokes: [number, number][][]): Promise<void> {
  const box = (await page.locator('#canvas').boundingBox())!;
  assert.ok(box && box.width > 100 && box.height > 100, 'the canvas is laid out');
  for (const stroke of strokes) {
    const [first, ...rest] = stroke.map(([fx, fy]) => [box.x + fx * box.width, box.y + fy * box.height] as const);
    await page.mouse.move(first![0], first![1]);
    await page.mouse.down();
    for (const [x, y] of rest) await page.mouse.move(x, y, { steps: 8 });
    await page.mouse.up();
  }
}

/** Canvas pixels (sampled) close to `hex`: the brush's colour really was used for the strokes. */
function countBrushPixels(page: Page, hex: string): Promise<number> {
  return page.evaluate((color) => {
    const c = document.getElementById('canvas') as HTMLCanvasElement;
    const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    const want = [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16));
    let n = 0;
    for (let p = 0; p < data.length; p += 4 * 7) {
      if (Math.abs(data[p]! - want[0]!) < 8 && Math.abs(data[p + 1]! - want[1]!) < 8 && Math.abs(data[p + 2]! - want[2]!) < 8) n++;
    }
    return n;
  }, hex);
}

describe('example studios in real Chromium', { timeout: 150_000 }, () => {
  let svc: TestService;
  let launching: Promise<Browser> | undefined;
  let browser: Browser;
  let sketchpad: string;
  let clipmaker: string;

  before(async () => {
    assert.ok(existsSync('/usr/bin/chromium'), 'Chromium at /usr/bin/chromium (CI installs it with apt)');
    const env: NodeJS.ProcessEnv = {};
    if (existsSync('/usr/bin/ffmpeg')) env.BACKLOT_FFMPEG = '/usr/bin/ffmpeg';
    if (existsSync('/usr/bin/ffprobe')) env.BACKLOT_FFPROBE = '/usr/bin/ffprobe';
    launching = launchChromium();
    launching.catch(() => undefined); // awaited below; a failure is reported there
    svc = await startService({ env });
    for (const id of ['sketchpad', 'clipmaker']) {
      const installed = svc.cli(['install', join(EXAMPLES, id)]);
      assert.equal(installed.code, 0, `install ${id}: ${installed.stdout}${installed.stderr}`);
      const started = svc.cli(['start', id]);
      assert.equal(started.code, 0, `start ${id}: ${started.stdout}${started.stderr}`);
    }
    sketchpad = `http://sketchpad.localhost:${svc.port}`;
    clipmaker = `http://clipmaker.localhost:${svc.port}`;
    browser = await launching;
  }, { timeout: 60_000 });

  after(async () => {
    // Closed even when `before` failed half-way: an open browser would keep this process alive.
    await (await launching?.catch(() => undefined))?.close();
    await svc?.stop();
  }, { timeout: 30_000 });

  test('sketchpad: drawing saved through /_backlot shows its thumbnail; brush settings persist in KV; light and dark', async () => {
    const brush = { color: '#d9480f', size: '14' };
    const prompt = `a lighthouse at dusk ${randomBytes(3).toString('hex')}`;
    const context = await newContext(browser, 'light');
    try {
      const page = await context.newPage();
      const errors = watchPageErrors(page);
      const thumbs: { url: string; status: number; type: string }[] = [];
      page.on('response', (r) => {
        if (r.url().endsWith('/thumb')) thumbs.push({ url: r.url(), status: r.status(), type: r.headers()['content-type'] ?? '' });
      });
      const res = await page.goto(`${sketchpad}/`);
      assert.equal(res?.status(), 200);
      assert.equal(await page.title(), 'Sketchpad · Backlot');
      await page.locator('#gallery .empty').waitFor();

      // Brush settings: the page PUTs them to KV (debounced); the service keeps them as sketchpad's.
      await page.locator('#color').fill(brush.color);
      await page.locator('#size').fill(brush.size);
      assert.equal(await page.locator('#size-value').textContent(), brush.size);
      await until(
        async () => {
          const r = await pageFetch(page, '/_backlot/api/v1/kv/settings/brush');
          return r.error === undefined && r.status === 200 && JSON.parse(r.text).value.color === brush.color && JSON.parse(r.text).value.size === 14;
        },
        5000,
        'brush settings stored in KV',
      );

      await drawStrokes(page, [
        [[0.1, 0.2], [0.4, 0.7], [0.7, 0.3], [0.9, 0.8]],
        [[0.2, 0.85], [0.5, 0.15], [0.8, 0.5]],
      ]);
      assert.ok((await countBrushPixels(page, brush.color)) > 200, 'the strokes are on the canvas, in the brush colour');

      // The launcher, open beside it (as a desktop window would be), its gallery loaded.
      const launcher = await context.newPage();
      const login = svc.cli(['login-url']);
      assert.equal(login.code, 0, login.stderr);
      await signIn(launcher, login.stdout);
      await launcher.locator('#gallery .g-grid, #gallery .g-empty').first().waitFor({ timeout: 30_000 });

      await page.locator('#prompt').fill(prompt);
      await page.locator('#tags').fill('lighthouse, dusk, lighthouse,  test ');
      await page.locator('#save').click();
      await page.locator('#status[data-kind="ok"]').waitFor({ timeout: 15_000 }).catch(async (err) => {
        throw new Error(`save did not succeed: ${await page.locator('#status').textContent()} (${err})`);
      });
      const savedAt = Date.now();
      const itemId = /item ([0-9A-Z]{26})/.exec((await page.locator('#status').textContent()) ?? '')?.[1];
      assert.match(itemId ?? '', ULID, 'the status names the new gallery item');
      // The save shows in the open launcher with no action there, within a second (its `item` event).
      await launcher.locator(`#gallery .g-tile[data-item-id="${itemId}"]`).waitFor({ timeout: 1000 });
      console.log(`# sketchpad save shown in the launcher ${Date.now() - savedAt} ms after the studio said it was saved`);
      await launcher.close();

      // Its thumbnail, loaded by the browser through the studio's own origin.
      const img = page.locator(`#gallery img[data-item-id="${itemId}"]`);
      await img.scrollIntoViewIfNeeded();
      await page.waitForFunction((id) => {
        const el = document.querySelector(`#gallery img[data-item-id="${id}"]`) as HTMLImageElement | null;
        return el !== null && el.complete && el.naturalWidth > 0;
      }, itemId);
      const shown = await img.evaluate((el: HTMLImageElement) => ({ src: el.src, naturalWidth: el.naturalWidth, naturalHeight: el.naturalHeight, alt: el.alt }));
      const src = new URL(shown.src);
      assert.equal(src.origin, sketchpad, 'the thumbnail is same-origin');
      assert.ok(src.pathname.startsWith('/_backlot/api/v1/assets/'), src.pathname);
      assert.ok(src.pathname.endsWith('/thumb'), src.pathname);
      assert.ok(shown.naturalWidth > 0 && shown.naturalHeight > 0, JSON.stringify(shown));
      assert.equal(shown.alt, prompt);
      const thumb = thumbs.find((t) => t.url === shown.src);
      assert.ok(thumb, 'the browser fetched the thumbnail');
      assert.equal(thumb.status, 200);
      assert.match(thumb.type, /^image\//);

      // The item as stored: prompt, tags (deduplicated, trimmed), and the asset the thumbnail shows.
      const item = await pageFetch(page, `/_backlot/api/v1/gallery/items/${itemId}`);
      assert.ok(item.error === undefined && item.status === 200, JSON.stringify(item));
      const body = JSON.parse(item.text);
      assert.equal(body.studio_id, 'sketchpad');
      assert.equal(body.title, prompt);
      assert.deepEqual([...body.tags].sort(), ['dusk', 'lighthouse', 'test']);
      assert.equal(body.params.prompt, prompt);
      assert.equal(body.kind, 'image');
      assert.ok(src.pathname.includes(body.asset_id));

      await saveScreenshot(page, 'sketchpad', 'light');

      // A reload reads the brush back from KV.
      await page.reload();
      await page.waitForFunction(
        ([color, size]) =>
          (document.getElementById('color') as HTMLInputElement).value === color &&
          (document.getElementById('size') as HTMLInputElement).value === size &&
          document.getElementById('size-value')!.textContent === size,
        [brush.color, brush.size] as const,
      );
      // The only failures: reading the brush before it was ever saved (the page keeps its defaults).
      assert.deepEqual(
        errors.filter((e) => e !== '404 /_backlot/api/v1/kv/settings/brush'),
        [],
      );
    } finally {
      await context.close();
    }

    // Dark: another context (no shared browser state): the brush and the gallery come from the service.
    const dark = await newContext(browser, 'dark');
    try {
      const page = await dark.newPage();
      const errors = watchPageErrors(page);
      await page.goto(`${sketchpad}/`);
      assert.equal(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), true);
      await page.waitForFunction((color) => (document.getElementById('color') as HTMLInputElement).value === color, brush.color);
      assert.equal(await page.locator('#size').inputValue(), brush.size);
      await page.waitForFunction(() => {
        const el = document.querySelector('#gallery img[data-item-id]') as HTMLImageElement | null;
        return el !== null && el.complete && el.naturalWidth > 0;
      });
      await drawStrokes(page, [[[0.15, 0.5], [0.5, 0.3], [0.85, 0.6]]]);
      assert.ok((await countBrushPixels(page, brush.color)) > 50, 'drawn with the stored brush colour');
      await page.locator('#live[data-state="connected"]').waitFor();
      await saveScreenshot(page, 'sketchpad', 'dark');
      assert.deepEqual(errors, []);
    } finally {
      await dark.close();
    }
  });

  test('clipmaker: renders a 1 s clip with the real ffmpeg; it appears in #clips as a <video> under /_backlot; light and dark', async () => {
    const prompt = `one second of bars ${randomBytes(3).toString('hex')}`;
    for (const scheme of SCHEMES) {
      const context = await newContext(browser, scheme);
      try {
        const page = await context.newPage();
        const errors = watchPageErrors(page);
        const res = await page.goto(`${clipmaker}/`);
        assert.equal(res?.status(), 200);
        const progress = page.getByRole('progressbar', { name: 'Render progress' });
        assert.equal(await progress.count(), 1);

        if (scheme === 'light') {
          await page.locator('#clips .empty').waitFor();
          assert.equal(await page.locator('#render').isDisabled(), false, `rendering is available: ${await page.locator('#status').textContent()}`);
          assert.equal(await progress.getAttribute('aria-valuenow'), '0');
          await page.locator('#prompt').fill(prompt);
          await page.locator('#pattern').selectOption('smptebars');
          await page.locator('#seconds').fill('1');
          await page.locator('#render').click();
          await page.locator('#status[data-kind="ok"]').waitFor({ timeout: 40_000 }).catch(async (err) => {
            throw new Error(`render did not succeed: ${await page.locator('#status').textContent()} (${err})`);
          });
          assert.equal(await progress.getAttribute('aria-valuenow'), '100');
          assert.equal(await progress.getAttribute('aria-valuetext'), 'Done');
        }

        const li = page.locator('#clips li[data-item-id]');
        await li.first().waitFor();
        assert.equal(await li.count(), 1, 'one clip');
        const video = li.first().locator('video');
        const src = new URL((await video.evaluate((v: HTMLVideoElement) => v.src)) as string);
        assert.equal(src.origin, clipmaker);
        assert.ok(src.pathname.startsWith('/_backlot/api/v1/assets/'), src.pathname);
        await video.scrollIntoViewIfNeeded();
        // The browser reads the clip's metadata through /_backlot (byte ranges): about one second long.
        const duration = await page.waitForFunction(() => {
          const v = document.querySelector('#clips video') as HTMLVideoElement | null;
          if (v?.error) return `error ${v.error.code}`;
          return v && v.readyState >= 1 && Number.isFinite(v.duration) ? v.duration : false;
        }, undefined, { timeout: 15_000 });
        const seconds = await duration.jsonValue();
        assert.equal(typeof seconds, 'number', `the <video> loaded: ${seconds}`);
        assert.ok(Math.abs((seconds as number) - 1) < 0.3, `duration ${seconds}`);
        assert.match((await li.first().locator('.meta strong').textContent()) ?? '', new RegExp(prompt));
        assert.match((await li.first().locator('.meta span').textContent()) ?? '', /smptebars · 1 s/);

        if (scheme === 'light') {
          const itemId = await li.first().getAttribute('data-item-id');
          const item = await pageFetch(page, `/_backlot/api/v1/gallery/items/${itemId}`);
          assert.ok(item.error === undefined && item.status === 200, JSON.stringify(item));
          const body = JSON.parse(item.text);
          assert.equal(body.studio_id, 'clipmaker');
          assert.equal(body.kind, 'video');
          assert.equal(body.params.seconds, 1);
          assert.ok(src.pathname.endsWith(`/${body.asset_id}`));
        }
        await saveScreenshot(page, 'clipmaker', scheme);
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    }
  });

  test("clipmaker's :open shows its reel in a connected editor page (the launcher's /editor/)", async () => {
    const context = await newContext(browser, 'light');
    try {
      const editor = await context.newPage();
      const editorErrors = watchPageErrors(editor);
      const login = svc.cli(['login-url']);
      assert.equal(login.code, 0, login.stderr);
      await signIn(editor, login.stdout);
      await editor.goto(`http://127.0.0.1:${svc.port}/editor/`);
      await editor.getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 30_000 });

      const studioPage = await context.newPage();
      await studioPage.goto(`${clipmaker}/`);
      await studioPage.locator('#prompt').fill(`opened in the editor ${randomBytes(3).toString('hex')}`);
      await studioPage.locator('#seconds').fill('1');
      await studioPage.locator('#render').click();
      await studioPage.locator('#status[data-kind="ok"]').waitFor({ timeout: 40_000 });
      assert.match((await studioPage.locator('#status').textContent()) ?? '', /opened in the editor/);

      await editor.getByRole('heading', { name: 'Clipmaker reel' }).waitFor({ timeout: 15_000 });
      await editor.getByRole('group', { name: 'Track V1' }).waitFor();
      assert.ok((await editor.getByRole('group', { name: 'Track V1' }).getByRole('button').count()) >= 1, 'the reel shows its clips');
      await saveScreenshot(editor, 'clipmaker-opened-in-editor', 'light');
      assert.deepEqual(editorErrors, []);
    } finally {
      await context.close();
    }
  });

  test("isolation: sketchpad's page gets nothing from clipmaker's origin, the launcher, or the API without its token; a forged Authorization still acts as sketchpad", async () => {
    const sketchToken = runtimeToken('sketchpad', svc.dataDir);
    const clipToken = runtimeToken('clipmaker', svc.dataDir);
    const asSketchpad = client(svc.port, sketchToken);

    // Sketchpad's own KV doc (the brush), as the studio's server would read it.
    let own = await asSketchpad.get('/kv/settings/brush');
    if (own.status === 404) {
      assert.equal((await asSketchpad.put('/kv/settings/brush', { color: '#123456', size: 9 })).status, 200);
      own = await asSketchpad.get('/kv/settings/brush');
    }
    assert.equal(own.status, 200);
    const brushColor = own.json.value.color as string;

    // Clipmaker's data: an asset and a gallery item its runtime token made.
    const png = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#ff00ff' } }).png().toBuffer();
    const asset = await send(svc.port, { method: 'POST', path: '/api/v1/assets?kind=image&filename=secret.png', token: clipToken, raw: png, contentType: 'image/png' });
    assert.equal(asset.status, 201, asset.text);
    const secretTitle = `clipmaker-secret-${randomBytes(4).toString('hex')}`;
    const clipItem = await client(svc.port, clipToken).post('/gallery/items', { asset_id: asset.json.id, title: secretTitle });
    assert.equal(clipItem.status, 201, clipItem.text);
    const secrets = [secretTitle, asset.json.id as string, clipItem.json.id as string];

    // Sketchpad's token, used directly, cannot read them either.
    assert.equal((await asSketchpad.get(`/assets/${asset.json.id}`)).status, 404);
    assert.equal((await asSketchpad.get(`/gallery/items/${clipItem.json.id}`)).status, 404);

    // Other origins, twice: from the page as shipped (its own CSP, connect-src 'self', already stops these
    // fetches in the browser) and with that CSP bypassed, where only the service's refusals stand between
    // the page and the data: every request that reaches the service is 403 and nothing readable comes back.
    for (const bypassCSP of [false, true]) {
      const context = await newContext(browser, 'light', { bypassCSP });
      try {
        const page = await context.newPage();
        await page.goto(`${sketchpad}/`);
        await page.locator('#live[data-state="connected"]').waitFor();
        const answered: [string, number][] = [];
        page.on('response', (r) => {
          if (!r.url().startsWith(sketchpad)) answered.push([r.url(), r.status()]);
        });
        for (const path of ['/', '/app/status', '/_backlot/api/v1/gallery/items', `/_backlot/api/v1/assets/${asset.json.id}`]) {
          for (const init of [{}, { mode: 'no-cors' as const }, { credentials: 'include' as const }]) {
            assertNoData(await pageFetch(page, `${clipmaker}${path}`, init), `clipmaker ${path} ${JSON.stringify(init)} (bypassCSP ${bypassCSP})`, secrets);
          }
        }
        const post = await pageFetch(page, `${clipmaker}/_backlot/api/v1/gallery/items`, {
          method: 'POST',
          mode: 'no-cors',
          headers: { 'Content-Type': 'text/plain' },
          body: JSON.stringify({ asset_id: asset.json.id, title: 'written by sketchpad' }),
        });
        assertNoData(post, `POST to clipmaker's gallery (bypassCSP ${bypassCSP})`, secrets);
        for (const init of [{}, { credentials: 'include' as const }, { mode: 'no-cors' as const }]) {
          const r = await pageFetch(page, `http://127.0.0.1:${svc.port}/api/v1/launcher/studios`, init);
          assertNoData(r, `127.0.0.1 launcher ${JSON.stringify(init)} (bypassCSP ${bypassCSP})`, ['"items"', 'clipmaker']);
        }
        // Clipmaker's thumbnail as an <img> on sketchpad's page does not load either.
        const img = await page.evaluate(
          (src) =>
            new Promise<string>((resolve) => {
              const el = new Image();
              el.onload = () => resolve(`loaded ${el.naturalWidth}`);
              el.onerror = () => resolve('error');
              el.src = src;
            }),
          `${clipmaker}/_backlot/api/v1/assets/${asset.json.id}/thumb`,
        );
        assert.equal(img, 'error');
        await new Promise((r) => setTimeout(r, 200)); // the last response events
        for (const [url, status] of answered) assert.equal(status, 403, `${url} answered ${status} (bypassCSP ${bypassCSP})`);
        if (bypassCSP) assert.ok(answered.length >= 4, `the service was reached and refused: ${JSON.stringify(answered)}`);
      } finally {
        await context.close();
      }
    }
    // Nothing was written to clipmaker's gallery by sketchpad's page.
    const clipItems = await client(svc.port, clipToken).get('/gallery/items?limit=100');
    assert.ok(!clipItems.text.includes('written by sketchpad'));

    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      await page.goto(`${sketchpad}/`);
      await page.locator('#live[data-state="connected"]').waitFor();

      // The API on its own origin without a token: 401, no data.
      const bare = await pageFetch(page, '/api/v1/kv/settings/brush');
      assert.ok(bare.error === undefined, JSON.stringify(bare));
      assert.equal(bare.status, 401, bare.text);
      assert.ok(!bare.text.includes(brushColor), bare.text);
      assert.equal(JSON.parse(bare.text).code, 'unauthenticated');

      // The launcher through /_backlot: the studio's token never opens it.
      for (const path of ['/_backlot/api/v1/launcher/studios', '/_backlot/api/v1/launcher/studios/clipmaker', '/_backlot/api/v1/launcher/jobs']) {
        const r = await pageFetch(page, path);
        assertNoData(r, path, ['"items"', '"capabilities"', clipToken]);
      }
      const startClip = await pageFetch(page, '/_backlot/api/v1/launcher/studios/clipmaker:stop', { method: 'POST' });
      assertNoData(startClip, 'stop clipmaker through /_backlot', []);

      // A forged Authorization (garbage, or clipmaker's real runtime token) is ignored: /_backlot acts as sketchpad.
      for (const auth of [`Bearer ${clipToken}`, 'Bearer garbage', `Bearer ${'x'.repeat(43)}`]) {
        const mine = await pageFetch(page, '/_backlot/api/v1/kv/settings/brush', { headers: { Authorization: auth } });
        assert.ok(mine.error === undefined && mine.status === 200, `${auth.slice(0, 20)}: ${JSON.stringify(mine)}`);
        assert.deepEqual(JSON.parse(mine.text).value, own.json.value);
        const theirs = await pageFetch(page, `/_backlot/api/v1/gallery/items/${clipItem.json.id}`, { headers: { Authorization: auth } });
        assertNoData(theirs, `clipmaker's item with ${auth.slice(0, 20)}`, secrets, [404]);
        const blob = await pageFetch(page, `/_backlot/api/v1/assets/${asset.json.id}/thumb`, { headers: { Authorization: auth } });
        assertNoData(blob, `clipmaker's asset with ${auth.slice(0, 20)}`, secrets, [404]);
        const list = await pageFetch(page, '/_backlot/api/v1/gallery/items?limit=100', { headers: { Authorization: auth } });
        assert.ok(list.error === undefined && list.status === 200, JSON.stringify(list));
        const items = JSON.parse(list.text).items as { studio_id: string }[];
        assert.ok(items.every((i) => i.studio_id === 'sketchpad'), 'only sketchpad items');
        for (const s of secrets) assert.ok(!list.text.includes(s));
      }
      // Everyone's gallery needs gallery.read_all, which sketchpad does not have.
      const all = await pageFetch(page, '/_backlot/api/v1/gallery/items?scope=all');
      assertNoData(all, 'gallery scope=all', secrets, [403]);

      // Clipmaker is still running: nothing above reached the launcher's controls.
      const listed = svc.cli(['studios', '--json']);
      assert.equal(listed.code, 0, listed.stderr);
      const states = Object.fromEntries((JSON.parse(listed.stdout) as { id: string; state: string }[]).map((s) => [s.id, s.state]));
      assert.deepEqual(states, { clipmaker: 'running', sketchpad: 'running' });
    } finally {
      await context.close();
    }
  });

  test("the launcher credential works on 127.0.0.1 (its localStorage, no cookie) and nothing of it reaches a studio origin; a login code is not answered there", async () => {
    const loginUrl = svc.cli(['login-url']);
    assert.equal(loginUrl.code, 0, loginUrl.stderr);
    const url = new URL(loginUrl.stdout.trim());
    assert.equal(url.origin, `http://127.0.0.1:${svc.port}`);

    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      // The same code on a studio's origin goes to the studio's own server (its 404), and is not spent there.
      const onStudio = await page.goto(`${sketchpad}/login${url.search}`);
      assert.equal(onStudio?.status(), 404);
      assert.match(await page.locator('body').innerText(), /Nothing at \/login/);
      assert.deepEqual(await context.cookies(), []);

      const cred = await signIn(page, url.href);
      assert.equal(new URL(page.url()).pathname, '/');
      await page.getByRole('heading', { name: 'Studios' }).waitFor(); // the launcher UI, signed in
      assert.deepEqual(await context.cookies(), [], 'no cookie at all');
      assert.equal(await storedCredential(context, `http://127.0.0.1:${svc.port}`), cred);
      // A page of the service's origin in the signed-in context reads the credential from its storage; as a
      // Bearer header it opens the launcher API (and without it, nothing does).
      const servicePage = await context.newPage();
      assert.equal((await servicePage.goto(`http://127.0.0.1:${svc.port}/api/v1/openapi.json`))?.status(), 200);
      const bare = await pageFetch(servicePage, '/api/v1/launcher/studios', { credentials: 'include' });
      assert.ok(bare.error === undefined && bare.status === 401, `nothing but the header opens it: ${JSON.stringify(bare)}`);
      const stored = await servicePage.evaluate((key) => localStorage.getItem(key), CREDENTIAL_KEY);
      const studios = await pageFetch(servicePage, '/api/v1/launcher/studios', { headers: { Authorization: `Bearer ${stored}` } });
      assert.ok(studios.error === undefined && studios.status === 200, JSON.stringify(studios));
      assert.deepEqual(
        (JSON.parse(studios.text).items as { id: string }[]).map((s) => s.id),
        ['clipmaker', 'sketchpad'],
      );
      assert.deepEqual(await context.cookies(sketchpad), [], 'no cookie of this context applies to the studio origin');

      // The launcher page's Open link takes the signed-in person to sketchpad: no request to its origin carries
      // a cookie or anything of the credential. (It opens in a new tab, without an opener.)
      const headers: Promise<{ url: string; cookie: string | undefined; all: string }>[] = [];
      context.on('request', (r) => {
        if (r.url().startsWith(sketchpad)) headers.push(r.allHeaders().then((h) => ({ url: r.url(), cookie: h.cookie, all: JSON.stringify(h) })));
      });
      const [studioPage] = await Promise.all([context.waitForEvent('page'), page.locator(`li.studio[data-studio="sketchpad"] a[data-focus="open"][href="${sketchpad}/"]`).click()]);
      await studioPage.waitForURL(`${sketchpad}/`);
      await studioPage.locator('#live[data-state="connected"]').waitFor();
      assert.equal(await studioPage.evaluate(() => document.cookie), '');
      assert.equal(await studioPage.evaluate((key) => localStorage.getItem(key), CREDENTIAL_KEY), null, "the studio origin's storage is its own");
      assertNoData(await pageFetch(studioPage, '/_backlot/api/v1/launcher/studios', { credentials: 'include' }), 'launcher via /_backlot', ['"items"']);
      assertNoData(await pageFetch(studioPage, '/api/v1/launcher/studios', { credentials: 'include' }), 'launcher via /api/v1 on the studio origin', ['"items"']);
      assertNoData(
        await pageFetch(studioPage, `http://127.0.0.1:${svc.port}/api/v1/launcher/studios`, { credentials: 'include' }),
        'launcher on 127.0.0.1 from the studio page',
        ['"items"'],
      );
      const sent = await Promise.all(headers);
      assert.ok(sent.length >= 4, `requests seen: ${sent.map((s) => s.url).join(' ')}`);
      for (const s of sent) {
        assert.equal(s.cookie, undefined, `${s.url} carried ${s.cookie}`);
        assert.ok(!s.all.includes(cred) && !s.all.includes('bl_launcher_'), `${s.url} carried the credential`);
      }
    } finally {
      await context.close();
    }
  });

  test('WebSocket and server-sent events through the proxy', async () => {
    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      const errors = watchPageErrors(page);
      await page.goto(`${sketchpad}/`);
      // The page's own meters: the event stream connected, the echo's round trip measured.
      await page.locator('#live[data-state="connected"]').waitFor({ timeout: 5000 });
      assert.equal(await page.locator('#live').textContent(), 'Connected');
      await page.waitForFunction(() => /^\d+(\.\d+)? ms$/.test(document.getElementById('ws-rtt')!.textContent ?? ''), undefined, { timeout: 5000 });

      const echoed = await page.evaluate(async (messages) => {
        const ws = new WebSocket(`ws://${location.host}/ws`);
        await new Promise((resolve, reject) => {
          ws.onopen = resolve;
          ws.onerror = () => reject(new Error('the WebSocket did not open'));
        });
        const got: string[] = [];
        for (const m of messages) {
          const reply = new Promise<string>((resolve) => (ws.onmessage = (e) => resolve(String(e.data))));
          ws.send(m);
          got.push(await reply);
        }
        ws.close();
        return { got, url: ws.url };
      }, ['hello through the proxy', 'é✓ unicode', 'x'.repeat(20_000)]);
      assert.equal(echoed.url, `ws://sketchpad.localhost:${svc.port}/ws`);
      assert.deepEqual(echoed.got, ['hello through the proxy', 'é✓ unicode', 'x'.repeat(20_000)]);

      const ticks = await page.evaluate(
        () =>
          new Promise<string[]>((resolve, reject) => {
            const source = new EventSource('/live');
            const times: string[] = [];
            const timer = setTimeout(() => {
              source.close();
              reject(new Error(`only ${times.length} ticks in 6 s`));
            }, 6000);
            source.addEventListener('tick', (e) => {
              times.push(JSON.parse((e as MessageEvent).data).time);
              if (times.length === 2) {
                clearTimeout(timer);
                source.close();
                resolve(times);
              }
            });
          }),
      );
      assert.equal(ticks.length, 2);
      assert.ok(Date.parse(ticks[1]!) > Date.parse(ticks[0]!), `ticks in order: ${ticks}`);
      assert.deepEqual(errors, []);
    } finally {
      await context.close();
    }
  });

  test("a stopped studio's origin shows the 503 page, an unknown id's the 404 page; light and dark", async () => {
    const stopped = svc.cli(['stop', 'clipmaker']);
    assert.equal(stopped.code, 0, stopped.stderr);
    for (const scheme of SCHEMES) {
      const context = await newContext(browser, scheme);
      try {
        const page = await context.newPage();
        const down = await page.goto(`${clipmaker}/`);
        assert.equal(down?.status(), 503);
        assert.equal(await page.locator('h1').textContent(), 'Clipmaker is not running');
        assert.match(await page.locator('body').innerText(), /503/);
        assert.match(down!.headers()['content-security-policy'] ?? '', /default-src 'none'/);
        await saveScreenshot(page, 'studio-stopped', scheme);

        const unknown = await page.goto(`http://nosuch.localhost:${svc.port}/`);
        assert.equal(unknown?.status(), 404);
        assert.equal(await page.locator('h1').textContent(), 'No studio named nosuch');
        await saveScreenshot(page, 'studio-unknown', scheme);
      } finally {
        await context.close();
      }
    }
  });
});
