import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { upload } from './helpers/assets';
import { launchChromium, newContext, saveScreenshot, SCHEMES, signIn, watchPageErrors } from './helpers/browser';
import { downloadAsset, freshConnections, probeFile, waitForJob } from './helpers/export';
import { client } from './helpers/http';
import { startLauncher, type LauncherService } from './helpers/launcher';
import { makeAudio, makeVideo, requireFfmpeg } from './helpers/media';
import { tempDir } from './helpers/service';
import { assertTimeline, MERGE } from './helpers/timeline';

/**
 * The editor page's edits in real Chromium against the real service and
 * ffmpeg, each checked by reading the sequence back from the service in whole
 * frames: the sequence browser and the page's address (reload and Back keep
 * the sequence), moves that stop at a neighbour's edge (the drag's preview is
 * what is saved), split at the playhead, ripple delete and lift, a move to
 * another track, multi-select (Shift-click, marquee) with a group move, J/K/L
 * and frame steps, in and out marks, the media bin, an undo refused because
 * the same track was changed elsewhere, and an export of the edited sequence
 * probed with ffprobe (its duration within one frame). Screenshots in light
 * and dark at 1280 and 800 px wide go to test-results/.
 */

const FPS = 25;

describe('editing in the editor page', { timeout: 300_000 }, () => {
  let svc: LauncherService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let dir: string;
  let studio: ReturnType<typeof client>;
  let token: string;
  let seq: string;
  let other: string;
  const asset: Record<string, string> = {};

  const frames = (seconds: number) => Math.round(seconds * FPS);
  const current = async () => assertTimeline(await studio.get(`/timeline/${seq}`), 200);
  /** The sequence read back as [start, in, length] frames per track. */
  const layout = async () => {
    const t = await current();
    const out: Record<string, [string, number, number, number][]> = {};
    for (const [name, clips] of Object.entries(t.tracks) as [string, any[]][]) {
      out[name] = clips.map((c) => [Object.keys(asset).find((k) => asset[k] === c.asset_id)!, frames(c.start), frames(c.in), frames(c.duration)]);
    }
    return { t, tracks: out };
  };
  const clip = (track: string, index: number) => page.locator(`.clip[data-track="${track}"][data-index="${index}"]`);
  const saved = (revision: number) => page.locator('#editor-status', { hasText: `Saved revision ${revision}:` }).waitFor({ timeout: 30_000 });
  const ppf = async () => Number(await page.locator('.canvas').getAttribute('data-px-per-frame'));
  const setPlayhead = async (f: number) => {
    await page.locator('#playhead-field').fill(String(f));
    await page.locator('#playhead-field').press('Enter');
    await page.locator('body').click({ position: { x: 5, y: 5 } });
  };
  const playheadValue = async () => Number(await page.getByRole('slider', { name: 'Playhead' }).getAttribute('aria-valuenow'));

  async function shots(name: string): Promise<void> {
    for (const width of [1280, 800]) {
      await page.setViewportSize({ width, height: 800 });
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        await saveScreenshot(page, `${name}-${width}`, scheme);
      }
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.emulateMedia({ colorScheme: 'light' });
  }

  before(async () => {
    requireFfmpeg();
    freshConnections();
    dir = tempDir('backlot-editor-edits-');
    svc = await startLauncher();
    token = svc.svc.studio('clipmaker', ['assets', 'gallery', 'timeline', 'jobs']);
    studio = client(svc.svc.port, token);
    const add = async (key: string, file: string, kind: string, title: string) => {
      const res = await upload(svc.svc.port, token, readFileSync(file), `kind=${kind}&filename=${key}`);
      assert.equal(res.status, 201, res.body.toString());
      asset[key] = res.json.id;
      assert.equal((await studio.post('/gallery/items', { asset_id: res.json.id, title })).status, 201);
    };
    await add('card', makeVideo(join(dir, 'card.mp4'), { seconds: 2, width: 160, height: 90, fps: FPS }), 'video', 'Test card');
    await add('zoom', makeVideo(join(dir, 'zoom.mp4'), { seconds: 3, width: 160, height: 90, fps: FPS }), 'video', 'Mandelbrot zoom');
    await add('tone', makeAudio(join(dir, 'tone.wav'), { seconds: 1 }), 'audio', 'Tone');
    // V1: Test card [0, 50) and Mandelbrot zoom [75, 125): a gap of 25 frames between them.
    seq = assertTimeline(await studio.post('/timeline', {
      name: 'Edit suite',
      target: { fps: FPS, width: 160, height: 90 },
      tracks: { V1: [{ asset_id: asset.card, start: 0, in: 0, duration: 2 }, { asset_id: asset.zoom, start: 3, in: 0, duration: 2 }] },
    }), 201).id;
    const otherToken = svc.svc.studio('paintbox', ['timeline']);
    other = assertTimeline(await client(svc.svc.port, otherToken).post('/timeline', { name: 'Paintbox reel' }), 201).id;
    browser = await launchChromium();
    context = await newContext(browser, 'light', { viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    errors = watchPageErrors(page);
    const login = svc.svc.cli(['login-url']);
    assert.equal(login.code, 0, login.stderr);
    await signIn(page, login.stdout);
    await page.goto(`${svc.svc.origin}/editor/`);
  });
  after(async () => {
    await browser?.close();
    await svc?.svc.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('the sequence browser lists every studio\'s sequences, searches by name and studio, opens one; the address keeps it over reload and Back', async () => {
    const list = page.getByRole('list', { name: /^Sequences/ });
    await list.locator('li.seq').nth(1).waitFor({ timeout: 30_000 });
    assert.deepEqual(await list.locator('.seq-name').allInnerTexts(), ['Paintbox reel', 'Edit suite']);
    await shots('editor-browser');
    await page.locator('#seq-search').fill('SUITE');
    await page.waitForFunction(() => document.querySelectorAll('li.seq').length === 1);
    assert.deepEqual(await list.locator('.seq-name').allInnerTexts(), ['Edit suite']);
    await page.locator('#seq-search').fill('');
    await page.locator('#seq-studio').selectOption('paintbox');
    await page.waitForFunction(() => document.querySelectorAll('li.seq').length === 1 && document.querySelector('.seq-name')!.textContent === 'Paintbox reel');
    await page.locator('#seq-studio').selectOption('');
    await page.getByRole('button', { name: 'Open Edit suite from clipmaker' }).click();
    await page.getByRole('heading', { name: 'Edit suite' }).waitFor();
    assert.equal(new URL(page.url()).hash, `#${seq}`);
    await page.reload();
    await page.getByRole('heading', { name: 'Edit suite' }).waitFor({ timeout: 30_000 });
    // Another sequence, then Back: the first again.
    await page.getByRole('button', { name: 'Sequences' }).click();
    await page.getByRole('button', { name: 'Open Paintbox reel from paintbox' }).click();
    await page.getByRole('heading', { name: 'Paintbox reel' }).waitFor();
    assert.equal(new URL(page.url()).hash, `#${other}`);
    await page.goBack();
    await page.getByRole('heading', { name: 'Edit suite' }).waitFor({ timeout: 30_000 });
    assert.equal(new URL(page.url()).hash, `#${seq}`);
    await page.locator('.clip[data-track="V1"]').nth(1).waitFor();
    // The empty reel has no export plan (422): shown in its plan panel, nothing else went wrong.
    assert.deepEqual(errors.splice(0), [`422 /api/v1/launcher/timeline/${other}:plan`]);
  });

  test('moves stop at a neighbour\'s edge: the drag previews exactly what is saved; a key into a neighbour is refused with one notice', async () => {
    await page.getByRole('button', { name: 'Fit' }).click();
    const before = await current();
    const p = await ppf();
    // Drag Mandelbrot zoom 40 frames earlier, into Test card: it stops at 50, and shows so before the release.
    const box = (await clip('V1', 1).boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 - 20 * p, box.y + box.height / 2, { steps: 4 });
    await page.mouse.move(box.x + box.width / 2 - 40 * p, box.y + box.height / 2, { steps: 4 });
    const previewLeft = await clip('V1', 1).evaluate((el) => parseFloat((el as HTMLElement).style.left));
    assert.equal(Math.round(previewLeft / p), 50, 'the preview stops at the neighbour');
    await page.mouse.up();
    await saved(before.revision + 1);
    let now = await layout();
    assert.deepEqual(now.tracks.V1, [['card', 0, 0, 50], ['zoom', 50, 0, 50]]);
    assert.equal(now.t.description, 'Moved Mandelbrot zoom to 00:00:02:00');
    // Shift+→ on Test card (against Mandelbrot zoom): refused on the page, nothing sent.
    await clip('V1', 0).focus();
    await page.keyboard.press('Shift+ArrowRight');
    await page.locator('#editor-status.notice', { hasText: 'Not moved' }).waitFor();
    assert.equal((await current()).revision, now.t.revision);
    assert.deepEqual(errors, []);
  });

  test('split at the playhead (S), ripple delete (Shift+Delete), lift (Delete)', async () => {
    let rev = (await current()).revision;
    await setPlayhead(60);
    await page.keyboard.press('s');
    await saved(++rev);
    let now = await layout();
    assert.deepEqual(now.tracks.V1, [['card', 0, 0, 50], ['zoom', 50, 0, 10], ['zoom', 60, 10, 40]]);
    assert.equal(now.t.description, 'Split Mandelbrot zoom at 00:00:02:10');
    // Ripple delete the 10-frame piece: the rest closes up.
    await clip('V1', 1).click();
    await page.keyboard.press('Shift+Delete');
    await saved(++rev);
    now = await layout();
    assert.deepEqual(now.tracks.V1, [['card', 0, 0, 50], ['zoom', 50, 10, 40]]);
    // Split again and lift the first part: a gap stays.
    await setPlayhead(70);
    await page.keyboard.press('s');
    await saved(++rev);
    await clip('V1', 1).click();
    await page.keyboard.press('Delete');
    await saved(++rev);
    now = await layout();
    assert.deepEqual(now.tracks.V1, [['card', 0, 0, 50], ['zoom', 70, 30, 20]]);
    await page.locator('.revision', { hasText: 'Ripple-deleted Mandelbrot zoom from V1' }).waitFor();
    assert.deepEqual(errors, []);
  });

  test('another track (Alt+↓), multi-select (Shift-click, marquee) and a group move', async () => {
    let rev = (await current()).revision;
    await clip('V1', 1).click();
    await clip('V1', 1).press('Alt+ArrowDown');
    await saved(++rev);
    let now = await layout();
    assert.deepEqual(now.tracks, { V1: [['card', 0, 0, 50]], V2: [['zoom', 70, 30, 20]] });
    // Shift-click both, → moves both one frame.
    await clip('V1', 0).click();
    await clip('V2', 0).click({ modifiers: ['Shift'] });
    assert.equal(await page.locator('.clip[aria-pressed="true"]').count(), 2);
    await clip('V2', 0).press('ArrowRight');
    await saved(++rev);
    now = await layout();
    assert.deepEqual(now.tracks, { V1: [['card', 1, 0, 50]], V2: [['zoom', 71, 30, 20]] });
    assert.equal(now.t.description, 'Moved 2 clips by +1 frames');
    // Escape, then a marquee over both lanes selects both again.
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('.clip[aria-pressed="true"]').count(), 0);
    const lanes = (await page.locator('.lanes').boundingBox())!;
    const v1 = (await clip('V1', 0).boundingBox())!;
    const v2 = (await clip('V2', 0).boundingBox())!;
    await page.mouse.move(v2.x + v2.width + 6, lanes.y + 2);
    await page.mouse.down();
    await page.mouse.move(v1.x + 4, v2.y + v2.height / 2, { steps: 6 });
    await page.mouse.up();
    assert.equal(await page.locator('.clip[aria-pressed="true"]').count(), 2);
    await shots('editor-multi');
    // Back for the next tests.
    await clip('V2', 0).press('ArrowLeft');
    await saved(++rev);
    assert.deepEqual(errors, []);
  });

  test('J/K/L shuttle and ←/→ frame steps move the playhead; I and O mark a range that P plays', async () => {
    await setPlayhead(10);
    await page.keyboard.press('ArrowRight');
    assert.equal(await playheadValue(), 11);
    await page.keyboard.press('Shift+ArrowLeft');
    assert.equal(await playheadValue(), 1);
    await page.keyboard.press('l');
    await page.keyboard.press('l');
    await page.waitForFunction(() => Number(document.querySelector('.ruler')!.getAttribute('aria-valuenow')) > 20);
    await page.keyboard.press('k');
    const stopped = await playheadValue();
    await page.waitForTimeout(200);
    assert.equal(await playheadValue(), stopped, 'K stops');
    await page.keyboard.press('j');
    await page.waitForFunction((s) => Number(document.querySelector('.ruler')!.getAttribute('aria-valuenow')) < s, stopped);
    await page.keyboard.press('k');
    await setPlayhead(10);
    await page.keyboard.press('i');
    await setPlayhead(30);
    await page.keyboard.press('o');
    const range = page.locator('.in-out');
    await range.waitFor();
    const p = await ppf();
    assert.equal(Math.round(parseFloat((await range.getAttribute('style'))!.match(/width: ([\d.]+)px/)![1]!) / p), 20);
    await page.keyboard.press('p');
    await page.locator('#editor-status', { hasText: 'Playing 00:00:00:10 to 00:00:01:05' }).waitFor();
    await page.keyboard.press('k');
    assert.deepEqual(errors, []);
  });

  test('the media bin: sound added at the playhead on A1, a picture dragged onto V1 lands where it fits', async () => {
    let rev = (await current()).revision;
    const bin = page.getByRole('list', { name: 'Media of the studio' });
    await bin.locator('li[data-asset]').nth(2).waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'Add Tone to A1 at the playhead' }).waitFor();
    await page.waitForFunction(() => !document.querySelector<HTMLButtonElement>('button[aria-label="Add Tone to A1 at the playhead"]')!.disabled);
    await setPlayhead(5);
    await page.getByRole('button', { name: 'Add Tone to A1 at the playhead' }).click();
    await saved(++rev);
    let now = await layout();
    assert.deepEqual(now.tracks.A1, [['tone', 5, 0, 25]]);
    // Drag Test card from the bin onto V1 near its start: V1 is taken there, so it lands after the clip.
    await page.waitForFunction(() => document.querySelector('li[data-asset] .bin-title')?.textContent !== null && Array.from(document.querySelectorAll('li.bin-item')).every((li) => li.getAttribute('draggable') === 'true'));
    // The browser's drag and drop, with one DataTransfer from the bin item's dragstart to the lane's drop.
    // The lane is drawn again after the sound was added: its box is read once it is on screen.
    const lane = page.locator('.lane[data-track="V1"]');
    let laneBox = null;
    for (const until = Date.now() + 10_000; !laneBox && Date.now() < until; ) {
      await lane.waitFor({ state: 'visible' });
      laneBox = await lane.boundingBox();
    }
    assert.ok(laneBox, 'the V1 lane is on screen');
    await page.evaluate(({ x, y }) => {
      const dt = new DataTransfer();
      const item = Array.from(document.querySelectorAll('li.bin-item')).find((li) => li.textContent!.includes('Test card'))!;
      item.dispatchEvent(new DragEvent('dragstart', { bubbles: true, dataTransfer: dt }));
      const target = document.elementFromPoint(x, y)!;
      target.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: dt, clientX: x, clientY: y }));
      target.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt, clientX: x, clientY: y }));
    }, { x: laneBox.x + 10, y: laneBox.y + laneBox.height / 2 });
    await saved(++rev);
    now = await layout();
    assert.deepEqual(now.tracks.V1, [['card', 0, 0, 50], ['card', 50, 0, 50]]);
    assert.deepEqual(errors, []);
  });

  test('undo is refused when the same track was changed elsewhere since, and says so; nothing is written', async () => {
    const t = await current();
    // The studio keeps only the clip the page's last edit added: V1 is neither as before nor as after that edit.
    const v1 = t.tracks.V1.slice(1);
    assert.equal((await studio.patch(`/timeline/${seq}`, { tracks: { ...t.tracks, V1: v1 } }, { 'Content-Type': MERGE, 'If-Match': `"${t.revision}"` })).status, 200);
    await page.keyboard.press('Control+z');
    // The page's write with the old etag is 409: it reloads, tries again on top, and refuses (V1 was changed).
    await page.locator('#editor-status.notice', { hasText: 'Not undone' }).waitFor({ timeout: 30_000 });
    assert.match(await page.locator('#editor-status').innerText(), /V1 was changed elsewhere since/);
    assert.equal((await current()).revision, t.revision + 1);
    assert.deepEqual(errors.splice(0), [`409 /api/v1/launcher/timeline/${seq}`]);
  });

  test('the edited sequence exports; ffprobe finds its duration within one frame', async () => {
    const t = await current();
    await page.getByLabel('Preset').selectOption('h264');
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    const row = page.locator('li.export').first();
    await row.waitFor({ timeout: 30_000 });
    const jobId = (await row.getAttribute('data-job'))!;
    const job = await waitForJob(studio, jobId, 120_000);
    assert.equal(job.state, 'succeeded', JSON.stringify(job));
    const file = join(dir, 'out.mp4');
    await downloadAsset(svc.svc.port, token, job.data.asset_id, file);
    const probe = probeFile(file);
    assert.ok(Math.abs(Number(probe.format.duration) - t.duration) <= 1 / FPS, `${probe.format.duration} vs ${t.duration}`);
    const link = row.getByRole('link', { name: 'Open in the gallery' });
    await link.waitFor({ timeout: 30_000 });
    assert.equal(await link.getAttribute('target'), '_blank', 'never in place of the editor');
    await shots('editor-edited');
    assert.deepEqual(errors, []);
  });
});
