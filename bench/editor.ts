import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, newContext, signIn } from '../test/helpers/browser';
import { client } from '../test/helpers/http';
import { startLauncher } from '../test/helpers/launcher';
import { makeAudio, makeVideo, requireFfmpeg } from '../test/helpers/media';
import { tempDir } from '../test/helpers/service';
import { upload } from '../test/helpers/assets';

/**
 * The editor page with a long sequence (bench/README.md "Editor: 2,000
 * clips"), in real Chromium against the real service: a 2,000-clip sequence
 * (1,000 video clips on V1, 1,000 sound clips on A1, 2 s each, 33 min 20 s at
 * 30 fps) and, as the baseline measured in the same run and the same page, a
 * 2-clip one. For each:
 *
 * - open: milliseconds from the studio's `POST /timeline/{id}:open` to the
 *   sequence drawn (its title and its clips, or their summary, in the page,
 *   then the next animation frame);
 * - nodes: elements in the page once drawn;
 * - zoom: animation frames per second while every frame zooms one step with
 *   Ctrl+wheel (six steps in from Fit, six out, twice), with the 95th
 *   percentile and the longest frame;
 * - scroll: the same while every frame scrolls the timeline 150 px, at 1 px
 *   a frame;
 * - drag: the latency from a pointer move to the animation frame that draws
 *   the clip's previewed new end while its end is dragged (median and worst
 *   of 40 moves), at 1 px a frame.
 *
 * Ratios are against the 2-clip sequence and against the page's frame rate
 * doing nothing (the same page, the same run), so the machine's speed
 * cancels out. Never run as a test.
 */

const CLIPS_PER_TRACK = Number(process.env.BACKLOT_BENCH_EDITOR_CLIPS ?? 1000);
const FPS = 30;

interface Frames {
  fps: number;
  p95: number;
  max: number;
}

interface Measured {
  clips: number;
  openMs: number;
  nodes: number;
  idle: Frames;
  zoom: Frames;
  scroll: Frames;
  drag: { median: number; max: number; moves: number };
}

export async function runEditorBench(): Promise<void> {
  requireFfmpeg();
  const dir = tempDir('backlot-bench-editor-');
  const svc = await startLauncher();
  const browser = await launchChromium();
  try {
    const token = svc.svc.studio('benchcut', ['assets', 'gallery', 'timeline']);
    const studio = client(svc.svc.port, token);
    const video = makeVideo(join(dir, 'card.mp4'), { seconds: 3, width: 160, height: 90, fps: FPS });
    const sound = makeAudio(join(dir, 'tone.m4a'), { seconds: 3 });
    const ids: string[] = [];
    for (const [file, kind] of [[video, 'video'], [sound, 'audio']] as const) {
      const res = await upload(svc.svc.port, token, readFileSync(file), `kind=${kind}&filename=${kind}`);
      if (res.status !== 201) throw new Error(`upload: ${res.status} ${res.body.toString()}`);
      ids.push(res.json.id);
    }
    const sequence = async (name: string, perTrack: number) => {
      const clips = (asset: string) => Array.from({ length: perTrack }, (_, i) => ({ asset_id: asset, start: i * 2, in: (i % 3) * 0.5, duration: 2 }));
      const res = await studio.post('/timeline', { name, target: { fps: FPS, width: 160, height: 90 }, tracks: { V1: clips(ids[0]!), A1: clips(ids[1]!) } });
      if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
      return res.json.id as string;
    };
    const small = await sequence('Baseline', 1);
    const long = await sequence('Two thousand', CLIPS_PER_TRACK);

    const context = await newContext(browser, 'light', { viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const login = svc.svc.cli(['login-url']);
    await signIn(page, login.stdout);
    await page.goto(`${svc.svc.origin}/editor/`);
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 30_000 });

    const open = async (id: string, name: string, clips: number): Promise<Measured> => {
      // Twice, the second one measured: the first warms the page's code for that size.
      let openMs = 0;
      for (let run = 0; run < 2; run++) {
        await studio.post(`/timeline/${small === id ? long : small}:open`);
        await page.waitForFunction((n) => document.querySelector('#seq-title')?.textContent === n, small === id ? 'Two thousand' : 'Baseline', { timeout: 60_000 });
        await nextFrame(page);
        const t0 = Date.now();
        const res = await studio.post(`/timeline/${id}:open`);
        if (res.status !== 200) throw new Error(`open: ${res.status} ${res.text}`);
        await page.waitForFunction((n) => document.querySelector('#seq-title')?.textContent === n && document.querySelector('.clip, .clip-summary') !== null, name, { polling: 'raf', timeout: 60_000 });
        await nextFrame(page);
        openMs = Date.now() - t0;
      }
      const nodes = await page.evaluate(() => document.getElementsByTagName('*').length);
      const idle = await page.evaluate(measureFrames, { action: 'idle', frames: 90 });
      const zcdp = process.env.BACKLOT_BENCH_PROFILE === 'zoom' ? await page.context().newCDPSession(page) : null;
      if (zcdp) {
        await zcdp.send('Profiler.enable');
        await zcdp.send('Profiler.start');
      }
      const zoom = await page.evaluate(measureFrames, { action: 'zoom', frames: 24 });
      if (zcdp) printProfile(await zcdp.send('Profiler.stop'));
      // Scroll and drag at 1 px a frame, where a 2 s clip is 60 px and the long sequence 100 screens wide.
      await zoomTo(page, 1);
      const cdp = process.env.BACKLOT_BENCH_PROFILE === 'scroll' ? await page.context().newCDPSession(page) : null;
      if (cdp) {
        console.log(await page.evaluate(() => {
          const s = document.querySelector<HTMLElement>('.scroller')!;
          const lane = document.querySelector<HTMLElement>('.lane')!;
          const out: string[] = [];
          let t = performance.now();
          for (let i = 0; i < 5; i++) { lane.append(document.createElement('span')); void s.clientWidth; }
          out.push(`lane change + layout: ${((performance.now() - t) / 5).toFixed(1)} ms`);
          t = performance.now();
          for (let i = 0; i < 5; i++) { document.body.append(document.createElement('span')); void document.body.offsetHeight; }
          out.push(`body change + layout: ${((performance.now() - t) / 5).toFixed(1)} ms`);
          t = performance.now();
          const ruler = document.querySelector<HTMLElement>('.ruler')!;
          for (let i = 0; i < 5; i++) { ruler.append(document.createElement('span')); void s.clientWidth; }
          out.push(`ruler change + layout: ${((performance.now() - t) / 5).toFixed(1)} ms`);
          out.push(`canvas ${document.querySelector<HTMLElement>('.canvas')!.style.width}, lanes ${document.querySelectorAll('.lane > *').length} children, ticks ${ruler.children.length}`);
          return out.join('\n');
        }));
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.start');
      }
      const scroll = await page.evaluate(measureFrames, { action: 'scroll', frames: 90 });
      if (cdp) {
        printProfile(await cdp.send('Profiler.stop'));
      }
      await page.evaluate(() => (document.querySelector<HTMLElement>('.scroller')!.scrollLeft = 0));
      await nextFrame(page);
      const drag = await measureDrag(page);
      await page.getByRole('button', { name: 'Fit' }).click();
      return { clips, openMs, nodes, idle, zoom, scroll, drag };
    };
    await page.addInitScript(INIT);
    await page.reload();
    await page.getByRole('status').filter({ hasText: 'Connected' }).waitFor({ timeout: 30_000 });
    const base = await open(small, 'Baseline', 2);
    const big = await open(long, 'Two thousand', CLIPS_PER_TRACK * 2);
    report(base, big);
    await context.close();
  } finally {
    await browser.close();
    await svc.svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Installed in the page before its own code: the frame and wheel helpers the measurements call. */
const INIT = `
window.wheel = (zoomIn) => {
  const s = document.querySelector('.scroller');
  const r = s.getBoundingClientRect();
  s.dispatchEvent(new WheelEvent('wheel', { ctrlKey: true, deltaY: zoomIn ? -100 : 100, clientX: r.left + r.width / 2, clientY: r.top + 40, bubbles: true, cancelable: true }));
};
`;

declare function wheel(zoomIn: boolean): void;

/** Runs in the page: frame times while `action` runs once per animation frame. */
function measureFrames(o: { action: string; frames: number }): Promise<{ fps: number; p95: number; max: number }> {
  const scroller = document.querySelector<HTMLElement>('.scroller')!;
  let zoomIn = true;
  let steps = 0;
  return new Promise((resolve) => {
    const times: number[] = [];
    const tick = (t: number) => {
      times.push(t);
      if (times.length > o.frames) {
        const gaps = times.slice(1).map((x, i) => x - times[i]!).sort((a, b) => a - b);
        const total = times[times.length - 1]! - times[0]!;
        resolve({ fps: (gaps.length * 1000) / total, p95: gaps[Math.floor(gaps.length * 0.95)]!, max: gaps[gaps.length - 1]! });
        return;
      }
      if (o.action === 'zoom') {
        // Six steps in, six out, anchored mid-screen.
        wheel(zoomIn);
        if (++steps % 6 === 0) zoomIn = !zoomIn;
      } else if (o.action === 'scroll') {
        if (scroller.scrollLeft + scroller.clientWidth + 150 >= scroller.scrollWidth) scroller.scrollLeft = 0;
        else scroller.scrollLeft += 150;
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

/** BACKLOT_BENCH_PROFILE=zoom|scroll: the page's functions with the most samples during that measure (where the time goes). */
function printProfile(result: unknown): void {
  const { profile } = result as { profile: { nodes: { callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[] } };
  const top = profile.nodes.filter((n) => (n.hitCount ?? 0) > 0).sort((a, b) => (b.hitCount ?? 0) - (a.hitCount ?? 0)).slice(0, 15);
  for (const n of top) console.log(`${n.hitCount} ${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`);
}

/** Ctrl+wheel steps until the timeline shows `px` pixels a frame. */
async function zoomTo(page: Page, px: number): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const now = Number(await page.locator('[data-px-per-frame]').first().getAttribute('data-px-per-frame'));
    if (now === px) return;
    await page.evaluate((zoomIn) => wheel(zoomIn), now < px);
    await nextFrame(page);
  }
  throw new Error(`could not zoom to ${px} px a frame`);
}

async function nextFrame(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
}

/**
 * Trims the widest clip in view by its end handle, 3 to 42 px shorter and
 * back, 40 moves, then back to where it was; each move's latency is the time
 * from the pointer event to the animation frame after the clip's style
 * changed.
 */
async function measureDrag(page: Page): Promise<{ median: number; max: number; moves: number }> {
  const box = await page.evaluate(() => {
    const scroller = document.querySelector<HTMLElement>('.scroller')!.getBoundingClientRect();
    let best: DOMRect | null = null;
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('.clip'))) {
      const r = el.getBoundingClientRect();
      if (r.left < scroller.left + 50 || r.right > scroller.right) continue;
      if (!best || r.width > best.width) best = r;
    }
    if (!best) return null;
    const probe = { left: best.left, top: best.top, width: best.width, height: best.height };
    const w = window as unknown as { __lat: number[]; __pending: number | null };
    w.__lat = [];
    w.__pending = null;
    document.addEventListener('pointermove', (e) => (w.__pending = e.timeStamp), { capture: true });
    new MutationObserver(() => {
      const from = w.__pending;
      if (from === null) return;
      w.__pending = null;
      requestAnimationFrame(() => w.__lat.push(performance.now() - from));
    }).observe(document.querySelector('.scroller')!, { attributes: true, attributeFilter: ['style'], subtree: true });
    return probe;
  });
  if (!box) return { median: NaN, max: NaN, moves: 0 };
  // The end handle: trimming shorter is always allowed (a move could meet the next clip).
  const x = box.left + box.width - 3;
  const y = box.top + box.height / 2;
  await page.mouse.move(x, y);
  // Alt suspends snapping: every move changes the clip.
  await page.keyboard.down('Alt');
  await page.mouse.down();
  for (let i = 0; i < 40; i++) {
    await page.mouse.move(x - 3 * (1 + (i % 14)), y);
    await nextFrame(page);
  }
  await page.mouse.move(x, y, { steps: 4 });
  await page.mouse.up();
  await page.keyboard.up('Alt');
  await nextFrame(page);
  const lat = (await page.evaluate(() => (window as unknown as { __lat: number[] }).__lat)).sort((a, b) => a - b);
  return { median: lat[Math.floor(lat.length / 2)] ?? NaN, max: lat[lat.length - 1] ?? NaN, moves: lat.length };
}

function report(base: Measured, big: Measured): void {
  const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–');
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}×` : '–');
  const rows: [string, string, string, string][] = [
    ['open → drawn (ms)', String(base.openMs), String(big.openMs), ratio(big.openMs, base.openMs)],
    ['elements in the page', String(base.nodes), String(big.nodes), ratio(big.nodes, base.nodes)],
    ['idle frame rate (fps)', f1(base.idle.fps), f1(big.idle.fps), ratio(big.idle.fps, base.idle.fps)],
    ['zoom every frame (fps)', f1(base.zoom.fps), f1(big.zoom.fps), ratio(big.zoom.fps, big.idle.fps) + ' of idle'],
    ['zoom: p95 / longest frame (ms)', `${f1(base.zoom.p95)} / ${f1(base.zoom.max)}`, `${f1(big.zoom.p95)} / ${f1(big.zoom.max)}`, ''],
    ['scroll 150 px every frame (fps)', f1(base.scroll.fps), f1(big.scroll.fps), ratio(big.scroll.fps, big.idle.fps) + ' of idle'],
    ['scroll: p95 / longest frame (ms)', `${f1(base.scroll.p95)} / ${f1(base.scroll.max)}`, `${f1(big.scroll.p95)} / ${f1(big.scroll.max)}`, ''],
    ['drag: move → drawn, median / worst (ms)', `${f1(base.drag.median)} / ${f1(base.drag.max)}`, `${f1(big.drag.median)} / ${f1(big.drag.max)}`, ratio(big.drag.median, base.drag.median)],
  ];
  console.log(`editor: ${big.clips} clips against ${base.clips} (1280×800, Chromium headless)\n`);
  console.log(`| measure | ${base.clips} clips | ${big.clips} clips | ratio |`);
  console.log('|---|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}
