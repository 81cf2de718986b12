import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { openDatabase } from '../service/db/open';
import { createAssetsStore } from '../service/assets/store';
import { completableWords, searchWords, studioWord } from '../service/gallery/search';
import { newIdAfter } from '../service/core/ids';
import { decodeTime } from 'ulid';
import sharp from 'sharp';
import { upload } from './helpers/assets';
import { launchChromium, newContext, runtimeToken, saveScreenshot, SCHEMES, watchPageErrors, type Scheme } from './helpers/browser';
import { client } from './helpers/http';
import { SKETCHPAD, startLauncher, type LauncherService } from './helpers/launcher';

/**
 * The launcher's Gallery panel (renderer/launcher/gallery.ts, renderer/README.md "Gallery") in real
 * Chromium against the real service and the real sketchpad studio: a drawing saved
 * on sketchpad's own page is found by the search as the person types, its details
 * show its lineage down (the child sketchpad's token recorded from it) and up; tag,
 * studio and starred filters; the empty and error states in place; new items on
 * coming back to the panel; and with 100,000 items (seeded through the gallery store
 * into the running service's database) the page keeps a few dozen tiles while the
 * person scrolls and pages by cursor deep into the list, and arrow keys move focus.
 * Screenshots in light and dark, 1280 and 800 px wide, go to test-results/.
 */

const BULK = 100_000;

/** A small PNG: a diagonal gradient from a colour of `hue` (0..359) to a lighter one. */
function gradientPng(width: number, height: number, hue: number): Promise<Buffer> {
  const px = Buffer.alloc(width * height * 3);
  const channel = (h: number, light: number) => {
    const k = (n: number) => (n + h / 30) % 12;
    const a = 0.6 * Math.min(light, 1 - light);
    return (n: number) => Math.round(255 * (light - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1))));
  };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const f = channel(hue, 0.35 + 0.4 * ((x / width + y / height) / 2));
      px.set([f(0), f(8), f(4)], (y * width + x) * 3);
    }
  }
  return sharp(px, { raw: { width, height, channels: 3 } }).png().toBuffer();
}
/** "a few hundred tiles" at most, whatever the list holds. */
const MAX_TILES = 300;

/**
 * `count` image items of `studioId`, newest last, written straight into the running
 * service's database (WAL: the service reads them at once) in batches: the rows the
 * gallery store writes (service/gallery/store.ts `create`: the item with its id after
 * the newest, `created_at` the id's instant, and its search entry), without the
 * store's per-item checks, which made 100,000 items take a minute here.
 */
function seedItems(dataDir: string, studioId: string, assetIds: string[], count: number): number {
  const started = performance.now();
  const db = openDatabase(dataDir);
  try {
    createAssetsStore(db).noteReferenced(assetIds, new Date().toISOString());
    const insert = db.prepare(
      `INSERT INTO gallery_items (id, studio_id, asset_id, kind, title, tags, starred, session_id, params, inputs, timeline_id, created_at, updated_at)
       VALUES (?, ?, ?, 'image', ?, '[]', 0, NULL, ?, '[]', NULL, ?, ?)`,
    );
    const index = db.prepare('INSERT INTO gallery_search (rowid, title, prompt, studio) VALUES (?, ?, \'\', ?)');
    const word = db.prepare('INSERT OR IGNORE INTO gallery_search_words (word) VALUES (?)');
    const last = db.prepare<[], { id: string }>('SELECT id FROM gallery_items ORDER BY seq DESC LIMIT 1');
    const studio = studioWord(studioId);
    for (let i = 0; i < count; i += 10_000) {
      db.transaction(() => {
        let id = last.get()?.id ?? null;
        for (let j = i; j < Math.min(count, i + 10_000); j++) {
          id = newIdAfter(id);
          const at = new Date(decodeTime(id)).toISOString();
          const title = `Bulk item ${j + 1}`;
          const seq = Number(insert.run(id, studioId, assetIds[j % assetIds.length]!, title, JSON.stringify({ seed: j }), at, at).lastInsertRowid);
          const words = searchWords(title);
          index.run(seq, words.join(' '), studio);
          for (const w of completableWords(words)) word.run(w);
        }
      }).immediate();
    }
  } finally {
    db.close();
  }
  return performance.now() - started;
}

describe('launcher gallery panel', { timeout: 300_000 }, () => {
  let svc: LauncherService;
  let browser: Browser;
  let sketchToken: string;
  const word = `w${randomBytes(4).toString('hex')}`;
  let parent: any;
  let child: any;

  before(async () => {
    assert.ok(existsSync('/usr/bin/chromium'), 'Chromium at /usr/bin/chromium');
    const launching = launchChromium();
    launching.catch(() => undefined);
    svc = await startLauncher();
    const installed = svc.svc.cli(['install', SKETCHPAD]);
    assert.equal(installed.code, 0, installed.stdout + installed.stderr);
    const started = svc.svc.cli(['start', 'sketchpad']);
    assert.equal(started.code, 0, started.stdout + started.stderr);
    sketchToken = runtimeToken('sketchpad', svc.svc.dataDir);

    // The bulk studio's few real images, then 100,000 items over them.
    const bulkToken = svc.svc.studio('bulk', ['assets', 'gallery']);
    const assets: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await upload(svc.svc.port, bulkToken, await gradientPng(64, 48, i * 60), 'kind=image', 'image/png');
      assert.equal(r.status, 201, r.body.toString());
      assets.push(r.json.id);
    }
    const ms = seedItems(svc.svc.dataDir, 'bulk', assets, BULK);
    console.log(`seeded ${BULK} gallery items in ${(ms / 1000).toFixed(1)} s`);
    browser = await launching;
  }, { timeout: 240_000 });

  after(async () => {
    await browser?.close();
    await svc?.svc.stop();
  }, { timeout: 30_000 });

  async function signedIn(scheme: Scheme = 'light', width = 1280): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
    const context = await newContext(browser, scheme, { viewport: { width, height: 900 } });
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    const r = svc.svc.cli(['login-url']);
    assert.equal(r.code, 0, r.stderr);
    await page.goto(r.stdout.trim());
    await page.getByRole('heading', { name: 'Gallery' }).waitFor();
    await page.locator('.g-tile').first().waitFor();
    return { page, errors, close: () => context.close() };
  }

  const tiles = (page: Page) => page.locator('#gallery .g-tile');
  const tileIds = (page: Page) => page.$$eval('#gallery .g-tile', (els) => els.map((e) => (e as HTMLElement).dataset.itemId!));
  const focused = (page: Page) =>
    page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return el?.classList.contains('g-tile') ? { index: Number(el.dataset.index), id: el.dataset.itemId! } : null;
    });
  /** Waits until the grid shows exactly these items (in this order) and has read its list to the end. */
  async function waitForTiles(page: Page, ids: string[]): Promise<void> {
    await page.waitForFunction(
      (want) => {
        const grid = document.querySelector('#gallery .g-grid') as HTMLElement;
        const got = Array.from(document.querySelectorAll('#gallery .g-tile')).map((e) => (e as HTMLElement).dataset.itemId);
        return grid.dataset.state === 'done' && JSON.stringify(got) === JSON.stringify(want);
      },
      ids,
      { timeout: 15_000 },
    ).catch(async (err) => {
      throw new Error(`tiles ${JSON.stringify(await tileIds(page))}, wanted ${JSON.stringify(ids)}: ${err}`);
    });
  }
  async function allThumbsLoaded(page: Page, scope: string): Promise<void> {
    await page.waitForFunction(
      (sel) => {
        const imgs = Array.from(document.querySelectorAll(`${sel} img`)) as HTMLImageElement[];
        return imgs.length > 0 && imgs.every((i) => i.complete && i.naturalWidth > 0);
      },
      scope,
      { timeout: 15_000 },
    );
  }
  async function createAs(token: string, body: Record<string, unknown>, seed: number): Promise<any> {
    const asset = await upload(svc.svc.port, token, await gradientPng(80, 60, (seed * 47) % 360), 'kind=image', 'image/png');
    assert.equal(asset.status, 201, asset.body.toString());
    const r = await client(svc.svc.port, token).post('/gallery/items', { asset_id: asset.json.id, ...body });
    assert.equal(r.status, 201, r.text);
    return r.json;
  }

  test('the search finds a drawing saved on sketchpad\'s page; its details show lineage down and up, by keyboard; 1280 and 800, light and dark', async () => {
    // The parent through the real studio: drawn and saved on sketchpad's own page.
    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      await page.goto(`http://sketchpad.localhost:${svc.svc.port}/`);
      const box = (await page.locator('#canvas').boundingBox())!;
      await page.mouse.move(box.x + box.width * 0.2, box.y + box.height * 0.3);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.8, box.y + box.height * 0.7, { steps: 12 });
      await page.mouse.up();
      await page.locator('#prompt').fill(`a lighthouse at dusk ${word}`);
      await page.locator('#tags').fill('lighthouse, dusk');
      await page.locator('#save').click();
      await page.locator('#status[data-kind="ok"]').waitFor({ timeout: 15_000 });
      const id = /item ([0-9A-Z]{26})/.exec((await page.locator('#status').textContent()) ?? '')?.[1];
      assert.ok(id, 'the status names the new item');
      parent = (await svc.l.get(`/launcher/gallery/items/${id}`)).json;
      assert.equal(parent.studio_id, 'sketchpad');
    } finally {
      await context.close();
    }
    // The child through sketchpad's API with its own token: made from the drawing.
    child = await createAs(sketchToken, { title: `lighthouse variation ${word}`, tags: ['variation'], params: { prompt: `a brighter lighthouse ${word}`, strength: 0.6 }, inputs: [{ asset_id: parent.asset_id, role: 'init_image' }] }, 7);

    for (const width of [1280, 800]) {
      for (const scheme of SCHEMES) {
        const { page, errors, close } = await signedIn(scheme, width);
        try {
          const search = page.getByRole('searchbox', { name: 'Search' });
          const asked: string[] = [];
          page.on('request', (r) => {
            const url = new URL(r.url());
            if (url.pathname === '/api/v1/launcher/gallery/items' && url.searchParams.has('q')) asked.push(url.searchParams.get('q')!);
          });
          // Typed key by key: each keystroke restarts the wait, so there are fewer searches than keys
          // (on a loaded machine a keystroke can itself take longer than the pause, so not exactly one),
          // and the last is for the whole word. Its tiles are awaited only once it was asked: a prefix
          // of the word finds the same two items.
          await search.pressSequentially(word);
          for (let i = 0; i < 300 && asked[asked.length - 1] !== word; i++) await new Promise((r) => setTimeout(r, 50));
          assert.equal(asked[asked.length - 1], word, `the last search is for the whole word: ${JSON.stringify(asked)}`);
          await waitForTiles(page, [child.id, parent.id]);
          assert.ok(asked.length < word.length, `fewer searches than keys typed: ${JSON.stringify(asked)}`);
          await allThumbsLoaded(page, '#gallery .g-grid');
          assert.match((await page.locator('#gallery .g-count').textContent()) ?? '', /^2 items$/);
          await saveScreenshot(page, `gallery-search-${width}`, scheme);

          // One tab stop: Tab from the last filter control lands on the first tile; arrows move on.
          await page.getByRole('button', { name: 'Clear filters' }).focus();
          await page.keyboard.press('Tab');
          assert.deepEqual(await focused(page), { index: 0, id: child.id });
          await page.keyboard.press('ArrowRight');
          assert.deepEqual(await focused(page), { index: 1, id: parent.id });
          assert.equal(await page.locator('#gallery .g-tile[tabindex="0"]').count(), 1, 'one tab stop');

          // Enter: the drawing's details, with its child under "Used in".
          await page.keyboard.press('Enter');
          const dialog = page.locator('dialog.g-details');
          await dialog.waitFor();
          assert.equal(await dialog.locator('h2').textContent(), `a lighthouse at dusk ${word}`);
          const details = await dialog.innerText();
          for (const text of ['sketchpad', 'lighthouse', 'dusk', 'Created', 'Starred']) assert.ok(details.includes(text), `${text} in ${details}`);
          const usedIn = dialog.locator('section', { has: page.getByRole('heading', { name: 'Used in' }) });
          const madeFrom = dialog.locator('section', { has: page.getByRole('heading', { name: 'Made from' }) });
          await usedIn.locator(`button[data-item-id="${child.id}"]`).waitFor();
          await madeFrom.getByText('Nothing recorded as its input came from the gallery.').waitFor();
          await allThumbsLoaded(page, 'dialog.g-details .g-lineage');
          await page.waitForFunction(() => {
            const img = document.querySelector('dialog.g-details .g-media img') as HTMLImageElement | null;
            return img !== null && img.complete && img.naturalWidth > 0;
          });

          // The child's thumbnail opens the child, whose "Made from" is the drawing; Back returns.
          await usedIn.locator(`button[data-item-id="${child.id}"]`).click();
          await page.waitForFunction((t) => document.querySelector('dialog.g-details h2')?.textContent === t, child.title);
          await madeFrom.locator(`button[data-item-id="${parent.id}"]`).waitFor();
          await usedIn.getByText('Nothing was made from it yet.').waitFor();
          assert.match(await dialog.innerText(), /init_image/);
          assert.match(await dialog.innerText(), /strength\s+0\.6/);
          await allThumbsLoaded(page, 'dialog.g-details .g-lineage');
          await saveScreenshot(page, `gallery-details-${width}`, scheme);
          await madeFrom.locator(`button[data-item-id="${parent.id}"]`).click();
          await page.waitForFunction((t) => document.querySelector('dialog.g-details h2')?.textContent === t, parent.title);

          // Escape closes; focus is back on the tile the details were opened from.
          await page.keyboard.press('Escape');
          await dialog.waitFor({ state: 'hidden' });
          assert.deepEqual(await focused(page), { index: 1, id: parent.id });
          assert.deepEqual(errors, []);
        } finally {
          await close();
        }
      }
    }
  });

  test("a link to /#gallery/<id> (the editor's link to an export) opens that item's details", async () => {
    const { page, errors, close } = await signedIn();
    try {
      await page.evaluate((id) => {
        location.hash = `#gallery/${id}`;
      }, child.id);
      const dialog = page.locator('dialog.g-details');
      await page.waitForFunction((t) => document.querySelector('dialog.g-details h2')?.textContent === t, child.title);
      assert.ok(await dialog.evaluate((d) => (d as HTMLDialogElement).open));
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('tag, studio and starred filters; the empty and the error state in place; new items in front with no action', async () => {
    const tag = `sunset-${word}`;
    const a = await createAs(sketchToken, { title: 'starred sunset', tags: [tag, 'sky'], starred: true }, 11);
    const b = await createAs(sketchToken, { title: 'plain sunset', tags: [tag] }, 12);
    const c = await createAs(sketchToken, { title: 'starred, untagged', starred: true }, 13);
    const { page, errors, close } = await signedIn('light', 1280);
    try {
      const tagField = page.getByRole('combobox', { name: 'Tag' });
      await tagField.fill(tag);
      await waitForTiles(page, [b.id, a.id]);

      await tagField.fill('');
      await page.getByRole('combobox', { name: 'Studio' }).selectOption('sketchpad');
      const all = (await svc.l.get('/launcher/gallery/items?studio=sketchpad&limit=500')).json.items.map((i: any) => i.id);
      assert.ok(all.includes(parent.id) && all.includes(c.id) && all.length === 5, JSON.stringify(all));
      await waitForTiles(page, all);
      await allThumbsLoaded(page, '#gallery .g-grid');
      await saveScreenshot(page, 'gallery-studio-filter', 'light');

      await page.getByRole('checkbox', { name: 'Starred only' }).check();
      await waitForTiles(page, [c.id, a.id]);
      await page
        .waitForFunction(() => document.querySelectorAll('#gallery .g-tile .g-star').length === 2, null, { timeout: 5000 })
        .catch(() => assert.fail('both tiles show their star'));
      await tagField.fill(tag);
      await waitForTiles(page, [a.id]);

      // The bulk studio's items only: no starred one among them → the empty state, with a way out.
      await tagField.fill('');
      await page.getByRole('combobox', { name: 'Studio' }).selectOption('bulk');
      await page.locator('#gallery .g-empty').waitFor();
      assert.match(await page.locator('#gallery .g-empty').innerText(), /No item matches/);
      assert.equal(await tiles(page).count(), 0);
      await saveScreenshot(page, 'gallery-empty', 'light');
      await page.getByRole('button', { name: 'clear the filters' }).click();
      await page.waitForFunction(() => Number((document.querySelector('#gallery .g-grid') as HTMLElement).dataset.loaded) >= 100);
      assert.equal(await page.locator('#gallery .g-empty').isHidden(), true);
      assert.equal(await page.getByRole('checkbox', { name: 'Starred only' }).isChecked(), false);

      // A filter the service refuses: its message in the panel (not a toast), with Try again.
      await tagField.fill('x'.repeat(101));
      const problem = page.locator('#gallery .g-problem');
      await problem.waitFor();
      assert.match(await problem.innerText(), /could not be read/);
      assert.match(await problem.innerText(), /100 characters/);
      await problem.getByRole('button', { name: 'Try again' }).waitFor();
      await saveScreenshot(page, 'gallery-error', 'light');
      assert.deepEqual(errors.splice(0), ['400 /api/v1/launcher/gallery/items']);
      // A new item while the refused filter shows: the filter is not asked again (it would only be refused again).
      await createAs(sketchToken, { title: 'made while refused' }, 15);
      await page.waitForTimeout(1000);
      assert.deepEqual(errors, []);
      assert.equal(await problem.isVisible(), true);
      await tagField.fill('');
      await page.waitForFunction(() => Number((document.querySelector('#gallery .g-grid') as HTMLElement).dataset.loaded) >= 100);
      assert.equal(await problem.isHidden(), true);

      // The launcher's channel carries item events: a new item shows in front with no action
      // (test/browser-gallery-live.test.ts times it); the rest stays.
      const before = await tileIds(page);
      const d = await createAs(sketchToken, { title: 'made while away' }, 14);
      await page.waitForFunction((id) => (document.querySelector('#gallery .g-tile[data-index="0"]') as HTMLElement | null)?.dataset.itemId === id, d.id);
      assert.equal((await tileIds(page))[1], before[0], 'the rest stays, after the new item');
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test(`with ${BULK.toLocaleString('en')} items: a few dozen tiles in the page while paging deep by cursor; arrow keys, PageDown, Home and End move focus`, async () => {
    const { page, errors, close } = await signedIn('light', 1280);
    try {
      const loaded = () => page.$eval('#gallery .g-grid', (g) => Number((g as HTMLElement).dataset.loaded));
      const cols = Number(await page.locator('#gallery .g-grid').getAttribute('aria-colcount'));
      assert.ok(cols >= 3, `columns at 1280 px: ${cols}`);
      await page.getByRole('button', { name: 'Clear filters' }).focus();
      await page.keyboard.press('Tab');
      assert.equal((await focused(page))?.index, 0);
      await page.keyboard.press('ArrowRight');
      assert.equal((await focused(page))?.index, 1);
      await page.keyboard.press('ArrowDown');
      assert.equal((await focused(page))?.index, 1 + cols);
      await page.keyboard.press('ArrowLeft');
      await page.keyboard.press('ArrowUp');
      assert.equal((await focused(page))?.index, 0);
      await page.keyboard.press('ArrowUp'); // stays at the first
      assert.equal((await focused(page))?.index, 0);
      await page.keyboard.press('PageDown');
      const paged = (await focused(page))!.index;
      assert.ok(paged >= cols && paged % cols === 0, `PageDown moved by whole rows: ${paged}`);
      await page.keyboard.press('PageUp');
      assert.equal((await focused(page))?.index, 0);

      // End goes to the last item read so far; getting there reads the next page (by cursor).
      const maxTiles: number[] = [];
      let previous = await loaded();
      for (let i = 0; i < 12; i++) {
        await page.keyboard.press('End');
        assert.equal((await focused(page))?.index, previous - 1, 'End: the last loaded item');
        await page.waitForFunction((n) => Number((document.querySelector('#gallery .g-grid') as HTMLElement).dataset.loaded) > n, previous, { timeout: 15_000 });
        previous = await loaded();
        maxTiles.push(await tiles(page).count());
      }
      // Then the mouse's way: the scrollbar dragged to the end again and again.
      for (let i = 0; i < 12; i++) {
        await page.locator('#gallery .g-scroller').evaluate((s) => (s.scrollTop = s.scrollHeight));
        await page.waitForFunction((n) => Number((document.querySelector('#gallery .g-grid') as HTMLElement).dataset.loaded) > n, previous, { timeout: 15_000 }).catch(async (err) => {
          const state = await page.evaluate(() => {
            const s = document.querySelector('#gallery .g-scroller') as HTMLElement;
            const g = document.querySelector('#gallery .g-grid') as HTMLElement;
            const t = document.querySelector('#gallery .g-sentinel') as HTMLElement;
            return { scrollTop: s.scrollTop, clientHeight: s.clientHeight, scrollHeight: s.scrollHeight, grid: g.style.height, sentinel: t.style.top, ...g.dataset };
          });
          throw new Error(`no next page after scrolling to the end: ${JSON.stringify(state)} (${err})`);
        });
        previous = await loaded();
        maxTiles.push(await tiles(page).count());
      }
      console.log(`loaded ${previous} items; tiles in the page per step: ${maxTiles.join(' ')}`);
      assert.ok(previous >= 24 * 100, `paged deep: ${previous}`);
      assert.ok(Math.max(...maxTiles) <= MAX_TILES, `at most ${MAX_TILES} tiles: ${maxTiles.join(' ')}`);
      assert.ok(Math.max(...maxTiles) >= cols * 4, 'the visible rows are there');
      await allThumbsLoaded(page, '#gallery .g-grid');
      await saveScreenshot(page, 'gallery-deep', 'light');

      // The tiles in the page are the list's items at their places, as the API pages them.
      const want: string[] = [];
      let cursor: string | null = null;
      while (want.length < previous) {
        const r: any = await svc.l.get(`/launcher/gallery/items?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        assert.equal(r.status, 200, r.text);
        want.push(...r.json.items.map((i: any) => i.id));
        cursor = r.json.next_cursor;
      }
      const shown = await page.$$eval('#gallery .g-tile', (els) => els.map((e) => [Number((e as HTMLElement).dataset.index), (e as HTMLElement).dataset.itemId!] as const));
      assert.ok(shown.length > 0);
      for (const [index, id] of shown) assert.equal(id, want[index], `tile ${index}`);
      assert.equal(new Set(shown.map(([, id]) => id)).size, shown.length, 'no item twice');
      assert.deepEqual(shown.map(([i]) => i), shown.map(([i]) => i).sort((x, y) => x - y), 'tiles in the DOM in list order');
      // The deep rows, and the tab stop's row (the last item End reached), nothing in between.
      const tabStop = Number(await page.locator('#gallery .g-tile[tabindex="0"]').getAttribute('data-index'));
      const others = shown.map(([i]) => i).filter((i) => Math.floor(i / cols) !== Math.floor(tabStop / cols));
      assert.ok(others.length >= cols * 4 && Math.min(...others) > previous - 600, `the page holds the deep rows: ${Math.min(...others)}..${Math.max(...others)} of ${previous}`);

      // Home: back to the first item, and its row is in the page again.
      await page.locator('#gallery .g-tile').first().focus();
      await page.keyboard.press('Home');
      assert.deepEqual(await focused(page), { index: 0, id: want[0] });
      await page.keyboard.press('ArrowRight');
      await allThumbsLoaded(page, '#gallery .g-grid');
      await saveScreenshot(page, 'gallery-focus', 'light');
      assert.ok((await tiles(page).count()) <= MAX_TILES);
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });
});
