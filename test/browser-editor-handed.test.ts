import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makePng, upload } from './helpers/assets';
import { launchChromium, newContext, saveScreenshot, SCHEMES, signIn, watchPageErrors } from './helpers/browser';
import { client } from './helpers/http';
import { fixture, startLauncher, type LauncherService } from './helpers/launcher';
import { assertTimeline } from './helpers/timeline';

/**
 * The editor's media bin lists, beside the studio's own gallery items, the
 * assets other studios handed it (its accepted handoffs, docs/api.md
 * "Handoffs"), named by file and sender; one still waiting for the user or
 * for the studio to take it is not there. Added at the playhead, a handed
 * picture lands on V1 of the studio's sequence (the grant is the same as an
 * upload's, so the service takes it in a clip). Real service, real Chromium.
 */

describe("the editor's media bin and handed assets", { timeout: 180_000 }, () => {
  let svc: LauncherService;
  let browser: Browser;
  let page: Page;
  let errors: string[];
  let seq: string;
  let reels: ReturnType<typeof client>;
  const handed: Record<string, string> = {};

  before(async () => {
    svc = await startLauncher();
    const { l } = svc;
    await l.installOk(fixture({ id: 'reels', name: 'Reels', capabilities: ['assets', 'gallery', 'timeline'], accepts: { kinds: ['image'], path: '/receive' } }));
    const reelsToken = svc.svc.token('reels', ['assets', 'gallery', 'timeline']);
    reels = client(svc.svc.port, reelsToken);
    const paintToken = svc.svc.studio('paintbox', ['assets', 'gallery']);
    const paint = client(svc.svc.port, paintToken);
    // Two pictures handed and taken, one offered and still waiting for the user.
    for (const [name, seed] of [['harbour.png', 11], ['lighthouse.png', 12], ['waiting.png', 13]] as const) {
      const res = await upload(svc.svc.port, paintToken, await makePng(32, 18, seed), `kind=image&filename=${name}`, 'image/png');
      assert.equal(res.status, 201, res.body.toString());
      handed[name] = res.json.id;
    }
    const offer = async (ids: string[]) => {
      const r = await paint.post('/handoffs', { to: 'reels', asset_ids: ids });
      assert.equal(r.status, 201, r.text);
      return r.json.id as string;
    };
    const taken = await offer([handed['harbour.png']!, handed['lighthouse.png']!]);
    assert.equal((await l.post(`/launcher/handoffs/${taken}:approve`, {})).status, 200);
    assert.equal((await reels.post(`/handoffs/${taken}:accept`, {})).status, 200);
    await offer([handed['waiting.png']!]);
    // The studio's own picture, in its gallery.
    const own = await upload(svc.svc.port, reelsToken, await makePng(32, 18, 14), 'kind=image&filename=own.png', 'image/png');
    assert.equal(own.status, 201);
    assert.equal((await reels.post('/gallery/items', { asset_id: own.json.id, title: 'Own still' })).status, 201);
    seq = assertTimeline(await reels.post('/timeline', { name: 'Handed reel', target: { fps: 25, width: 320, height: 180 } }), 201).id;

    browser = await launchChromium();
    const context = await newContext(browser, 'light', { viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    errors = watchPageErrors(page);
    const login = svc.svc.cli(['login-url']);
    assert.equal(login.code, 0, login.stderr);
    await signIn(page, login.stdout);
  });

  after(async () => {
    await browser?.close();
    await svc?.svc.stop();
  });

  test('the bin lists the studio\'s own media and what other studios handed it; a handed picture goes on V1', async () => {
    await page.goto(`${svc.svc.origin}/editor/#${seq}`);
    await page.getByRole('heading', { name: 'Handed reel' }).waitFor({ timeout: 30_000 });
    const bin = page.getByRole('list', { name: 'Media of the studio' });
    await bin.locator('li[data-asset]').nth(2).waitFor({ timeout: 30_000 });
    assert.deepEqual(await bin.locator('.bin-title').allInnerTexts(), ['Own still', 'harbour.png (from paintbox)', 'lighthouse.png (from paintbox)']);
    assert.equal(await bin.locator(`li[data-asset="${handed['waiting.png']}"]`).count(), 0, 'not taken yet: not in the bin');
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      await saveScreenshot(page, 'editor-bin-handed-1280', scheme);
    }
    await page.emulateMedia({ colorScheme: 'light' });
    const add = page.getByRole('button', { name: 'Add lighthouse.png (from paintbox) to V1 at the playhead' });
    await add.click();
    await page.locator('#editor-status', { hasText: 'Saved revision 2:' }).waitFor({ timeout: 30_000 });
    const t = assertTimeline(await reels.get(`/timeline/${seq}`), 200);
    assert.deepEqual(t.tracks.V1.map((c: any) => [c.asset_id, c.start, c.duration]), [[handed['lighthouse.png'], 0, 5]]);
    // An empty sequence has no export plan (422, which the page shows as such); nothing else failed.
    assert.deepEqual(errors.filter((e) => e !== `422 /api/v1/launcher/timeline/${seq}:plan`), []);
  });
});
