import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { launchChromium, newContext, saveScreenshot, SCHEMES, watchPageErrors } from './helpers/browser';
import { dropProxy } from './helpers/drop-proxy';
import { send } from './helpers/http';
import { fixture, rewriteManifest, SKETCHPAD, startLauncher, type LauncherService } from './helpers/launcher';

/**
 * The launcher as a place to work, in real Chromium against the real service
 * (README "The launcher"): the example studios installed with one click from an
 * empty data dir; a relative path answered next to the field with what to type;
 * a failing studio's reason, last lines, Copy details, Retry and its Console
 * (live, resumed after a dropped connection); a failed install retried from its
 * job row; the job list as one Tab stop with arrow keys; opening a log keeps the
 * job's Cancel in view; a heavy studio says in words what blocks it; the origin
 * is a link; no 401 for the icon. Screenshots in light and dark at 1280 and 800 px
 * go to test-results/.
 */

/** A studio server that prints "tick N" every 100 ms, so its console has live lines. */
const TICK_JS = `'use strict';
const http = require('node:http');
const port = Number(process.argv[process.argv.indexOf('--port') + 1]);
let i = 0;
setInterval(() => console.log('tick ' + ++i), 100);
http.createServer((req, res) => res.end('ticking')).listen(port, '127.0.0.1', () => console.log('listening on ' + port));
`;

describe('launcher UI: consoles, failures, examples', { timeout: 300_000 }, () => {
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

  async function signedInPage(
    width = 1280,
    options: BrowserContextOptions = {},
    initScript?: () => void,
  ): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
    const context = await newContext(browser, 'light', { viewport: { width, height: 900 }, ...options });
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
    if (initScript) await context.addInitScript(initScript);
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    const r = svc.svc.cli(['login-url']);
    assert.equal(r.code, 0, r.stderr);
    await page.goto(r.stdout.trim());
    await page.getByRole('heading', { name: 'Studios' }).waitFor();
    return { page, errors, close: () => context.close() };
  }

  /** Light and dark at the page's width, then at the other of 1280 and 800 px (the page reflows), back as it was. */
  async function shootAll(page: Page, name: string): Promise<void> {
    const first = page.viewportSize()!;
    for (const width of first.width === 1280 ? [1280, 800] : [800, 1280]) {
      await page.setViewportSize({ width, height: first.height });
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        await saveScreenshot(page, `${name}-${width}`, scheme);
      }
    }
    await page.setViewportSize(first);
    await page.emulateMedia({ colorScheme: 'light' });
  }

  test('from an empty data dir: the examples, with what each needs, install in one click; the page loads with no 401 (icon included)', async () => {
    const { page, errors, close } = await signedInPage();
    try {
      const examples = page.getByRole('region', { name: 'Examples' });
      await examples.locator('li[data-example="sketchpad"]').waitFor();
      assert.match(await page.locator('ul.studios .empty').innerText(), /Install one of the examples below with one click/);
      const clip = examples.locator('li[data-example="clipmaker"]');
      assert.match(await clip.innerText(), /Clipmaker/);
      assert.match(await clip.innerText(), /Needs ffmpeg\./);
      assert.match(await clip.innerText(), /Heavy: it runs alone among heavy studios/);
      assert.match(await examples.locator('li[data-example="sketchpad"]').innerText(), /Needs nothing else\./);
      // The launcher's link to the editor page.
      assert.equal(await page.getByRole('link', { name: 'Editor' }).getAttribute('href'), '/editor/');
      await shootAll(page, 'launcher-examples-empty');

      await examples.getByRole('button', { name: 'Install Sketchpad' }).click();
      const card = page.locator('li.studio[data-studio="sketchpad"][data-state="installed"]');
      await card.waitFor({ timeout: 60_000 });
      await examples.locator('li[data-example="sketchpad"] [data-example-state="installed"]').waitFor();
      assert.equal(await examples.getByRole('button', { name: 'Install Sketchpad' }).count(), 0, 'installed: no Install any more');
      const studio = await svc.l.studio('sketchpad');
      assert.equal(studio.source, SKETCHPAD, 'installed from the shipped folder');
      await shootAll(page, 'launcher-example-installed');

      // The icon is served without a credential, and nothing on the page answered 400 or more.
      const icon = await page.evaluate(async () => {
        const r = await fetch('/favicon.ico');
        return { status: r.status, type: r.headers.get('content-type') };
      });
      assert.deepEqual(icon, { status: 200, type: 'image/svg+xml' });
      assert.equal((await send(svc.svc.port, { path: '/favicon.ico' })).status, 200);
      assert.equal(await page.locator('link[rel="icon"]').getAttribute('href'), '/favicon.svg');
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('a relative path is answered next to the field with what to type (or the example it names); refusals in words, code on a details line', async () => {
    const { page, errors, close } = await signedInPage(800);
    try {
      const field = page.getByRole('textbox', { name: 'Install a studio from a folder' });
      const install = page.getByRole('button', { name: 'Install', exact: true });
      const fieldError = page.locator('#source-error');
      await page.locator('li[data-example="clipmaker"]').waitFor();

      await field.fill('examples/studios/clipmaker');
      await install.click();
      await fieldError.waitFor();
      assert.match(await fieldError.innerText(), /“examples\/studios\/clipmaker” is the Clipmaker example that comes with Backlot/);
      assert.equal(await field.getAttribute('aria-invalid'), 'true');
      assert.match((await field.getAttribute('aria-describedby'))!, /source-error/);
      assert.equal(await page.locator('.problem').first().isVisible(), false, 'not in the page banner');
      await shootAll(page, 'launcher-path-example');

      await field.fill('my-studios/painter');
      await install.click();
      await fieldError.getByText(/Type the full path of the folder that holds backlot\.json, starting with “\/”, like \//).waitFor();
      assert.doesNotMatch(await fieldError.innerText(), /bad_request/);
      await shootAll(page, 'launcher-path-relative');

      // Typing clears it; a full path the service refuses is told in words, the code on a details line.
      await field.fill('/nonexistent/backlot-studio');
      assert.equal(await fieldError.isVisible(), false);
      await install.click();
      await fieldError.getByText('There is no folder at /nonexistent/backlot-studio.').waitFor();
      assert.match(await fieldError.locator('.error-code').innerText(), /^Details: not_launchable, HTTP 422$/);
      assert.equal(await page.locator('.problem').first().isVisible(), false);
      await shootAll(page, 'launcher-path-refused');

      // The offered example installs with one click.
      await field.fill('examples/studios/clipmaker');
      await install.click();
      await fieldError.getByRole('button', { name: 'Install the Clipmaker example' }).click();
      await page.locator('li.studio[data-studio="clipmaker"][data-state="installed"]').waitFor({ timeout: 60_000 });
      assert.equal(await fieldError.isVisible(), false);
      assert.deepEqual(errors.filter((e) => !e.endsWith('/launcher/studios:install')), [], 'only the refused install answered 4xx');
    } finally {
      await close();
    }
  });

  test('a failing studio says why on its card, with its last lines, Copy details, Retry and a live Console that resumes after a dropped connection', async () => {
    const src = fixture({ id: 'crashy', name: 'Crashy', version: '2.1.0', start: { run: 'node tool.js fail 3' } });
    await svc.l.installOk(src);
    assert.equal((await svc.l.post('/launcher/studios/crashy:start')).status, 200);
    const failed = await svc.l.waitState('crashy', 'failed');
    assert.ok(failed.last_error, 'the service gave a reason');

    const proxy = await dropProxy();
    const { page, close } = await signedInPage(1280, { proxy: { server: `http://127.0.0.1:${proxy.port}`, bypass: '<-loopback>' } });
    try {
      const card = page.locator('li.studio[data-studio="crashy"]');
      await card.locator('[data-reason]').waitFor();
      assert.match(await card.locator('[data-reason]').innerText(), new RegExp(`Why it failed: ${failed.last_error.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      const tail = card.locator('pre.tail');
      await tail.waitFor();
      assert.match(await tail.innerText(), /about to fail/);
      assert.match(await tail.innerText(), /failing on stderr/);

      const copy = card.getByRole('button', { name: 'Copy details' });
      await page.waitForFunction(() => !document.querySelector<HTMLButtonElement>('li.studio[data-studio="crashy"] button.copy')?.disabled);
      await copy.click();
      await card.getByRole('button', { name: 'Copied' }).waitFor();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      for (const part of ['Crashy', '(crashy)', '2.1.0', 'State: failed', `Error: ${failed.last_error}`, 'about to fail']) {
        assert.ok(copied.includes(part), `the details hold ${part}:\n${copied}`);
      }
      await shootAll(page, 'launcher-studio-failed');

      // The console: its output so far, and each start as a section.
      await card.getByRole('button', { name: 'Console' }).click();
      const log = card.locator('.console .log');
      await log.locator('.log-line', { hasText: 'about to fail' }).first().waitFor();
      assert.equal(await log.locator('.log-step').count(), 1);
      assert.equal(await card.getByRole('button', { name: 'Hide console' }).getAttribute('aria-expanded'), 'true');

      // Retry starts it again; the open console follows the new run live.
      await card.getByRole('button', { name: 'Retry: start again' }).click();
      await page.waitForFunction(() => document.querySelectorAll('li.studio[data-studio="crashy"] .console .log-step').length === 2, undefined, { timeout: 30_000 });
      await card.and(page.locator('[data-state="failed"]')).waitFor({ timeout: 30_000 });
      await shootAll(page, 'launcher-studio-console');

      // A ticking studio: live lines, and a dropped connection resumed with no line lost or doubled.
      rewriteManifest(src, { id: 'crashy', name: 'Crashy', version: '2.2.0', start: { run: 'node tick.js --port {port}' } });
      const { writeFileSync } = await import('node:fs');
      writeFileSync(`${src}/tick.js`, TICK_JS);
      const up = await svc.l.post('/launcher/studios/crashy:update', { source: src });
      assert.equal(up.status, 202, up.text);
      assert.equal((await svc.l.waitJob(up.json.id)).state, 'succeeded');
      await svc.l.startOk('crashy');
      await log.locator('.log-line', { hasText: /^\d+tick 5$/ }).waitFor({ timeout: 30_000 });
      // Running: the card links to the studio's origin instead of naming a port.
      const origin = card.locator('a.origin');
      assert.equal(await origin.getAttribute('href'), `http://crashy.localhost:${svc.svc.port}/`);
      assert.equal(await origin.innerText(), `crashy.localhost:${svc.svc.port}/`);
      assert.doesNotMatch(await card.locator('.studio-meta').innerText(), /port \d+/);
      assert.ok(proxy.drop() >= 1, 'the console stream was open');
      await card.locator('.log-view[data-stream="reconnecting"]').waitFor({ timeout: 15_000 });
      await card.locator('.log-view[data-stream="live"]').waitFor({ timeout: 30_000 });
      const seen = await log.locator('.log-line').count();
      await page.waitForFunction((n) => document.querySelectorAll('li.studio[data-studio="crashy"] .console .log-line').length > n + 5, seen, { timeout: 30_000 });
      const ticks = await log.locator('.log-line').evaluateAll((els) => els.map((el) => el.textContent!.replace(/^\d+/, '')).filter((t) => t.startsWith('tick ')));
      const numbers = ticks.map((t) => Number(t.slice(5)));
      assert.deepEqual(numbers, numbers.map((_, i) => i + 1), 'every tick once, in order, across the reconnect');
      await svc.l.stopOk('crashy');
    } finally {
      await close();
      await proxy.close();
    }
  });

  test('a failed install is retried from its job row; the job list is one Tab stop with arrow keys; opening a log keeps the row\'s Cancel in view', async () => {
    const src = fixture({ id: 'flaky', name: 'Flaky', install: [{ name: 'fetch deps', run: 'node tool.js fail 7' }] });
    const first = await svc.l.post('/launcher/studios:install', { source: src });
    assert.equal(first.status, 202);
    assert.equal((await svc.l.waitJob(first.json.id)).state, 'failed');

    const { page, errors, close } = await signedInPage(1280);
    try {
      const row = page.locator(`li.job[data-job="${first.json.id}"]`);
      const retry = row.getByRole('button', { name: `Retry ${first.json.title}` });
      await retry.waitFor();
      // The studio's card offers the same.
      await page.locator('li.studio[data-studio="flaky"]').getByRole('button', { name: 'Retry the install' }).waitFor();
      await shootAll(page, 'launcher-job-failed-retry');
      rewriteManifest(src, { id: 'flaky', name: 'Flaky', install: [{ name: 'fetch deps', run: 'node tool.js print fetched' }] });
      await retry.click();
      await page.locator('li.studio[data-studio="flaky"][data-state="installed"]').waitFor({ timeout: 60_000 });
      const jobs = await svc.l.jobsOf('flaky');
      assert.deepEqual(jobs.map((j) => [j.kind, j.state]), [['install', 'succeeded'], ['install', 'failed']]);
      await page.locator(`li.job[data-job="${jobs[0].id}"][data-state="succeeded"]`).waitFor();
      await row.getByRole('button', { name: `Retried ${first.json.title}` }).waitFor();
      await shootAll(page, 'launcher-job-retried');
      // Retried again from a fresh page: refused in words in the row, the code on a details line.
      await page.reload();
      await retry.click();
      const refusal = row.locator('.field-error');
      await refusal.getByText('Flaky has been installed since; there is nothing to retry.').waitFor();
      assert.equal(await refusal.locator('.error-code').innerText(), 'Details: not_retryable');
      assert.equal(await page.locator('.problem').first().isVisible(), false, 'not in the page banner');

      // One Tab stop: only one row (and its own controls) is in the Tab order.
      const list = page.getByRole('list', { name: 'Jobs, newest first' });
      const tabbable = () =>
        list.evaluate((ul) => {
          const rows = Array.from(ul.children).filter((li) => (li as HTMLElement).dataset.key !== undefined) as HTMLElement[];
          const inOrder = rows.filter((li) => li.tabIndex === 0);
          const stray = rows.filter((li) => li.tabIndex !== 0).flatMap((li) => Array.from(li.querySelectorAll<HTMLElement>('button, a[href], [tabindex]')).filter((el) => el.tabIndex >= 0 && !(el as HTMLButtonElement).disabled));
          return { rows: rows.length, inOrder: inOrder.map((li) => li.dataset.key), stray: stray.length };
        });
      let t = await tabbable();
      assert.ok(t.rows >= 4, `several rows (${t.rows})`);
      assert.equal(t.inOrder.length, 1, JSON.stringify(t));
      assert.equal(t.stray, 0, 'no control of another row is a Tab stop');
      const keys = await list.evaluate((ul) => Array.from(ul.children).map((li) => (li as HTMLElement).dataset.key).filter(Boolean) as string[]);
      await list.locator(`li[data-key="${t.inOrder[0]}"]`).focus();
      const focusedKey = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.key ?? null);
      await page.keyboard.press('Home');
      assert.equal(await focusedKey(), keys[0]);
      await page.keyboard.press('ArrowDown');
      assert.equal(await focusedKey(), keys[1]);
      await page.keyboard.press('ArrowDown');
      assert.equal(await focusedKey(), keys[2]);
      await page.keyboard.press('ArrowUp');
      assert.equal(await focusedKey(), keys[1]);
      await page.keyboard.press('End');
      assert.equal(await focusedKey(), keys[keys.length - 1]);
      t = await tabbable();
      assert.deepEqual(t.inOrder, [keys[keys.length - 1]], 'the Tab stop moved with the focus');
      assert.equal(t.stray, 0);
      // Tab goes into the focused row's controls, Shift+Tab from the row leaves the list.
      await page.keyboard.press('Home');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.closest('li[data-key]')?.getAttribute('data-key')), keys[0]);
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Shift+Tab');
      assert.equal(await page.evaluate(() => !!document.activeElement?.closest('ul.jobs')), false, 'out of the list in one step back');

      // A running job: opening its log brings the log up but keeps its Cancel on screen.
      const slow = fixture({ id: 'slowpoke', install: [{ name: 'wait', run: 'node tool.js sleep 60000' }] });
      const running = await svc.l.post('/launcher/studios:install', { source: slow });
      const jobRow = page.locator(`li.job[data-job="${running.json.id}"]`);
      const cancel = jobRow.getByRole('button', { name: /^Cancel / });
      await cancel.waitFor();
      for (const width of [1280, 800]) {
        await page.setViewportSize({ width, height: 700 });
        await page.evaluate(() => window.scrollTo(0, 0));
        await jobRow.locator('button.job-open').click();
        await page.locator('#job-details .log-view').waitFor();
        const box = (await cancel.boundingBox())!;
        assert.ok(box && box.y >= 0 && box.y + box.height <= 700, `Cancel in view at ${width} px: ${JSON.stringify(box)}`);
        await saveScreenshot(page, `launcher-job-log-open-${width}`, 'light');
        await jobRow.locator('button.job-open').click(); // closes it
      }
      await cancel.click();
      await jobRow.and(page.locator('[data-state="cancelled"]')).waitFor({ timeout: 30_000 });
      assert.deepEqual(errors, [`409 /api/v1/launcher/jobs/${first.json.id}:retry`]);
    } finally {
      await close();
    }
  });

  test('in the desktop app (the preload\'s window.backlot), Browse… opens the folder picker and fills the field; in a browser there is none', async () => {
    const desktop = await signedInPage(1280, {}, () => {
      // The shape main/preload.ts exposes; the picker answers a chosen folder.
      (window as unknown as { backlot: unknown }).backlot = { pickFolder: async () => '/home/me/studios/painter' };
    });
    try {
      const field = desktop.page.getByRole('textbox', { name: 'Install a studio from a folder' });
      await field.fill('some/relative/path');
      await desktop.page.getByRole('button', { name: 'Install', exact: true }).click();
      await desktop.page.locator('#source-error').waitFor();
      await desktop.page.getByRole('button', { name: 'Browse…' }).click();
      await desktop.page.waitForFunction(() => (document.getElementById('source') as HTMLInputElement).value === '/home/me/studios/painter');
      assert.equal(await desktop.page.locator('#source-error').isVisible(), false, 'a picked folder clears the answer');
      await saveScreenshot(desktop.page, 'launcher-desktop-browse', 'light');
    } finally {
      await desktop.close();
    }
    const plain = await signedInPage(1280);
    try {
      assert.equal(await plain.page.getByRole('button', { name: 'Browse…' }).count(), 0);
    } finally {
      await plain.close();
    }
  });

  test('after the event channel reconnects, a studio list read older than the events does not bring an old state back', async () => {
    await svc.l.installOk(fixture({ id: 'merger', name: 'Merger' }));
    const proxy = await dropProxy(/\/launcher\/events$/);
    const { page, errors, close } = await signedInPage(1280, { proxy: { server: `http://127.0.0.1:${proxy.port}`, bypass: '<-loopback>' } });
    const listReads: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/launcher/studios?')) listReads.push(r.url());
    });
    try {
      const card = page.locator('li.studio[data-studio="merger"]');
      await card.and(page.locator('[data-state="installed"]')).waitFor();
      // Once the channel reconnects, every read of the list (the reload's, and the gallery's, which
      // reads it too) is answered as the list was at the first of them (installed), but late.
      let dropped = false;
      let reconnecting = false;
      page.on('request', (r) => {
        if (dropped && r.url().endsWith('/api/v1/launcher/events')) reconnecting = true;
      });
      const released: (() => void)[] = [];
      let stale: { status: number; text: string } | null = null;
      let releasedAll = false;
      let asked = false;
      await page.route(/\/api\/v1\/launcher\/studios\?limit=500$/, async (route) => {
        if (!reconnecting || releasedAll) return route.continue();
        // Read as the page asked it, now (Playwright's own fetch cannot pass the test's proxy).
        stale ??= await svc.l.get('/launcher/studios?limit=500');
        asked = true;
        await new Promise<void>((resolve) => released.push(resolve));
        await route.fulfill({ status: stale.status, contentType: 'application/json', body: stale.text });
      });
      const held = () => {
        releasedAll = true;
        for (const r of released) r();
      };
      // The channel connects after the first read: drop it once it is open (the service's opening
      // line went through; a request dropped before that is a failed connect, another case).
      for (let waited = 0; proxy.drop({ answered: true }) === 0; waited += 50) {
        if (waited > 10_000) throw new Error('the event channel never opened');
        await new Promise((r) => setTimeout(r, 50));
      }
      dropped = true;
      for (let waited = 0; !asked; waited += 50) {
        if (waited > 20_000) throw new Error(`the list was not read again after the reconnect: ${JSON.stringify(listReads)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      // Meanwhile the studio starts: its events arrive on the new connection before the old list.
      await svc.l.startOk('merger');
      await card.and(page.locator('[data-state="running"]')).waitFor({ timeout: 30_000 });
      const answered = page.waitForResponse(/\/api\/v1\/launcher\/studios\?limit=500$/);
      held();
      await answered;
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      assert.equal(await card.getAttribute('data-state'), 'running', 'the newer event wins over the older list');
      await page.unroute(/\/api\/v1\/launcher\/studios\?limit=500$/);
      await svc.l.stopOk('merger');
      await card.and(page.locator('[data-state="installed"]')).waitFor({ timeout: 30_000 });
      assert.deepEqual(errors, []);
    } finally {
      await close();
      await proxy.close();
    }
  });

  test('a heavy studio says in words what keeps it from starting', async () => {
    const heavy = fixture({ id: 'bigone', name: 'Big One', heavy: true });
    await svc.l.installOk(heavy);
    // Clipmaker (heavy) was installed by an earlier test.
    await svc.l.startOk('bigone');
    const { page, close } = await signedInPage(1280);
    try {
      const card = page.locator('li.studio[data-studio="clipmaker"]');
      const why = card.locator('p.blocked');
      await why.waitFor();
      assert.equal(
        await why.innerText(),
        'Clipmaker is a heavy studio, and Big One (also heavy) is running: only one heavy studio runs at a time, so both don\'t fill your memory. Stop Big One to start Clipmaker.',
      );
      assert.equal(await card.getByRole('button', { name: 'Start' }).isDisabled(), true);
      await shootAll(page, 'launcher-heavy-blocked');
      await svc.l.stopOk('bigone');
      await why.waitFor({ state: 'detached' });
      assert.equal(await card.getByRole('button', { name: 'Start' }).isDisabled(), false);
    } finally {
      await close();
    }
  });
});
