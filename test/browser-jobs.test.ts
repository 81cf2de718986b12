import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { upload } from './helpers/assets';
import { cancelJobFromRow, launchChromium, newContext, saveScreenshot, SCHEMES, watchPageErrors, type Scheme } from './helpers/browser';
import { blobs, ffmpegWrapper, freshConnections, tmpEntries } from './helpers/export';
import { send } from './helpers/http';
import { fixture, pidsIn, sleep, startLauncher, type LauncherService } from './helpers/launcher';
import { makeVideo, requireFfmpeg } from './helpers/media';
import { alive } from './helpers/processes';
import { tempDir } from './helpers/service';
import { openSse } from './helpers/sse';

/**
 * The launcher UI's jobs (renderer/README.md "Launcher: jobs and disk") in real Chromium against the real
 * service: a job's live log (step headers, auto-scroll that stops when the
 * person scrolls up, "Jump to latest", and a dropped connection resumed by
 * Last-Event-ID with no line lost or doubled); a failed job's step, last 20
 * lines and Copy details in its row; the stall notice of a job whose process
 * group is stopped with SIGSTOP (the page's clock moved on by Playwright) and
 * its cancel, which holds "Cancelling…" until the group is gone; and an export
 * cancelled from the jobs panel that ends `cancelled` with no partial file.
 * Screenshots (light, dark; 1280 and 800 px) go to test-results/.
 */

/**
 * A step that prints numbered lines, one every `ms`: `count` of them, and with
 * `wait` on until the file named in gate.txt (an absolute path outside the
 * studio) exists, so lines keep coming for as long as the test needs them.
 */
const COUNT_JS = `'use strict';
const fs = require('node:fs');
const [prefix, count, ms, wait] = process.argv.slice(2);
const gate = wait ? fs.readFileSync(__dirname + '/gate.txt', 'utf8').trim() : null;
let i = 0;
const t = setInterval(() => {
  i += 1;
  console.log(prefix + ' ' + i);
  if (i >= Number(count) && (!gate || fs.existsSync(gate))) {
    clearInterval(t);
    console.log(prefix + ' done');
  }
}, Number(ms));
`;

/**
 * A forward HTTP proxy between Chromium and the service, so a test can drop
 * the connections of the job log streams the way a network would, while the
 * page and the service stay as they are (the Host header passes unchanged).
 */
async function dropProxy(): Promise<{ port: number; drop(): number; close(): Promise<void> }> {
  const streams = new Set<{ client: import('node:net').Socket; upstream: http.ClientRequest }>();
  const server = http.createServer((req, res) => {
    const target = new URL(req.url!);
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    const upstream = http.request(
      { host: target.hostname, port: Number(target.port), method: req.method, path: target.pathname + target.search, headers, setHost: false },
      (up) => {
        res.writeHead(up.statusCode!, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
    if (/\/logs$/.test(target.pathname)) {
      const entry = { client: req.socket, upstream };
      streams.add(entry);
      res.on('close', () => streams.delete(entry));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as import('node:net').AddressInfo).port,
    drop() {
      const n = streams.size;
      for (const s of streams) {
        s.upstream.destroy();
        s.client.destroy();
      }
      streams.clear();
      return n;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe('launcher UI: jobs', () => {
  let svc: LauncherService;
  let browser: Browser;
  let dir: string;
  let wrapper: ReturnType<typeof ffmpegWrapper>;

  before(async () => {
    requireFfmpeg();
    freshConnections();
    dir = tempDir('backlot-browser-jobs-');
    wrapper = ffmpegWrapper(dir);
    writeFileSync(wrapper.mode, 'normal');
    svc = await startLauncher({ env: { BACKLOT_FFMPEG: wrapper.path } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await svc?.svc.stop();
  });

  async function signedInPage(
    scheme: Scheme = 'light',
    width = 1280,
    setup?: (page: Page, context: BrowserContext) => Promise<void>,
    options: Parameters<typeof newContext>[2] = {},
  ): Promise<{ page: Page; context: BrowserContext; errors: string[]; close(): Promise<void> }> {
    const context = await newContext(browser, scheme, { viewport: { width, height: 900 }, ...options });
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    await setup?.(page, context);
    const r = svc.svc.cli(['login-url']);
    assert.equal(r.code, 0, r.stderr);
    await page.goto(r.stdout.trim());
    await page.getByRole('heading', { name: 'Jobs' }).waitFor();
    return { page, context, errors, close: () => context.close() };
  }

  async function shoot(page: Page, name: string): Promise<void> {
    await page.locator('.disk .reclaimable').waitFor();
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      await saveScreenshot(page, name, scheme);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }

  /** Starts an install of `src` through the API and returns its job id. */
  async function installJob(src: string): Promise<string> {
    const res = await svc.l.post('/launcher/studios:install', { source: src });
    assert.equal(res.status, 202, res.text);
    return res.json.id;
  }

  test('a live log: step headers, auto-scroll, Jump to latest, and a dropped connection resumed with no line lost or doubled', async () => {
    const gate = join(dir, 'chatty-gate');
    const src = fixture(
      {
        id: 'chatty',
        name: 'Chatty',
        install: [
          { name: 'warm up', run: 'node count.js warm 30 20' },
          { name: 'fetch parts', run: 'node count.js part 1 60 wait' },
        ],
      },
      { 'count.js': COUNT_JS, 'gate.txt': gate },
    );
    // The launcher channel hears that the job writes (job_output); a studio's own channel never does.
    const channel = await openSse(svc.svc.port, '/launcher/events', svc.l.cred);
    const proxy = await dropProxy();
    const { page, errors, close } = await signedInPage('light', 1280, undefined, {
      proxy: { server: `http://127.0.0.1:${proxy.port}`, bypass: '<-loopback>' },
    });
    const logRequests: { lastEventId: string | null }[] = [];
    page.on('request', (req) => {
      // The page reads the stream with fetch (renderer/lib/sse.ts), so that it can send the credential's header.
      if (!/\/launcher\/jobs\/[^/]+\/logs$/.test(new URL(req.url()).pathname) || !['eventsource', 'fetch'].includes(req.resourceType())) return;
      const entry: { lastEventId: string | null } = { lastEventId: null };
      logRequests.push(entry);
      req.allHeaders().then(
        (headers) => (entry.lastEventId = headers['last-event-id'] ?? null),
        () => undefined, // the page closed first
      );
    });
    try {
      const id = await installJob(src);
      const row = page.locator(`li.job[data-job="${id}"]`);
      await row.waitFor();
      await row.locator('.job-open').click();
      assert.equal(await row.locator('.job-open').getAttribute('aria-expanded'), 'true');
      const log = page.getByRole('region', { name: /^Log of / });
      await log.waitFor();
      // Step headers are headings between the lines.
      await log.getByRole('heading', { name: 'Step 1: warm up' }).waitFor({ timeout: 30_000 });
      await log.getByRole('heading', { name: 'Step 2: fetch parts' }).waitFor({ timeout: 30_000 });
      await log.locator('.log-line', { hasText: 'part 5' }).first().waitFor({ timeout: 30_000 });
      const view = page.locator('.log-view');
      assert.equal(await view.getAttribute('data-follow'), 'true', 'follows the newest line');
      const gap = () => log.evaluate((el) => el.scrollHeight - el.clientHeight - el.scrollTop);
      assert.ok((await gap()) <= 8, 'at the bottom');

      // Scrolling up stops the auto-scroll and shows "Jump to latest"; new lines do not move the view.
      await log.evaluate((el) => {
        el.scrollTop = 0;
        el.dispatchEvent(new Event('scroll'));
      });
      const jump = page.getByRole('button', { name: 'Jump to latest ↓' });
      await jump.waitFor();
      const shownBefore = await log.locator('.log-line').count();
      await page.waitForFunction((n) => document.querySelectorAll('.log .log-line').length > n + 3, shownBefore, { timeout: 30_000 });
      assert.equal(await log.evaluate((el) => el.scrollTop), 0, 'the view stays where the person put it');
      await shoot(page, 'jobs-log-scrolled-up');
      await jump.click();
      assert.ok((await gap()) <= 8, 'back at the bottom');
      assert.equal(await view.getAttribute('data-follow'), 'true', 'following again');
      assert.equal(await jump.isVisible(), false);

      // The connection drops (the proxy cuts it) while lines keep coming: the stream reconnects with Last-Event-ID.
      const before = await log.locator('.log-line').count();
      assert.equal(proxy.drop(), 1, 'one log stream was open');
      await page.locator('.log-view[data-stream="reconnecting"]').waitFor({ timeout: 15_000 });
      await page.locator('.log-view[data-stream="live"]').waitFor({ timeout: 30_000 });
      await page.waitForFunction((n) => document.querySelectorAll('.log .log-line').length > n + 5, before, { timeout: 30_000 });
      writeFileSync(gate, 'go');
      await page.locator('.log-status', { hasText: 'Finished: succeeded' }).waitFor({ timeout: 60_000 });
      assert.ok(logRequests.length >= 2, `reconnected (${logRequests.length} log requests)`);
      const resumed = logRequests.slice(1).map((r) => r.lastEventId);
      assert.ok(resumed.every((v) => v !== null && /^\d+$/.test(v) && Number(v) > 0), `each reconnect sent Last-Event-ID: ${JSON.stringify(resumed)}`);

      // Every line of the server's log exactly once, in order; each step header once.
      const server = await svc.l.logText(id);
      const shown = await log.locator('.log-line').evaluateAll((els) => els.map((el) => ({ n: Number((el as HTMLElement).dataset.n), text: el.textContent!.replace(/^\d+/, '') })));
      assert.deepEqual(shown.map((l) => l.n), server.map((_, i) => i + 1), 'every line once, in order');
      assert.deepEqual(shown.map((l) => l.text), server);
      assert.equal(await log.getByRole('heading', { name: 'Step 2: fetch parts' }).count(), 1);
      assert.equal(await log.getByRole('heading', { name: 'Step 1: warm up' }).count(), 1);

      const note = (await channel.waitFor((m) => m.event === 'job_output' && JSON.parse(m.data).id === id))[0]!;
      const data = JSON.parse(note.data);
      assert.deepEqual(Object.keys(data).sort(), ['at', 'id', 'n', 'studio_id', 'text']);
      assert.equal(data.studio_id, 'chatty');
      await shoot(page, 'jobs-log-finished');
      // Close returns focus to the job's title.
      await page.getByRole('button', { name: /^Close the log of / }).click();
      assert.equal(await page.locator('#job-details').isHidden(), true);
      assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('job-open')), true);
      // Enter on the focused row opens it again.
      await row.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('region', { name: /^Log of / }).waitFor();
      assert.deepEqual(errors, []);
    } finally {
      channel.close();
      await close();
      await proxy.close();
    }
  });

  test('a failed job shows its step, its last 20 log lines and Copy details in its row', async () => {
    const words = Array.from({ length: 30 }, (_, i) => `word-${i + 1}`);
    const src = fixture({
      id: 'breaks',
      name: 'Breaks',
      install: [
        { name: 'say words', run: `node tool.js print ${words.join(' ')}` },
        { name: 'compile', run: 'node tool.js fail 3' },
      ],
    });
    const id = await installJob(src);
    const job = await svc.l.waitJob(id);
    assert.equal(job.state, 'failed');
    const server = await svc.l.logText(id);
    for (const [width, label] of [[1280, 'jobs-failed'], [800, 'jobs-800-failed']] as const) {
      const { page, context, errors, close } = await signedInPage('light', width);
      try {
        await context.grantPermissions(['clipboard-read', 'clipboard-write']);
        const row = page.locator(`li.job[data-job="${id}"]`);
        const failure = row.locator('.failure');
        await failure.locator('pre.tail').waitFor({ timeout: 30_000 });
        assert.equal(await failure.locator('[data-step]').innerText(), 'compile');
        assert.match(await failure.innerText(), /Step "compile" exited with code 3\./);
        const tail = (await failure.locator('pre.tail').innerText()).split('\n').filter((l) => l !== '');
        assert.deepEqual(tail, server.slice(-20), 'the last 20 lines of its log');
        const copy = failure.getByRole('button', { name: 'Copy details' });
        const text = (await copy.getAttribute('data-copy'))!;
        await copy.click();
        await failure.getByRole('button', { name: 'Copied' }).waitFor();
        assert.equal(await page.evaluate(() => navigator.clipboard.readText()), text);
        assert.match(text, /^Backlot job .* failed$/m);
        assert.match(text, /^Step: compile$/m);
        assert.match(text, /^Error: Step "compile" exited with code 3\.$/m);
        assert.match(text, /^Studio: breaks /m);
        for (const line of server.slice(-20)) assert.ok(text.includes(line), line);
        assert.ok(!text.includes('word-10\n'), 'only the last 20 lines');
        await shoot(page, label);
        // Open log: the whole log below the list.
        await failure.getByRole('button', { name: 'Open log' }).click();
        await page.locator('.log-status', { hasText: 'Finished: failed' }).waitFor({ timeout: 30_000 });
        assert.equal(await page.locator('.log .log-line').count(), server.length);
        await shoot(page, `${label}-log`);
        assert.deepEqual(errors, []);
      } finally {
        await close();
      }
    }
  });

  test('a job whose process group is stopped (SIGSTOP) says "No output for 30 s"; Cancel holds "Cancelling…" until the group is gone', async () => {
    const src = fixture({ id: 'frozen', name: 'Frozen', install: [{ name: 'wait', run: 'node tool.js sleep 300000' }] });
    // The page's clock is Playwright's: it flows with real time and can be moved on by 31 s at once.
    const { page, errors, close } = await signedInPage('light', 800, (p) => p.clock.install());
    let pids: number[] = [];
    try {
      const id = await installJob(src);
      const sse = await openSse(svc.svc.port, `/launcher/jobs/${id}/logs`, svc.l.cred);
      try {
        await sse.waitFor((m) => m.event === 'line' && /^pids /.test(JSON.parse(m.data).text), 1, 30_000);
        pids = pidsIn(sse.events.filter((m) => m.event === 'line').map((m) => JSON.parse(m.data).text));
      } finally {
        sse.close();
      }
      assert.equal(pids.length, 2);
      const [leader] = pids as [number, number];
      // The leader leads the step's process group (the service's ledger records it by that id).
      assert.equal(Number(readFileSync(`/proc/${leader}/stat`, 'utf8').split(') ')[1]!.split(' ')[2]), leader);
      process.kill(-leader, 'SIGSTOP');
      const row = page.locator(`li.job[data-job="${id}"]`);
      await row.locator('[role="progressbar"]').waitFor();
      // The page has heard of the step's last line (a job_output event), so no later event moves its clock back.
      await page.waitForFunction((jobId) => /pids \d+ \d+/.test(document.querySelector(`.stall[data-stall="${jobId}"]`)?.textContent ?? ''), id, { timeout: 15_000 });
      assert.equal(await row.locator('.stall').isHidden(), true, 'not stalled yet');
      await page.clock.fastForward(31_000);
      const stall = row.locator('.stall');
      await stall.getByText('No output for 30 s').waitFor({ timeout: 5000 });
      assert.match(await stall.innerText(), /last line: pids \d+ \d+/);
      assert.equal(await row.locator('.bar.stalled').count(), 1, 'the bar stops moving');
      const now = await svc.l.job(id);
      const valuenow = await row.getByRole('progressbar').getAttribute('aria-valuenow');
      if (now.progress_den === 0) assert.equal(valuenow, null, 'indeterminate: no aria-valuenow');
      else assert.match(String(valuenow), /^\d+$/);
      await shoot(page, 'jobs-800-stalled');

      // Cancel: "Cancelling…" at once; SIGTERM waits in the stopped processes, so the group lives until the SIGKILL 5 s later.
      const asked = Date.now();
      await row.getByRole('button', { name: /^Cancel / }).click();
      await row.getByRole('button', { name: /^Cancel / }).filter({ hasText: 'Cancelling…' }).waitFor({ timeout: 1000 });
      assert.ok(Date.now() - asked < 1000, 'Cancelling… within 1 s');
      assert.equal(await stall.isHidden(), true, 'a cancelling job is not "stalled"');
      await sleep(1500);
      assert.equal(alive(leader), true, 'the stopped group is still there');
      assert.notEqual(await row.getAttribute('data-state'), 'cancelled', 'so the row is not cancelled');
      assert.match(await row.innerText(), /cancelling/);
      await page.locator(`li.job[data-job="${id}"][data-state="cancelled"]`).waitFor({ timeout: 30_000 });
      for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} of the group is gone when the row says cancelled`);
      assert.equal((await svc.l.job(id)).state, 'cancelled');
      assert.deepEqual(errors, []);
    } finally {
      for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
      await close();
    }
  });

  test('an export cancelled from the jobs panel ends cancelled and leaves no partial file', async () => {
    const token = svc.svc.studio('cutter', ['assets', 'timeline', 'jobs', 'gallery']);
    const video = makeVideo(join(dir, 'long.mp4'), { seconds: 12 });
    const up = await upload(svc.svc.port, token, readFileSync(video), 'kind=video&filename=long.mp4');
    assert.equal(up.status, 201, up.body.toString());
    const seq = await send(svc.svc.port, {
      method: 'POST',
      path: '/api/v1/timeline',
      token,
      body: { name: 'Long cut', target: { fps: 25, width: 320, height: 180 }, clips: [{ asset_id: up.json.id }] },
    });
    assert.equal(seq.status, 201, seq.text);
    const blobsBefore = blobs(svc.svc.dataDir);
    writeFileSync(wrapper.mode, 'slow'); // ffmpeg reads at its own rate: the export takes about 12 s
    const { page, errors, close } = await signedInPage('dark', 1280);
    try {
      const started = await send(svc.svc.port, { method: 'POST', path: `/api/v1/timeline/${seq.json.id}:export`, token, body: {} });
      assert.equal(started.status, 202, started.text);
      const id = started.json.id;
      const row = page.locator(`li.job[data-job="${id}"]`);
      const bar = row.getByRole('progressbar');
      await page.waitForFunction(
        (jobId) => Number(document.querySelector(`li.job[data-job="${jobId}"] [role="progressbar"]`)?.getAttribute('aria-valuenow') ?? 0) > 0,
        id,
        { timeout: 30_000 },
      );
      assert.match(String(await bar.getAttribute('aria-valuenow')), /^\d+$/);
      assert.ok(tmpEntries(svc.svc.dataDir).length > 0, 'the export is writing its partial file');
      await shoot(page, 'jobs-export-running');
      // The cancel may be over in a few ms: the label is timed by an observer in the page.
      const shownAfter = await cancelJobFromRow(page, id);
      assert.ok(shownAfter < 1000, `Cancelling… within 1 s (${shownAfter} ms)`);
      await page.locator(`li.job[data-job="${id}"][data-state="cancelled"]`).waitFor({ timeout: 30_000 });
      assert.deepEqual(tmpEntries(svc.svc.dataDir), [], 'no partial file in blobs/.tmp');
      assert.deepEqual(blobs(svc.svc.dataDir), blobsBefore, 'no new blob');
      for (const pid of wrapper.pids()) assert.equal(alive(pid), false, `ffmpeg ${pid} is gone`);
      assert.equal(existsSync(join(svc.svc.dataDir, 'blobs', '.tmp')) ? tmpEntries(svc.svc.dataDir).length : 0, 0);
      const job = await svc.l.job(id);
      assert.equal(job.state, 'cancelled');
      assert.equal(job.last_error, null);
      assert.deepEqual(errors, []);
    } finally {
      writeFileSync(wrapper.mode, 'normal');
      await close();
    }
  });
});
