import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { upload } from './helpers/assets';
import { launchChromium, newContext, saveScreenshot, SCHEMES, watchPageErrors, type Scheme } from './helpers/browser';
import { client } from './helpers/http';
import { fixture, startLauncher, type LauncherService } from './helpers/launcher';
import { makeAudio, makeVideo, requireFfmpeg } from './helpers/media';
import { waitForJob } from './helpers/export';
import { tempDir } from './helpers/service';

/**
 * The live gallery in real Chromium against the real service (docs/api.md
 * §Launcher events, renderer/README.md §Gallery): an item a studio makes shows
 * in an open launcher within a second with no action, and Disk follows; a
 * purge removes its tiles; star, title and tags, delete with Undo (nothing is
 * sent before the window closes); bulk select by mouse and keys; the full-size
 * viewer's keys and focus; poster and waveform tiles with their lengths;
 * download with the file name; copying the prompt. Screenshots in light and
 * dark at 1280 and 800 px go to test-results/.
 */

const UNDO_MS = 6000;

function colourPng(hue: number): Promise<Buffer> {
  const [r, g, b] = [Math.round(128 + 100 * Math.sin(hue)), Math.round(128 + 100 * Math.sin(hue + 2)), Math.round(128 + 100 * Math.sin(hue + 4))];
  return sharp({ create: { width: 96, height: 72, channels: 3, background: { r, g, b } } }).png().toBuffer();
}

describe('live gallery', { timeout: 240_000 }, () => {
  let svc: LauncherService;
  let browser: Browser;
  let dir: string;
  let token: string;
  let seed = 0;
  const media: Record<string, any> = {};

  const api = () => client(svc.svc.port, token);
  async function item(body: Record<string, unknown> = {}, as = token): Promise<any> {
    const asset = await upload(svc.svc.port, as, await colourPng(++seed), 'kind=image&filename=picture.png', 'image/png');
    assert.ok([200, 201].includes(asset.status), asset.body.toString());
    const r = await client(svc.svc.port, as).post('/gallery/items', { asset_id: asset.json.id, title: `picture ${seed}`, ...body });
    assert.equal(r.status, 201, r.text);
    return r.json;
  }
  const launcherItem = (id: string) => svc.l.get(`/launcher/gallery/items/${id}`);

  before(async () => {
    requireFfmpeg();
    const launching = launchChromium();
    launching.catch(() => undefined);
    dir = tempDir('backlot-glive-');
    svc = await startLauncher();
    token = svc.svc.studio('maker', ['assets', 'gallery', 'timeline', 'jobs']);
    const video = await upload(svc.svc.port, token, readFileSync(makeVideo(join(dir, 'reel.mp4'), { width: 320, height: 180, seconds: 3 })), 'kind=video&filename=Reel%20take%202.mp4', 'video/mp4');
    media.video = (await api().post('/gallery/items', { asset_id: video.json.id, title: 'Clipmaker reel' })).json;
    const audio = await upload(svc.svc.port, token, readFileSync(makeAudio(join(dir, 'tone.m4a'), { seconds: 4 })), 'kind=audio&filename=tone.m4a', 'audio/mp4');
    media.audio = (await api().post('/gallery/items', { asset_id: audio.json.id, title: 'A tone' })).json;
    // An export: its item records the sequence it came from.
    const sequence = await api().post('/timeline', { name: 'Reel cut', target: { fps: 25, width: 320, height: 180 }, clips: [{ asset_id: video.json.id }] });
    assert.equal(sequence.status, 201, sequence.text);
    media.timeline = sequence.json;
    const exporting = await api().post(`/timeline/${sequence.json.id}:export`, {});
    assert.equal(exporting.status, 202, exporting.text);
    const job = await waitForJob(api(), exporting.json.id, 60_000);
    assert.equal(job.state, 'succeeded', JSON.stringify(job));
    media.exported = (await svc.l.get(`/launcher/gallery/items/${job.data.item_id}`)).json;
    assert.equal(media.exported.timeline_id, sequence.json.id);
    for (let i = 0; i < 5; i++) await item({ params: { prompt: `a lighthouse at dusk, take ${i}`, seed: i, steps: 20 } });
    browser = await launching;
  }, { timeout: 120_000 });

  after(async () => {
    await browser?.close();
    await svc?.svc.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, { timeout: 30_000 });

  async function signedIn(scheme: Scheme = 'light', width = 1280): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
    const context = await newContext(browser, scheme, { viewport: { width, height: 900 }, acceptDownloads: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: svc.svc.origin });
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    await page.goto(svc.svc.cli(['login-url']).stdout.trim());
    await page.locator('#gallery .g-tile').first().waitFor();
    return { page, errors, close: () => context.close() };
  }
  const tileIds = (page: Page) => page.$$eval('#gallery .g-tile', (els) => els.map((e) => (e as HTMLElement).dataset.itemId!));
  const tile = (page: Page, id: string) => page.locator(`#gallery .g-tile[data-item-id="${id}"]`);
  const focusedId = (page: Page) => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.itemId ?? null);
  const selectedIds = (page: Page) => page.$$eval('#gallery .g-tile[aria-selected="true"]', (els) => els.map((e) => (e as HTMLElement).dataset.itemId!));
  /** The page renders once per frame: waits until the selection shown is `want`. */
  async function expectSelected(page: Page, want: (string | undefined)[]): Promise<void> {
    await page
      .waitForFunction((w) => JSON.stringify(Array.from(document.querySelectorAll('#gallery .g-tile[aria-selected="true"]')).map((e) => (e as HTMLElement).dataset.itemId)) === JSON.stringify(w), want, { timeout: 3000 })
      .catch(async () => assert.deepEqual(await selectedIds(page), want));
  }
  /** Focus moves back when the dialog's close event has run. */
  async function expectFocus(page: Page, id: string | undefined, why: string): Promise<void> {
    await page
      .waitForFunction((i) => (document.activeElement as HTMLElement | null)?.dataset.itemId === i, id, { timeout: 3000 })
      .catch(async () => assert.equal(await focusedId(page), id, why));
  }

  test("an export's item links to its sequence in the editor (a new tab); other items do not", async () => {
    const { page, errors, close } = await signedIn();
    try {
      await tile(page, media.exported.id).click();
      await page.keyboard.press('Enter');
      const dialog = page.locator('dialog.g-details');
      const link = dialog.getByRole('link', { name: 'Open in editor' });
      await link.waitFor();
      assert.equal(await link.getAttribute('href'), `/editor/#${media.timeline.id}`);
      assert.equal(await link.getAttribute('target'), '_blank');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      await page.keyboard.press('v');
      const viewer = page.locator('dialog.g-viewer');
      await viewer.getByRole('link', { name: 'Open in editor' }).waitFor();
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction((id) => (document.querySelector('dialog.g-viewer') as HTMLElement).dataset.itemId !== id, media.exported.id);
      assert.equal(await viewer.getByRole('link', { name: 'Open in editor' }).count(), 0);
      await page.keyboard.press('Escape');
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('an item a studio makes shows within 1 s with no action, and Disk follows; deleted elsewhere, it goes', async () => {
    const { page, errors, close } = await signedIn();
    try {
      await page.locator('.disk-total').waitFor();
      const diskBefore = await page.locator('.disk-total').innerText();
      const started = Date.now();
      const made = await item({ title: 'made while watching' });
      await tile(page, made.id).waitFor({ timeout: 5000 });
      const ms = Date.now() - started;
      assert.ok(ms < 1000, `shown after ${ms} ms`);
      assert.equal((await tileIds(page))[0], made.id, 'in front');
      await page.waitForFunction((before) => document.querySelector('.disk-total')?.textContent !== before, diskBefore, { timeout: 3000 });
      // Changed by the studio: the tile follows.
      assert.equal((await api().patch(`/gallery/items/${made.id}`, { starred: true })).status, 200);
      await tile(page, made.id).locator('.g-star').waitFor({ timeout: 2000 });
      assert.equal((await api().delete(`/gallery/items/${made.id}`)).status, 204);
      await tile(page, made.id).waitFor({ state: 'detached', timeout: 2000 });
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('a burst of 300 items is one or two reads, and the page stays responsive', async () => {
    const { page, errors, close } = await signedIn();
    try {
      const reads: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/launcher/gallery/items?')) reads.push(r.url());
      });
      const made = await Promise.all(Array.from({ length: 30 }, () => item({ title: 'burst' })));
      await tile(page, made[made.length - 1].id).waitFor({ timeout: 5000 });
      const latency = await page.evaluate(() => new Promise<number>((resolve) => {
        const t = performance.now();
        setTimeout(() => resolve(performance.now() - t), 0);
      }));
      assert.ok(latency < 200, `event loop answered in ${latency} ms`);
      assert.ok(reads.length <= 12, `${reads.length} list reads for 30 items`);
      for (const it of made) assert.equal((await api().delete(`/gallery/items/${it.id}`)).status, 204);
      await page.waitForFunction((ids) => ids.every((id) => !document.querySelector(`#gallery .g-tile[data-item-id="${id}"]`)), made.map((m) => m.id), { timeout: 5000 });
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('an uninstall with purge removes its tiles with no action', async () => {
    await svc.l.installOk(fixture({ id: 'doomed', name: 'Doomed', capabilities: ['assets', 'gallery'] }));
    const doomed = svc.svc.token('doomed', ['assets', 'gallery']);
    const items = [await item({ title: 'doomed one' }, doomed), await item({ title: 'doomed two' }, doomed)];
    const { page, errors, close } = await signedIn();
    try {
      for (const it of items) await tile(page, it.id).waitFor();
      await svc.l.uninstall('doomed', true);
      for (const it of items) await tile(page, it.id).waitFor({ state: 'detached', timeout: 3000 });
      assert.ok((await tileIds(page)).length > 0, 'the others stay');
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('star with S, edit title and tags in the details, delete with Undo, then delete for real after the window', async () => {
    const target = await item({ title: 'to be edited', tags: ['old'] });
    const { page, errors, close } = await signedIn();
    try {
      await tile(page, target.id).click();
      await page.keyboard.press('s');
      await tile(page, target.id).locator('.g-star').waitFor({ timeout: 3000 });
      assert.equal((await launcherItem(target.id)).json.starred, true);

      await page.keyboard.press('Enter');
      const dialog = page.locator('dialog.g-details');
      await dialog.waitFor();
      await dialog.getByRole('textbox', { name: 'Title', exact: true }).fill('edited title');
      await dialog.getByRole('textbox', { name: 'Tags (comma-separated)' }).fill('new, fresh');
      await dialog.getByRole('button', { name: 'Save' }).click();
      await page.waitForFunction(() => document.querySelector('dialog.g-details h2')?.textContent === 'edited title');
      const saved = (await launcherItem(target.id)).json;
      assert.deepEqual([saved.title, saved.tags, saved.starred], ['edited title', ['new', 'fresh'], true]);
      // Copy the prompt and the parameters: an item without a prompt offers only the parameters.
      assert.equal(await dialog.getByRole('button', { name: 'Copy prompt' }).count(), 0);
      await dialog.getByRole('button', { name: 'Copy parameters' }).click();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '{}');
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      await expectFocus(page, target.id, 'focus back on the tile');
      await tile(page, target.id).locator('.g-meta').filter({ hasText: 'new, fresh' }).waitFor();

      // Delete, then Undo: nothing was sent, the tile is back where it was.
      const order = await tileIds(page);
      const deletes: string[] = [];
      page.on('request', (r) => {
        if (r.method() === 'DELETE') deletes.push(r.url());
      });
      await page.keyboard.press('Delete');
      await tile(page, target.id).waitFor({ state: 'detached' });
      const undo = page.locator('#gallery .g-undo');
      await undo.waitFor();
      for (const scheme of ['light'] as const) await saveScreenshot(page, 'gallery-live-undo', scheme);
      await undo.getByRole('button', { name: 'Undo' }).click();
      await tile(page, target.id).waitFor();
      assert.deepEqual(await tileIds(page), order);
      assert.equal((await launcherItem(target.id)).status, 200);
      await page.waitForTimeout(UNDO_MS + 500);
      assert.deepEqual(deletes, [], 'an undone delete is never sent');
      assert.equal((await launcherItem(target.id)).status, 200);

      // Delete and let the window close: then it is deleted.
      await tile(page, target.id).click();
      await page.keyboard.press('Delete');
      await tile(page, target.id).waitFor({ state: 'detached' });
      await page.waitForTimeout(UNDO_MS + 1000);
      assert.equal(deletes.length, 1);
      assert.equal((await launcherItem(target.id)).status, 404);
      await page.locator('#gallery .g-undo').waitFor({ state: 'hidden' });
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('bulk select: click, Shift-click, Ctrl-click, Space, Shift+arrows, Ctrl+A, Esc; star, tag and delete several', async () => {
    const mine = [];
    for (let i = 0; i < 4; i++) mine.push(await item({ title: `bulk ${i}` }));
    const ids = mine.map((m) => m.id).reverse(); // newest first, as the grid shows them
    const { page, errors, close } = await signedIn();
    try {
      for (const id of ids) await tile(page, id).waitFor();
      assert.deepEqual((await tileIds(page)).slice(0, 4), ids);
      await tile(page, ids[0]!).click();
      await expectSelected(page, [ids[0]]);
      await tile(page, ids[2]!).click({ modifiers: ['Shift'] });
      await expectSelected(page, ids.slice(0, 3));
      await tile(page, ids[1]!).click({ modifiers: ['Control'] });
      await expectSelected(page, [ids[0], ids[2]]);
      await page.keyboard.press('Escape');
      await expectSelected(page, []);
      await page.keyboard.press('Space');
      await expectSelected(page, [ids[1]]);
      await page.keyboard.press('Shift+ArrowRight');
      await page.keyboard.press('Shift+ArrowRight');
      await expectSelected(page, ids.slice(1, 4));
      await page.keyboard.press('Control+a');
      await page.waitForFunction(() => {
        const g = document.querySelector('#gallery .g-grid') as HTMLElement;
        return g.dataset.selected === g.dataset.loaded;
      });
      await page.keyboard.press('Escape');
      await tile(page, ids[0]!).click();
      await tile(page, ids[3]!).click({ modifiers: ['Shift'] });
      const bar = page.locator('#gallery .g-bulk');
      await bar.getByText('4 selected').waitFor();
      await bar.getByRole('button', { name: '★ Star / unstar' }).click();
      await page.waitForFunction((want) => want.every((id) => document.querySelector(`#gallery .g-tile[data-item-id="${id}"] .g-star`)), ids);
      for (const id of ids) assert.equal((await launcherItem(id)).json.starred, true);
      await bar.getByLabel('Tags to add to the selected items').fill('picked, set');
      await bar.getByRole('button', { name: 'Add tag' }).click();
      for (const id of ids) {
        await page.waitForFunction((i) => document.querySelector(`#gallery .g-tile[data-item-id="${i}"] .g-meta`)?.textContent?.includes('picked, set'), id);
        assert.deepEqual((await launcherItem(id)).json.tags, ['picked', 'set']);
      }
      for (const [scheme, width] of [['light', 1280], ['light', 800], ['dark', 1280], ['dark', 800]] as const) {
        await page.setViewportSize({ width, height: 900 });
        await page.emulateMedia({ colorScheme: scheme });
        await page.waitForTimeout(150);
        await saveScreenshot(page, `gallery-live-bulk-${width}`, scheme);
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      await bar.getByRole('button', { name: 'Delete' }).click();
      for (const id of ids) await tile(page, id).waitFor({ state: 'detached' });
      await page.locator('#gallery .g-undo').getByText('Deleted 4 items.').waitFor();
      await page.waitForTimeout(UNDO_MS + 1000);
      for (const id of ids) assert.equal((await launcherItem(id)).status, 404);
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('video and sound tiles show their poster frame or waveform and length; the viewer plays them, ←/→ move, Esc returns focus; download keeps the name', async () => {
    for (const scheme of SCHEMES) {
      for (const width of [1280, 800]) {
        const { page, errors, close } = await signedIn(scheme, width);
        try {
          for (const m of [media.video, media.audio]) {
            const t = tile(page, m.id);
            await t.waitFor();
            await page.waitForFunction((id) => {
              const img = document.querySelector(`#gallery .g-tile[data-item-id="${id}"] img`) as HTMLImageElement | null;
              return img !== null && img.complete && img.naturalWidth === 320;
            }, m.id, { timeout: 20_000 });
          }
          await tile(page, media.video.id).locator('.g-badge').filter({ hasText: '▶ 0:03' }).waitFor({ timeout: 5000 });
          await tile(page, media.audio.id).locator('.g-badge').filter({ hasText: '♪ 0:04' }).waitFor({ timeout: 5000 });
          await saveScreenshot(page, `gallery-live-tiles-${width}`, scheme);

          // The viewer, from the sound's tile: V opens it, → and ← move through the grid's order, Esc closes.
          const order = await tileIds(page);
          const at = order.indexOf(media.audio.id);
          assert.equal(order[at + 1], media.video.id);
          await tile(page, media.audio.id).click();
          await page.keyboard.press('v');
          const viewer = page.locator('dialog.g-viewer');
          await viewer.waitFor();
          const showing = (id: string) => page.waitForFunction((i) => (document.querySelector('dialog.g-viewer') as HTMLElement).dataset.itemId === i, id);
          await showing(media.audio.id);
          await viewer.locator('audio[controls]').waitFor();
          await page.waitForFunction(() => (document.querySelector('dialog.g-viewer .g-wave img') as HTMLImageElement | null)?.naturalWidth === 320);
          await saveScreenshot(page, `gallery-live-viewer-audio-${width}`, scheme);
          await page.keyboard.press('ArrowRight');
          await showing(media.video.id);
          await viewer.locator('video[controls]').waitFor();
          await page.waitForFunction(() => (document.querySelector('dialog.g-viewer video') as HTMLVideoElement | null)?.readyState! >= 1);
          await saveScreenshot(page, `gallery-live-viewer-video-${width}`, scheme);
          await page.keyboard.press('ArrowLeft');
          await page.keyboard.press('ArrowLeft');
          await showing(order[at - 1]!);
          await page.waitForFunction(() => document.querySelector('dialog.g-viewer .g-stage .g-full') !== null);
          await page.keyboard.press('Escape');
          await viewer.waitFor({ state: 'hidden' });
          await expectFocus(page, order[at - 1], 'focus on the tile last viewed');

          // The details of an export: its actions, the edit form, Open in editor.
          await tile(page, media.exported.id).click();
          await page.keyboard.press('Enter');
          const dialog = page.locator('dialog.g-details');
          await dialog.getByRole('link', { name: 'Open in editor' }).waitFor();
          await page.waitForFunction(() => (document.querySelector('dialog.g-details video') as HTMLVideoElement | null)?.readyState! >= 1);
          await saveScreenshot(page, `gallery-live-details-${width}`, scheme);
          await page.keyboard.press('Escape');
          await dialog.waitFor({ state: 'hidden' });

          if (scheme === 'light' && width === 1280) {
            // Download keeps the studio's file name; a prompt is copied as it is.
            await tile(page, media.video.id).click();
            const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('d')]);
            assert.equal(download.suggestedFilename(), 'Reel take 2.mp4');
            const prompted = order.find((id) => id !== media.video.id && id !== media.audio.id)!;
            await tile(page, prompted).click();
            await page.keyboard.press('c');
            await page.waitForFunction(async () => (await navigator.clipboard.readText()).startsWith('a lighthouse at dusk'));
          }
          assert.deepEqual(errors, []);
        } finally {
          await close();
        }
      }
    }
  });
});
