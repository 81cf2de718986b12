import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, newContext, saveScreenshot, SCHEMES, watchPageErrors, signIn } from './helpers/browser';
import { ffmpegWrapper, freshConnections, probeFile } from './helpers/export';
import { client } from './helpers/http';
import { startLauncher, type LauncherService } from './helpers/launcher';
import { makeAudio, makeVideo, requireFfmpeg } from './helpers/media';
import { tempDir } from './helpers/service';
import { assertTimeline } from './helpers/timeline';
import { upload } from './helpers/assets';

/**
 * The editor page plays the cut, shows sound, exports from its bar and stays
 * light with long sequences (renderer/editor/views: viewer.ts, waveform.ts,
 * export.ts, timeline.ts), in real Chromium against the real service and
 * ffmpeg. The sequence: V1 "sunrise" 0–2 s and "harbour" 2–4 s (a cut at
 * frame 50), A1 a tone 0–5 s, so 4–5 s has sound and no picture (black).
 * Space plays from the playhead across the cut, through the gap, to the end;
 * the page is sampled every frame. The export bar exports under a typed name
 * at real speed (progress seen moving), and its Download has that name; the
 * file is probed. A 2,000-clip sequence draws only what is in view.
 * Screenshots in light and dark at 1280 and 800 px go to test-results/.
 */

const FPS = 25;

interface Sample {
  playhead: number;
  caption: string;
  clip: string;
  gap: string | undefined;
  asset: string | undefined;
  time: number;
  paused: boolean;
  sound: boolean;
}

describe('editor: play the cut, waveforms, the export bar, long sequences', { timeout: 300_000 }, () => {
  let svc: LauncherService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  let dir: string;
  let wrapper: ReturnType<typeof ffmpegWrapper>;
  let studio: ReturnType<typeof client>;
  let seq: string;
  const ids: Record<string, string> = {};

  const playhead = () => page.getByRole('slider', { name: 'Playhead' });

  async function shots(name: string): Promise<void> {
    for (const width of [1280, 800]) {
      await page.setViewportSize({ width, height: 800 });
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        await saveScreenshot(page, `${name}-${width}`, scheme);
      }
    }
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  before(async () => {
    requireFfmpeg();
    freshConnections();
    dir = tempDir('backlot-editor-play-');
    wrapper = ffmpegWrapper(dir);
    writeFileSync(wrapper.mode, 'normal');
    svc = await startLauncher({ env: { BACKLOT_FFMPEG: wrapper.path } });
    const token = svc.svc.studio('cutter', ['assets', 'gallery', 'timeline', 'jobs']);
    studio = client(svc.svc.port, token);
    const files: [string, string, string][] = [
      ['sunrise', makeVideo(join(dir, 'sunrise.mp4'), { seconds: 2, width: 320, height: 180, fps: FPS, audio: true }), 'video'],
      ['harbour', makeVideo(join(dir, 'harbour.mp4'), { seconds: 2, width: 320, height: 180, fps: FPS, audio: false, crf: 30 }), 'video'],
      ['tone', makeAudio(join(dir, 'tone.m4a'), { seconds: 5 }), 'audio'],
    ];
    for (const [name, file, kind] of files) {
      const res = await upload(svc.svc.port, token, readFileSync(file), `kind=${kind}&filename=${name}`);
      assert.equal(res.status, 201, res.body.toString());
      ids[name] = res.json.id;
      assert.equal((await studio.post('/gallery/items', { asset_id: res.json.id, title: name })).status, 201);
    }
    const created = await studio.post('/timeline', {
      name: 'Harbour at dawn',
      target: { fps: FPS, width: 320, height: 180 },
      tracks: {
        V1: [{ asset_id: ids.sunrise, start: 0, in: 0, duration: 2 }, { asset_id: ids.harbour, start: 2, in: 0, duration: 2 }],
        A1: [{ asset_id: ids.tone, start: 0, in: 0, duration: 5 }],
      },
    });
    seq = assertTimeline(created, 201).id;
    browser = await launchChromium();
    context = await newContext(browser, 'light', { viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    page = await context.newPage();
    errors = watchPageErrors(page);
    const login = svc.svc.cli(['login-url']);
    assert.equal(login.code, 0, login.stderr);
    await signIn(page, login.stdout);
    await page.goto(`${svc.svc.origin}/editor/`);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 30_000 });
    assert.equal((await studio.post(`/timeline/${seq}:open`)).status, 200);
    await page.getByRole('heading', { name: 'Harbour at dawn' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await svc?.svc.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('an audio clip shows its waveform element, cropped to the clip when the service draws one, else a plain bar', async () => {
    const wave = page.locator('.clip[data-track="A1"] .waveform');
    await wave.waitFor({ state: 'attached' });
    await page.waitForFunction(() => document.querySelector<HTMLElement>('.clip[data-track="A1"] .waveform')?.dataset.wave !== 'loading', null, { timeout: 30_000 });
    const state = await wave.evaluate((el: HTMLElement) => ({ wave: el.dataset.wave, size: el.style.backgroundSize, position: el.style.backgroundPosition, image: el.style.backgroundImage }));
    assert.ok(state.wave === 'shown' || state.wave === 'none', JSON.stringify(state));
    if (state.wave === 'shown') {
      // The whole 5 s source in a 5 s clip from 0: the picture is exactly the clip's width.
      assert.equal(state.size, '100% 100%');
      assert.match(state.image, /\/api\/v1\/media\//);
    }
    else {
      // A service that draws no sound thumbnail answers its URL 501 `unsupported`: that one failure is the plain bar's cause.
      const thumb = errors.filter((e) => e.startsWith(`501 /api/v1/media/${ids.tone}.t.`));
      assert.equal(thumb.length, 1, errors.join('\n'));
      errors.splice(errors.indexOf(thumb[0]!), 1);
    }
    assert.equal(await page.locator('.clip[data-track="V1"] .waveform').count(), 0, 'no waveform on a video track');
    assert.deepEqual(errors, []);
  });

  test('Space plays from the playhead across the cut (the second clip\'s source plays, the caption changes), through black, to the end', async () => {
    // 40 frames in: 10 frames before the cut at frame 50.
    await playhead().focus();
    for (let i = 0; i < 4; i++) await page.keyboard.press('Shift+ArrowRight');
    assert.equal(await playhead().getAttribute('aria-valuenow'), '40');
    await page.locator('.caption', { hasText: 'V1: sunrise' }).waitFor();
    await page.evaluate(() => {
      const w = window as unknown as { samples: Sample[] };
      w.samples = [];
      const tick = () => {
        const v = document.querySelector<HTMLVideoElement>('video.viewer[data-active]');
        const a = document.querySelector<HTMLAudioElement>('audio[data-track="A1"][data-active]');
        const cap = document.querySelector<HTMLElement>('.caption')!;
        w.samples.push({
          playhead: Number(document.querySelector('.ruler')!.getAttribute('aria-valuenow')),
          caption: cap.textContent ?? '',
          clip: cap.dataset.clip ?? '',
          gap: document.querySelector<HTMLElement>('.screen')!.dataset.gap,
          asset: v?.dataset.asset,
          time: v?.currentTime ?? -1,
          paused: v?.paused ?? true,
          sound: a !== null && !a.paused && a.currentTime > 0,
        });
        if (w.samples.length < 600) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    await page.keyboard.press('Space');
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    // Runs to the end (frame 124) and stops there by itself.
    await page.getByRole('button', { name: 'Play', exact: true }).waitFor({ timeout: 30_000 });
    assert.equal(await playhead().getAttribute('aria-valuenow'), '124');
    const samples = await page.evaluate(() => (window as unknown as { samples: Sample[] }).samples);
    const trail = samples.filter((_, i) => i % 10 === 0).map((s) => `${s.playhead}:${s.clip || '-'}:${s.asset?.slice(-4) ?? '-'}@${s.time.toFixed(2)}`).join(' ');
    // Before the cut: sunrise, playing.
    assert.ok(samples.some((s) => s.playhead >= 40 && s.playhead < 50 && s.clip === 'V1:0' && s.asset === ids.sunrise && !s.paused), trail);
    // After it: harbour's own file plays and moves on; the caption names it.
    const harbour = samples.filter((s) => s.playhead >= 55 && s.playhead < 100);
    assert.ok(harbour.length > 5, trail);
    assert.ok(harbour.every((s) => s.clip === 'V1:1' && /V1: harbour/.test(s.caption)), trail);
    assert.ok(harbour.some((s) => s.asset === ids.harbour && !s.paused && s.time > 0.3), `harbour's source plays: ${trail}`);
    // The playhead passed the cut steadily (no jump back, no stall of more than a few frames).
    const heads = samples.map((s) => s.playhead).filter((p) => p >= 40);
    for (let i = 1; i < heads.length; i++) assert.ok(heads[i]! >= heads[i - 1]!, trail);
    // 4–5 s: the tone still sounds, the picture is black.
    const gap = samples.filter((s) => s.playhead >= 102 && s.playhead < 124);
    assert.ok(gap.length > 5 && gap.every((s) => s.gap === 'true' && /black/.test(s.caption)), trail);
    assert.ok(samples.some((s) => s.sound), 'the A1 tone played');
    // How close to the cut the new source began, in frames (reported in renderer/README.md).
    const cut = await page.locator('.viewer-panel').getAttribute('data-cut-frames');
    assert.ok(cut !== null, 'the switch at the cut was measured');
    const first = Number(cut!.split(' ').pop());
    console.log(`# cut switch, frames from the cut: ${cut}`);
    assert.ok(first <= 3, `the second clip began within 3 frames of the cut: ${cut}`);
    await shots('editor-play-gap');
    assert.deepEqual(errors, []);
  });

  test('the export bar: always in view at 1280×800, exports under the typed name with progress moving, Download has that name, the file probes to the sequence', async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.evaluate(() => window.scrollTo(0, 0));
    const bar = page.getByRole('region', { name: 'Export this sequence' });
    const box = (await bar.boundingBox())!;
    assert.ok(box.y >= 0 && box.y + box.height <= 800, `the bar is in the window: ${JSON.stringify(box)}`);
    const name = page.getByLabel('File name');
    assert.equal(await name.inputValue(), 'Harbour at dawn.mp4');
    await name.fill('Dawn – final cut');
    // Record every value the bar's progress shows.
    await page.evaluate(() => {
      const w = window as unknown as { values: number[] };
      w.values = [];
      new MutationObserver(() => {
        const now = document.querySelector('.export-bar [role=progressbar]')?.getAttribute('aria-valuenow');
        if (now !== null && now !== undefined && w.values[w.values.length - 1] !== Number(now)) w.values.push(Number(now));
      }).observe(document.querySelector('.export-bar')!, { subtree: true, childList: true, attributes: true });
    });
    // At real speed (-re): 5 s of sequence take about 5 s, progress reported twice a second.
    writeFileSync(wrapper.mode, 'slow');
    await bar.getByRole('button', { name: 'Export', exact: true }).click();
    await bar.getByRole('progressbar').waitFor({ timeout: 30_000 });
    assert.equal(await name.isDisabled(), true, 'the name is fixed while it exports');
    await bar.getByRole('button', { name: /^Cancel / }).waitFor();
    await shots('editor-export-bar-running');
    const download = bar.getByRole('link', { name: 'Download' });
    await download.waitFor({ timeout: 60_000 });
    writeFileSync(wrapper.mode, 'normal');
    const values = await page.evaluate(() => (window as unknown as { values: number[] }).values);
    const between = values.filter((v) => v > 0 && v < 100);
    assert.ok(between.length >= 3, `progress moved steadily: ${values.join(' ')}`);
    assert.ok(between.some((v) => v >= 25 && v <= 75), `a value in the middle: ${values.join(' ')}`);
    assert.match(await bar.innerText(), /Exported\s+Dawn – final cut\.mp4/);
    const jobId = (await page.locator('.bar-status').getAttribute('data-job'))!;
    const job = (await svc.l.get(`/launcher/jobs/${jobId}`)).json;
    assert.equal(job.state, 'succeeded');
    assert.equal(await bar.getByRole('link', { name: 'Show in launcher' }).getAttribute('href'), `/#gallery/${job.data.item_id}`);
    assert.equal(await bar.getByRole('link', { name: 'Show in launcher' }).getAttribute('target'), '_blank');
    const [file] = await Promise.all([page.waitForEvent('download'), download.click()]);
    assert.equal(file.suggestedFilename(), 'Dawn – final cut.mp4');
    const saved = join(dir, 'downloaded.mp4');
    await file.saveAs(saved);
    assert.ok(existsSync(saved) && statSync(saved).size > 0);
    const probe = probeFile(saved);
    assert.ok(Math.abs(Number(probe.format.duration) - 5) <= 1 / FPS, `the file lasts ${probe.format.duration} s, the sequence 5 s`);
    await shots('editor-export-bar-done');
    assert.deepEqual(errors, []);
  });

  test('a 2,000-clip sequence draws only the clips in view, with summaries where they are narrower than 8 px', async () => {
    const clips = (asset: string) => Array.from({ length: 1000 }, (_, i) => ({ asset_id: asset, start: i * 2, in: 0, duration: 2 }));
    const long = assertTimeline(await studio.post('/timeline', { name: 'Two thousand', target: { fps: FPS, width: 320, height: 180 }, tracks: { V1: clips(ids.sunrise!), A1: clips(ids.tone!) } }), 201).id;
    assert.equal((await studio.post(`/timeline/${long}:open`)).status, 200);
    await page.getByRole('heading', { name: 'Two thousand' }).waitFor({ timeout: 30_000 });
    // Fit: 2,000 s on one screen, every clip well under a pixel: a few summaries, no clip.
    const counts = () => page.evaluate(() => ({ clips: document.querySelectorAll('.clip').length, summaries: document.querySelectorAll('.clip-summary').length, nodes: document.getElementsByTagName('*').length }));
    const fit = await counts();
    assert.equal(fit.clips, 0, JSON.stringify(fit));
    assert.ok(fit.summaries >= 2 && fit.summaries <= 20, JSON.stringify(fit));
    assert.ok(fit.nodes < 600, JSON.stringify(fit));
    const summary = page.locator('.clip-summary').first();
    assert.match((await summary.getAttribute('aria-label'))!, /^\d+ clips, 00:00:00:00 to /);
    await shots('editor-long-fit');
    // 1 px a frame (a clip is 50 px): only the clips near the view are in the page, at their frames.
    for (let i = 0; i < 20 && Number(await page.locator('.canvas').getAttribute('data-px-per-frame')) < 1; i++) await page.getByRole('button', { name: 'Zoom in' }).click();
    assert.equal(await page.locator('.canvas').getAttribute('data-px-per-frame'), '1');
    const near = await counts();
    assert.ok(near.clips > 10 && near.clips < 200, JSON.stringify(near));
    await page.locator('.scroller').evaluate((s: HTMLElement) => (s.scrollLeft = 50_000));
    await page.waitForFunction(() => document.querySelector('.clip[data-track="V1"][data-index="1000"]') === null && document.querySelector('.clip[data-track="V1"][data-index="999"]') !== null);
    const far = page.locator('.clip[data-track="V1"][data-index="999"]');
    assert.equal(await far.getAttribute('data-start'), String(999 * 2 * FPS));
    assert.equal(await far.evaluate((el: HTMLElement) => el.style.left), `${999 * 2 * FPS}px`);
    assert.equal(await page.locator('.clip[data-track="V1"][data-index="0"]').count(), 0, 'the first clip left the page');
    await shots('editor-long-zoomed');
    assert.deepEqual(errors, []);
  });
});
