import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, newContext, saveScreenshot, SCHEMES, watchPageErrors, signIn } from './helpers/browser';
import { ffmpegWrapper, freshConnections } from './helpers/export';
import { client } from './helpers/http';
import { startLauncher, type LauncherService } from './helpers/launcher';
import { makeVideo, requireFfmpeg } from './helpers/media';
import { tempDir } from './helpers/service';
import { assertTimeline } from './helpers/timeline';
import { upload } from './helpers/assets';

/**
 * The editor surface (renderer/editor, renderer/README.md "Editor surface") in real Chromium against
 * the real service and ffmpeg. A studio (made with the CLI, its own token) builds
 * a sequence of two real H.264 clips and opens it on a connected editor page;
 * the page trims and moves by drag, keys and numbers in whole frames (a drop
 * near an edge abuts it exactly at three zooms), a concurrent change by the
 * studio makes the page's write 409 and reload with a visible notice, Undo
 * reverts, the plan is shown, and an export shows its progress, is cancelled,
 * and another one finishes and is in the gallery. Each result is checked
 * through the API. Screenshots in light and dark at 1280 and 800 px go to
 * test-results/. (The editor channel's refusals of a studio's origin, Host and
 * credential are covered by test/editor.test.ts; here only what a real browser
 * on a studio's origin sends.)
 */

const FPS = 25;

describe('editor surface', { timeout: 240_000 }, () => {
  let svc: LauncherService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let dir: string;
  let wrapper: ReturnType<typeof ffmpegWrapper>;
  let studio: ReturnType<typeof client>;
  let seq: string;
  const assetIds: string[] = [];

  const api = (path: string) => svc.l.get(path);
  const current = async () => assertTimeline(await studio.get(`/timeline/${seq}`), 200);
  const statusText = () => page.locator('#editor-status').innerText();
  const clip = (track: string, index: number) => page.locator(`.clip[data-track="${track}"][data-index="${index}"]`);
  const ppf = async () => Number(await page.locator('.canvas').getAttribute('data-px-per-frame'));
  /** Waits until the page says it saved `revision`. */
  const saved = (revision: number) => page.locator('#editor-status', { hasText: `Saved revision ${revision}:` }).waitFor({ timeout: 30_000 });
  const frames = (seconds: number) => Math.round(seconds * FPS);

  async function shots(name: string): Promise<void> {
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      await saveScreenshot(page, name, scheme);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }

  /** A pointer drag from the centre of `selector`'s box by `dx` pixels, in small steps. */
  async function drag(selector: ReturnType<Page['locator']>, dx: number): Promise<void> {
    const box = (await selector.boundingBox())!;
    const x = box.x + box.width / 2;
    const y = box.y + box.height / 2;
    await page.mouse.move(x, y);
    await page.mouse.down();
    await page.mouse.move(x + dx / 2, y, { steps: 4 });
    await page.mouse.move(x + dx, y, { steps: 4 });
    await page.mouse.up();
  }

  before(async () => {
    requireFfmpeg();
    freshConnections();
    dir = tempDir('backlot-editor-ui-');
    wrapper = ffmpegWrapper(dir);
    writeFileSync(wrapper.mode, 'normal');
    svc = await startLauncher({ env: { BACKLOT_FFMPEG: wrapper.path } });
    const token = svc.svc.studio('paint', ['assets', 'gallery', 'timeline', 'jobs']);
    studio = client(svc.svc.port, token);
    // Two different files (one without sound) with the same picture stream: the plan can copy them.
    for (const [name, audio] of [['sunrise.mp4', true], ['harbour.mp4', false]] as const) {
      const file = makeVideo(join(dir, name), { seconds: 2, width: 320, height: 180, fps: FPS, audio });
      const res = await upload(svc.svc.port, token, readFileSync(file), `kind=video&filename=${name}`);
      assert.equal(res.status, 201, res.body.toString());
      assetIds.push(res.json.id);
      const item = await studio.post('/gallery/items', { asset_id: res.json.id, title: name.replace('.mp4', '') });
      assert.equal(item.status, 201, item.text);
    }
    const created = await studio.post('/timeline', {
      name: 'Harbour cut',
      target: { fps: FPS, width: 320, height: 180 },
      tracks: { V1: [{ asset_id: assetIds[0], start: 0, in: 0, duration: 2 }, { asset_id: assetIds[1], start: 2, in: 0, duration: 2 }] },
    });
    seq = assertTimeline(created, 201).id;
    browser = await launchChromium();
    context = await newContext(browser, 'light');
    page = await context.newPage();
    errors = watchPageErrors(page);
    const login = svc.svc.cli(['login-url']);
    assert.equal(login.code, 0, login.stderr);
    await signIn(page, login.stdout);
    await page.goto(`${svc.svc.origin}/editor/`);
  });
  after(async () => {
    if (wrapper && existsSync(wrapper.gate)) unlinkSync(wrapper.gate);
    await browser?.close();
    await svc?.svc.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test(':open shows the sequence in the connected editor page: tracks, clips in timecode, the plan', async () => {
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 30_000 });
    const opened = await studio.post(`/timeline/${seq}:open`);
    assert.equal(opened.status, 200, opened.text);
    await page.getByRole('heading', { name: 'Harbour cut' }).waitFor();
    await page.getByRole('group', { name: 'Track V1' }).waitFor();
    // Titles come from the gallery, times in HH:MM:SS:FF at 25 fps.
    await page.getByRole('button', { name: 'V1, sunrise, 00:00:00:00 to 00:00:02:00' }).waitFor();
    await page.getByRole('button', { name: 'V1, harbour, 00:00:02:00 to 00:00:04:00' }).waitFor();
    const slider = page.getByRole('slider', { name: 'Playhead' });
    assert.equal(await slider.getAttribute('aria-valuetext'), '00:00:00:00');
    await slider.focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Shift+ArrowRight');
    assert.equal(await slider.getAttribute('aria-valuenow'), '11');
    assert.equal(await slider.getAttribute('aria-valuetext'), '00:00:00:11');
    // The plan: both clips are whole files of the same kind, so the sequence copies.
    await page.locator('.plan-path', { hasText: 'Plan: copy (lossless)' }).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('.plan-clips tbody tr').count(), 2);
    await page.getByLabel('Preset').selectOption('h264');
    await page.locator('.plan-path', { hasText: 'Plan: conform (encode)' }).waitFor();
    assert.match(await page.locator('.plan-clips').innerText(), /The h264 preset encodes every clip/);
    await shots('editor-opened-1280');
    await page.setViewportSize({ width: 800, height: 900 });
    await page.getByRole('button', { name: 'Fit' }).click();
    await shots('editor-opened-800');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.getByRole('button', { name: 'Fit' }).click();
    // The clip under the playhead plays from the right offset (11 frames into sunrise).
    await page.getByRole('button', { name: 'Play', exact: true }).click();
    await page.waitForFunction(() => {
      const v = document.querySelector('video.viewer') as HTMLVideoElement;
      return v.currentTime >= 0.44 && v.src.includes('/api/v1/media/');
    });
    // Through a short-lived media URL for that asset's file (docs/api.md §Media URLs).
    assert.match(await page.locator('video.viewer').evaluate((v: HTMLVideoElement) => new URL(v.src).pathname), new RegExp(`^/api/v1/media/${assetIds[0]}\\.f\\.`));
    await page.getByRole('button', { name: 'Pause' }).click();
    assert.deepEqual(errors, []);
  });

  test('a trim by dragging the end saves a new revision in whole frames; the numeric fields and keys do the same', async () => {
    const before = await current();
    // The playhead back at 0, away from the edges dragged here (it is a snap target too).
    await page.getByRole('slider', { name: 'Playhead' }).focus();
    await page.keyboard.press('Home');
    const p = await ppf();
    // Drag sunrise's end 15 frames earlier (a third of a pixel short: the nearest frame counts).
    await drag(page.locator('.clip[data-track="V1"][data-index="0"] .handle-end'), -(15 * p) + 0.3);
    await saved(before.revision + 1);
    let now = await current();
    assert.equal(now.revision, before.revision + 1);
    assert.equal(frames(now.tracks.V1[0].duration), 35);
    assert.equal(now.tracks.V1[0].duration, 35 / FPS);
    // Keyboard: the selected clip moves one frame later with →.
    await clip('V1', 1).focus();
    await page.keyboard.press('ArrowRight');
    await saved(now.revision + 1);
    now = await current();
    assert.equal(frames(now.tracks.V1[1].start), 51);
    // Numbers: a duration typed as timecode.
    await clip('V1', 1).click();
    await page.getByLabel('Duration').fill('00:00:01:20');
    await page.getByRole('button', { name: 'Apply' }).click();
    await saved(now.revision + 1);
    now = await current();
    assert.equal(now.tracks.V1[1].duration, 45 / FPS);
    assert.deepEqual(errors, []);
  });

  test('snapping: a clip dropped near another\'s end abuts it exactly at three zooms', async () => {
    let now = await current();
    const aEnd = frames(now.tracks.V1[0].start + now.tracks.V1[0].duration);
    assert.equal(aEnd, 35);
    // [zoom steps from here, pixels left short of the edge]
    for (const [zoomSteps, shortPx] of [[0, 5], [1, 5], [-3, 6]] as const) {
      for (let i = 0; i < Math.abs(zoomSteps); i++) await page.getByRole('button', { name: zoomSteps > 0 ? 'Zoom in' : 'Zoom out' }).click();
      const p = await ppf();
      const start = frames(now.tracks.V1[1].start);
      await drag(clip('V1', 1), -((start - aEnd) * p) + shortPx);
      if (start !== aEnd) await saved(now.revision + 1);
      now = await current();
      assert.equal(frames(now.tracks.V1[1].start), aEnd, `at ${p} px per frame`);
      assert.equal(now.tracks.V1[1].start, now.tracks.V1[0].start + now.tracks.V1[0].duration, 'gap 0');
      // Move it 10 frames away again with Shift+→ for the next zoom.
      await clip('V1', 1).focus();
      await page.keyboard.press('Shift+ArrowRight');
      await saved(now.revision + 1);
      now = await current();
      assert.equal(frames(now.tracks.V1[1].start), aEnd + 10);
    }
    // Ctrl+wheel zooms in, keeping the frame under the pointer where it was (±1 px).
    await page.getByRole('button', { name: 'Fit' }).click();
    const scroller = page.locator('.scroller');
    const box = (await scroller.boundingBox())!;
    const x = box.x + 400;
    const frameUnder = async () => {
      const left = await scroller.evaluate((e) => e.scrollLeft);
      return { p: await ppf(), frame: (left + (x - box.x) - 56) / (await ppf()) };
    };
    const was = await frameUnder();
    await page.mouse.move(x, box.y + 60);
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -100);
    await page.keyboard.up('Control');
    await page.waitForFunction((p) => Number(document.querySelector<HTMLElement>('.canvas')!.dataset.pxPerFrame) > p, was.p);
    const is = await frameUnder();
    assert.equal(is.p, was.p * 2);
    assert.ok(Math.abs(is.frame - was.frame) * is.p <= 1, `${JSON.stringify(was)} → ${JSON.stringify(is)}`);
    await page.getByRole('button', { name: 'Fit' }).click();
    assert.deepEqual(errors, []);
  });

  test('a concurrent change by the studio: the page\'s write is 409, it reloads and says so; Undo undoes the page\'s own edit only, on top of it', async () => {
    const seen = await current();
    const byStudio = await studio.patch(`/timeline/${seq}`, { name: 'Harbour cut, by the studio' }, { 'If-Match': `"${seen.revision}"` });
    assert.equal(byStudio.status, 200, byStudio.text);
    // The page still holds the older revision: deleting a clip is refused and the page reloads.
    await clip('V1', 1).click();
    await page.getByRole('button', { name: 'Delete clip' }).click();
    const notice = page.locator('#editor-status', { hasText: 'changed elsewhere' });
    await notice.waitFor({ timeout: 30_000 });
    assert.match(await statusText(), new RegExp(`Reloaded revision ${seen.revision + 1}\\.`));
    await page.getByRole('heading', { name: 'Harbour cut, by the studio' }).waitFor();
    assert.deepEqual(errors.splice(0), [`409 /api/v1/launcher/timeline/${seq}`]);
    const after409 = await current();
    assert.equal(after409.revision, seen.revision + 1);
    assert.equal(after409.tracks.V1.length, 2, 'the refused delete deleted nothing');
    await shots('editor-409');

    // Undo: the page's last own edit (Shift+→ moved harbour 10 frames later) is undone on top of the
    // studio's rename, which stays; the notice says so.
    await page.getByRole('button', { name: 'Undo' }).click();
    await page.locator('#editor-status', { hasText: 'Applied on top of the change made elsewhere' }).waitFor({ timeout: 30_000 });
    const undone = await current();
    assert.equal(undone.revision, seen.revision + 2);
    assert.equal(undone.name, 'Harbour cut, by the studio', 'the studio\'s change is never undone by the page');
    assert.equal(frames(undone.tracks.V1[1].start), frames(seen.tracks.V1[1].start) - 10);
    assert.match(undone.description, /^Undo: Moved harbour to /);
    // Delete by key is one more revision; Undo brings the clip back; Ctrl+Shift+Z and Ctrl+Y redo.
    await clip('V1', 1).focus();
    await page.keyboard.press('Delete');
    await page.locator('#editor-status', { hasText: `Saved revision ${undone.revision + 1}: Deleted` }).waitFor({ timeout: 30_000 });
    assert.equal((await current()).tracks.V1.length, 1);
    await page.keyboard.press('Control+z');
    await saved(undone.revision + 2);
    assert.deepEqual((await current()).tracks, undone.tracks);
    await page.keyboard.press('Control+Shift+Z');
    await saved(undone.revision + 3);
    assert.equal((await current()).tracks.V1.length, 1);
    await page.keyboard.press('Control+z');
    await saved(undone.revision + 4);
    assert.deepEqual((await current()).tracks, undone.tracks);
    // Each revision in the list says what changed.
    await page.locator(`.revision[data-revision="${undone.revision + 3}"]`, { hasText: 'Redo: Deleted harbour from V1' }).waitFor();
    await page.locator('.revision.current', { hasText: 'Undo: Deleted harbour from V1' }).waitFor();
    assert.equal(await page.locator('.revision[data-revision]').count(), (await api(`/launcher/timeline/${seq}/revisions?limit=100`)).json.items.length);
    assert.deepEqual(errors, []);
  });

  test('export: progress from live events, Cancel ends it cancelled; another finishes and is in the gallery', async () => {
    await page.getByLabel('Preset').selectOption('h264');
    // The first export waits at the gate: surely running when cancelled.
    writeFileSync(wrapper.gate, '');
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    const row = page.locator('li.export[data-state="running"]').first();
    await row.waitFor({ timeout: 30_000 });
    const bar = row.getByRole('progressbar');
    await bar.waitFor();
    assert.equal(await bar.getAttribute('aria-valuenow'), '0');
    await shots('editor-export-running');
    const firstId = (await row.getAttribute('data-job'))!;
    // "Cancelling…" may show only briefly (the job can end within a second): the page records when it first appears.
    await page.evaluate(() => {
      const w = window as unknown as { clickedAt?: number; cancellingAt?: number };
      document.addEventListener('click', () => (w.clickedAt ??= performance.now()), { capture: true, once: true });
      const seen = () => Array.from(document.querySelectorAll('li.export button')).some((b) => b.textContent === 'Cancelling…');
      new MutationObserver((_, observer) => {
        if (seen()) {
          w.cancellingAt = performance.now();
          observer.disconnect();
        }
      }).observe(document.querySelector('.exports')!, { childList: true, subtree: true, characterData: true });
    });
    await row.getByRole('button', { name: /^Cancel / }).click();
    await page.locator(`li.export[data-job="${firstId}"][data-state="cancelled"]`).waitFor({ timeout: 30_000 });
    const { clickedAt, cancellingAt } = await page.evaluate(() => {
      const w = window as unknown as { clickedAt?: number; cancellingAt?: number };
      return { clickedAt: w.clickedAt, cancellingAt: w.cancellingAt };
    });
    assert.ok(clickedAt !== undefined && cancellingAt !== undefined, 'the row said Cancelling…');
    assert.ok(cancellingAt - clickedAt < 1000, `Cancelling… within 1 s (${cancellingAt - clickedAt} ms)`);
    assert.equal(await page.locator(`li.export[data-job="${firstId}"]`).getByRole('progressbar').count(), 0);
    assert.equal((await api(`/launcher/jobs/${firstId}`)).json.state, 'cancelled');
    unlinkSync(wrapper.gate);

    // The second runs at real speed (-re), so its progress moves while the page watches.
    writeFileSync(wrapper.mode, 'slow');
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    const second = page.locator('li.export[data-state="running"]').first();
    await second.waitFor({ timeout: 30_000 });
    const secondId = (await second.getAttribute('data-job'))!;
    await page.waitForFunction(
      (id) => {
        const now = document.querySelector(`li.export[data-job="${id}"] [role=progressbar]`)?.getAttribute('aria-valuenow');
        return now !== null && now !== undefined && Number(now) > 0 && Number(now) < 100;
      },
      secondId,
      { timeout: 60_000 },
    );
    await page.locator(`li.export[data-job="${secondId}"][data-state="succeeded"]`).waitFor({ timeout: 60_000 });
    writeFileSync(wrapper.mode, 'normal');
    const job = (await api(`/launcher/jobs/${secondId}`)).json;
    assert.equal(job.state, 'succeeded');
    const link = page.locator(`li.export[data-job="${secondId}"]`).getByRole('link', { name: 'Open in the gallery' });
    assert.equal(await link.getAttribute('href'), `/#gallery/${job.data.item_id}`);
    const items = (await api(`/launcher/gallery/items?studio=paint&limit=100`)).json.items;
    const item = items.find((it: any) => it.id === job.data.item_id);
    assert.ok(item, 'the export is in the gallery');
    assert.equal(item.timeline_id, seq);
    assert.equal(item.asset_id, job.data.asset_id);
    await page.locator('#editor-status', { hasText: 'Export finished' }).waitFor();
    await shots('editor-export-done');
    assert.deepEqual(errors, []);
  });

  test('signed out: the editor page says how to sign in and shows no sequence', async () => {
    const fresh = await newContext(browser, 'light');
    try {
      const other = await fresh.newPage();
      await other.goto(`${svc.svc.origin}/editor/`);
      await other.getByRole('status').filter({ hasText: 'sign in to the launcher first' }).waitFor({ timeout: 30_000 });
      assert.equal(await other.locator('.surface').isHidden(), true);
      assert.doesNotMatch(await other.locator('body').innerText(), /Harbour/);
    } finally {
      await fresh.close();
    }
  });

  test('a studio\'s page cannot bring up the editor: a navigation from its origin is refused, cookie or not', async () => {
    const other = await context.newPage();
    try {
      await other.goto(`http://paint.localhost:${svc.svc.port}/`);
      // What Chromium itself sends on that navigation (Sec-Fetch-Site cross-site, the login cookie) is refused.
      const [res] = await Promise.all([
        other.waitForResponse((r) => new URL(r.url()).pathname === '/editor/'),
        other.evaluate((url) => {
          location.href = url;
        }, `${svc.svc.origin}/editor/`),
      ]);
      assert.equal(res.status(), 403);
      assert.equal((await res.json()).code, 'bad_origin');
      assert.doesNotMatch(await other.locator('body').innerText(), /Backlot editor|Connected/);
    } finally {
      await other.close();
    }
  });
});
