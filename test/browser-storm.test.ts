import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, newContext, saveScreenshot, SCHEMES, watchPageErrors } from './helpers/browser';
import { send } from './helpers/http';
import { fixture, sleep, startLauncher, type LauncherService } from './helpers/launcher';

/**
 * One studio's job events must not freeze the launcher page (renderer/README.md
 * §Jobs: events coalesced into the next frame, the per-studio cap). A studio
 * with the `jobs` capability creates 300 task jobs and then sends 1,500
 * progress PATCHes in 5 s, while a second studio runs and has a job of its own.
 * In real Chromium: the page's main thread stays free (the lateness of a 16 ms
 * interval, p99 ≤ 100 ms, measured in the page), a click on the other studio's
 * Stop during the storm sends its request within 500 ms, the other studio's
 * unfinished job stays in the list, the storm studio's jobs fold into one
 * "N more from …" row, and every shown row ends with the server's last state.
 * Screenshots (light, dark; 1280 and 800 px) go to test-results/.
 */

const JOBS = 300;
const PATCHES = 1500;
const STORM_MS = 5000;
/** Requests in flight at once, as a studio's worker pool would send them. */
const CONCURRENCY = 24;

/** A small client with its own keep-alive pool: the storm is many requests, not many connections. */
function stormClient(port: number, token: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const call = (method: string, path: string, body: unknown): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(body));
      const r = request(
        {
          host: '127.0.0.1',
          port,
          method,
          path: `/api/v1${path}`,
          agent,
          headers: {
            Authorization: `Bearer ${token}`,
            'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
            'Content-Length': String(payload.length),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, text }));
          res.on('error', reject);
        },
      );
      r.on('error', reject);
      r.end(payload);
    });
  return { call, close: () => agent.destroy() };
}

/** Runs `work(i)` for i in 0..count-1, at most `limit` at once; with `spanMs`, request i starts no earlier than i·spanMs/count. */
async function bounded(count: number, limit: number, work: (i: number) => Promise<void>, spanMs = 0): Promise<void> {
  const start = Date.now();
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= count) return;
      const due = start + (spanMs * i) / count;
      if (due > Date.now()) await sleep(due - Date.now());
      await work(i);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

interface Probe {
  /** Lateness of each 16 ms interval tick, ms. */
  late: number[];
  longTasks: number[];
  stopAt: number | null;
  clickAt: number | null;
}

/** In the page: a 16 ms interval whose lateness is recorded, long tasks, and when a click and the :stop request happened (wall clock). */
async function installProbe(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __probe: Probe & { timer: number; on: boolean } };
    const probe = { late: [] as number[], longTasks: [] as number[], stopAt: null as number | null, clickAt: null as number | null, timer: 0, on: false };
    w.__probe = probe;
    let last = performance.now();
    probe.timer = window.setInterval(() => {
      const now = performance.now();
      if (probe.on) probe.late.push(Math.max(0, now - last - 16));
      last = now;
    }, 16);
    try {
      new PerformanceObserver((list) => {
        if (probe.on) for (const e of list.getEntries()) probe.longTasks.push(e.duration);
      }).observe({ type: 'longtask', buffered: false });
    } catch {
      // no longtask entries in this browser: the interval still measures
    }
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (probe.stopAt === null && /:stop$/.test(e.name)) probe.stopAt = performance.timeOrigin + e.startTime;
      }
    }).observe({ type: 'resource', buffered: false });
    document.addEventListener('click', () => (probe.clickAt ??= performance.timeOrigin + performance.now()), { capture: true });
  });
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('launcher UI: a storm of one studio\'s job events', () => {
  let svc: LauncherService;
  let browser: Browser;

  before(async () => {
    svc = await startLauncher();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await svc?.svc.stop();
  });

  test('300 jobs and 1,500 PATCHes in 5 s: the page stays responsive, Stop works, the other studio keeps its row, the last state is exact', async () => {
    const token = svc.svc.studio('storm', ['jobs']);
    const calmSrc = fixture({ id: 'calm', name: 'Calm' });
    await svc.l.installOk(calmSrc);
    await svc.l.startOk('calm');
    const calmToken = svc.svc.token('calm', ['jobs']);
    const calmJob = await send(svc.svc.port, { method: 'POST', path: '/api/v1/jobs', token: calmToken, body: { title: 'Calm render', progress_num: 1, progress_den: 4 } });
    assert.equal(calmJob.status, 201, calmJob.text);

    const context = await newContext(browser, 'light', { viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    const storm = stormClient(svc.svc.port, token);
    try {
      const r = svc.svc.cli(['login-url']);
      assert.equal(r.code, 0, r.stderr);
      await page.goto(r.stdout.trim());
      const calmRow = page.locator('li.studio[data-studio="calm"]');
      await calmRow.and(page.locator('[data-state="running"]')).waitFor({ timeout: 30_000 });
      await page.locator(`li.job[data-job="${calmJob.json.id}"]`).waitFor();
      // Where Stop is, read before the storm: during it the click goes in as raw input, with no round trip to the page first.
      const stopBox = (await calmRow.getByRole('button', { name: 'Stop' }).boundingBox())!;
      await installProbe(page);
      await page.evaluate(() => ((window as unknown as { __probe: { on: boolean } }).__probe.on = true));

      // 300 task jobs, then 1,500 PATCHes of progress paced over 5 s; the last round finishes 50 of them.
      const ids: string[] = new Array(JOBS);
      const stormStart = Date.now();
      await bounded(JOBS, CONCURRENCY, async (i) => {
        const res = await storm.call('POST', '/jobs', { title: `Storm job ${String(i + 1).padStart(3, '0')}`, progress_num: 0, progress_den: 5 });
        assert.equal(res.status, 201, res.text);
        ids[i] = JSON.parse(res.text).id;
      });
      const created = Date.now();
      let clickedAt = 0;
      const patches = bounded(
        PATCHES,
        CONCURRENCY,
        async (i) => {
          const round = Math.floor(i / JOBS) + 1; // 1..5
          const body: Record<string, unknown> = { progress_num: round };
          if (round === 5 && i % JOBS < 50) body.state = 'succeeded';
          const res = await storm.call('PATCH', `/jobs/${ids[i % JOBS]}`, body);
          assert.equal(res.status, 200, res.text);
        },
        STORM_MS,
      );
      // In the middle of the storm: Stop on the other studio.
      await sleep(STORM_MS / 2);
      clickedAt = Date.now();
      await page.mouse.click(stopBox.x + stopBox.width / 2, stopBox.y + stopBox.height / 2);
      await patches;
      const ended = Date.now();
      await page.evaluate(() => ((window as unknown as { __probe: { on: boolean } }).__probe.on = false));
      const probe = await page.evaluate(() => {
        const p = (window as unknown as { __probe: Probe }).__probe;
        return { late: p.late, longTasks: p.longTasks, stopAt: p.stopAt, clickAt: p.clickAt };
      });
      const p99 = percentile(probe.late, 99);
      const figures = {
        createMs: created - stormStart,
        patchMs: ended - created,
        ticks: probe.late.length,
        p50: Math.round(percentile(probe.late, 50)),
        p99: Math.round(p99),
        max: Math.round(Math.max(0, ...probe.late)),
        longTasks: probe.longTasks.length,
        longestTask: Math.round(Math.max(0, ...probe.longTasks)),
        clickHandledAfter: probe.clickAt === null ? null : Math.round(probe.clickAt - clickedAt),
        stopSentAfter: probe.stopAt === null ? null : Math.round(probe.stopAt - clickedAt),
      };
      console.log(`storm: ${JSON.stringify(figures)}`);
      // Paced over 5 s; a loaded machine's service may take longer, but it stays a storm: at
      // least 58 PATCHes a second, the rate at which the review saw the page's timers halved.
      assert.ok(ended - created < (PATCHES / 58) * 1000, `the PATCHes took ${ended - created} ms`);
      assert.ok(probe.late.length > 100, `the probe ran (${probe.late.length} ticks)`);
      assert.ok(p99 <= 100, `main-thread delay p99 ${Math.round(p99)} ms (max ${figures.max} ms)`);
      assert.notEqual(probe.stopAt, null, 'the click on Stop sent its request');
      assert.ok(probe.stopAt! - clickedAt <= 500, `Stop sent ${figures.stopSentAfter} ms after the click`);
      await calmRow.and(page.locator('[data-state="installed"]')).waitFor({ timeout: 30_000 });

      // The other studio's unfinished job was never pushed off; the storm studio folds into one summary row.
      const calmJobRow = page.locator(`li.job[data-job="${calmJob.json.id}"]`);
      assert.equal(await calmJobRow.count(), 1, "the other studio's running job is listed");
      assert.equal(await calmJobRow.getByRole('progressbar').getAttribute('aria-valuenow'), '25');
      const more = page.locator('li.job-more[data-more="storm"]');
      await more.waitFor();
      const shownStorm = await page.locator('li.job[data-studio="storm"]').count();
      assert.ok(shownStorm > 0 && shownStorm <= 20, `the storm studio shows ${shownStorm} rows`);
      assert.match(await more.innerText(), new RegExp(`${JOBS - shownStorm} more from storm`));

      // Every row shown ends in the server's last state (no state or progress lost by coalescing).
      const server = new Map<string, any>();
      for (let cursor: string | null = null, first = true; first || cursor; first = false) {
        const res = await svc.l.get(`/launcher/jobs?studio=storm&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
        for (const job of res.json.items) server.set(job.id, job);
        cursor = res.json.next_cursor;
      }
      assert.equal(server.size, JOBS);
      await page.waitForFunction(() => document.querySelectorAll('li.job[data-state="running"] [role="progressbar"][aria-valuenow="100"]').length > 0);
      const shown = await page.locator('li.job').evaluateAll((els) =>
        els.map((el) => ({ id: (el as HTMLElement).dataset.job!, state: (el as HTMLElement).dataset.state!, now: el.querySelector('[role="progressbar"]')?.getAttribute('aria-valuenow') ?? null })),
      );
      for (const row of shown.filter((s) => server.has(s.id))) {
        const job = server.get(row.id);
        assert.equal(row.state, job.state, `job ${row.id}`);
        assert.equal(row.now, job.state === 'running' ? String(Math.round((job.progress_num / job.progress_den) * 100)) : null, `job ${row.id}`);
      }

      // Screenshots: after the storm, and during a second (unmeasured) burst, light and dark, 1280 and 800 px;
      // the list scrolled to the summary row and the other studio's job.
      await calmJobRow.scrollIntoViewIfNeeded();
      for (const width of [1280, 800]) {
        await page.setViewportSize({ width, height: 900 });
        for (const scheme of SCHEMES) {
          await page.emulateMedia({ colorScheme: scheme });
          await saveScreenshot(page, `storm-${width}-after`, scheme);
        }
      }
      await page.setViewportSize({ width: 1280, height: 900 });
      // Half of the burst moves the rows in view, so the pictures show bars in motion.
      const inView = await page.locator('li.job[data-studio="storm"]').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.job!));
      const burst = bounded(600, CONCURRENCY, async (i) => {
        const id = i % 2 === 0 ? inView[(i / 2) % inView.length]! : ids[50 + (i % (JOBS - 50))]!;
        const res = await storm.call('PATCH', `/jobs/${id}`, { progress_num: 1 + (i % 4) });
        assert.equal(res.status, 200, res.text);
      }, 3000);
      for (const width of [1280, 800]) {
        await page.setViewportSize({ width, height: 900 });
        for (const scheme of SCHEMES) {
          await page.emulateMedia({ colorScheme: scheme });
          await saveScreenshot(page, `storm-${width}-during`, scheme);
        }
      }
      await burst;

      // Show all: the storm studio's rows up to the list's 200, by keyboard; Show fewer folds them again.
      await page.setViewportSize({ width: 1280, height: 900 });
      const toggle = more.getByRole('button', { name: 'Show all jobs of storm' });
      await toggle.focus();
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.querySelectorAll('li.job[data-studio="storm"]').length === 200);
      assert.match(await more.innerText(), /100 more from storm/);
      const fewer = more.getByRole('button', { name: 'Show fewer jobs of storm' });
      assert.equal(await fewer.getAttribute('aria-expanded'), 'true');
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-focus')), 'more', 'the focus stays on the button as its row moves');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => document.querySelectorAll('li.job[data-studio="storm"]').length === 5);
      assert.equal(await calmJobRow.count(), 1);

      // A fresh load: the newest 100 jobs overall are all the storm's, yet the other studio's older running job is there.
      await page.reload();
      await calmJobRow.waitFor();
      await more.waitFor();
      assert.equal(await page.locator('li.job[data-studio="storm"]').count(), 5);
      assert.deepEqual(errors, []);
    } finally {
      storm.close();
      await context.close();
    }
  });
});
