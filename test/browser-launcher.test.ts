import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { cancelJobFromRow, launchChromium, newContext, saveScreenshot, SCHEMES, watchPageErrors } from './helpers/browser';
import { send } from './helpers/http';
import { fixture, SKETCHPAD, startLauncher, type LauncherService } from './helpers/launcher';

/**
 * The launcher UI (renderer/launcher, renderer/README.md) in real Chromium against the
 * real service: signed out it shows how to sign in and no data; signed in, a
 * person installs sketchpad from a folder path, starts, opens, stops and
 * uninstalls it (through the dialog), and cancels a slow install from the jobs
 * panel. Screenshots in light and dark go to test-results/.
 */

describe('launcher UI', () => {
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

  async function signedInPage(scheme: 'light' | 'dark' = 'light', width = 1280): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
    const context = await newContext(browser, scheme, { viewport: { width, height: 900 } });
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    const r = svc.svc.cli(['login-url']);
    assert.equal(r.code, 0, r.stderr);
    await page.goto(r.stdout.trim());
    await page.getByRole('heading', { name: 'Studios' }).waitFor();
    return { page, errors, close: () => context.close() };
  }

  test('signed out: the page says how to sign in and shows no data', async () => {
    const context = await newContext(browser);
    try {
      const page = await context.newPage();
      const res = await page.goto(`http://127.0.0.1:${svc.svc.port}/`);
      assert.equal(res?.status(), 200);
      const text = await page.locator('body').innerText();
      assert.match(text, /backlot login-url/);
      assert.doesNotMatch(text, /Studios|Jobs/);
      assert.deepEqual(await context.cookies(), []);
      // Without the credential's header the API answers nothing.
      assert.equal((await send(svc.svc.port, { path: '/api/v1/launcher/studios' })).status, 401);
    } finally {
      await context.close();
    }
  });

  test('the page is served with a strict policy and loads without a single error', async () => {
    const home = await send(svc.svc.port, { path: '/', headers: { Cookie: `backlot_launcher=${svc.l.cred}` } });
    assert.equal(home.status, 200);
    const csp = String(home.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
    assert.match(home.text, /<script src="\/ui\/launcher\.js" defer><\/script>/);
    assert.doesNotMatch(home.text, /<script>|<style>|style="/, 'no inline code');
    const js = await send(svc.svc.port, { path: '/ui/launcher.js' });
    assert.equal(js.status, 200);
    assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.equal(js.headers['x-content-type-options'], 'nosniff');
    assert.equal((await send(svc.svc.port, { path: '/ui/launcher.js', headers: { 'If-None-Match': String(js.headers.etag) } })).status, 304);
    const traversal = await send(svc.svc.port, { path: '/ui/../package.json' });
    assert.notEqual(traversal.status, 200);
    assert.doesNotMatch(traversal.text, /"name": "backlot"/);
    assert.equal((await send(svc.svc.port, { path: '/ui/other.js' })).status, 401, 'only the built files: anything else is the API\'s 401-before-404');
    assert.equal((await send(svc.svc.port, { path: '/ui/launcher.js', headers: { Host: `sketchpad.localhost:${svc.svc.port}` } })).status !== 200, true);

    const { page, errors, close } = await signedInPage();
    try {
      await page.getByRole('heading', { name: 'Jobs' }).waitFor();
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('install sketchpad from a folder, start, open, stop, uninstall through the dialog', async () => {
    const { page, errors, close } = await signedInPage();
    try {
      await page.getByRole('textbox', { name: 'Install a studio from a folder' }).fill(SKETCHPAD);
      await page.getByRole('button', { name: 'Install', exact: true }).click();
      const row = page.locator('li.studio[data-studio="sketchpad"]');
      await row.and(page.locator('[data-state="installed"]')).waitFor({ timeout: 60_000 });
      await page.locator('li.job[data-state="succeeded"]').filter({ hasText: 'install' }).first().waitFor();

      await row.getByRole('button', { name: 'Start' }).click();
      await row.and(page.locator('[data-state="running"]')).waitFor({ timeout: 30_000 });
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        await saveScreenshot(page, 'launcher-running', scheme);
      }
      await page.emulateMedia({ colorScheme: 'light' });
      const open = row.getByRole('link', { name: 'Open' });
      assert.equal(await open.getAttribute('href'), `http://sketchpad.localhost:${svc.svc.port}/`);
      const [studioPage] = await Promise.all([page.context().waitForEvent('page'), open.click()]);
      await studioPage.waitForLoadState();
      assert.equal(new URL(studioPage.url()).host, `sketchpad.localhost:${svc.svc.port}`);
      assert.equal(await studioPage.evaluate(() => window.opener), null, 'no opener handle on the launcher');
      await studioPage.close();

      await row.getByRole('button', { name: 'Stop' }).click();
      await row.and(page.locator('[data-state="installed"]')).waitFor({ timeout: 30_000 });

      await row.getByRole('button', { name: 'Uninstall…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Uninstall Sketchpad?' });
      await dialog.waitFor();
      assert.match(await dialog.innerText(), /stays unless you also purge/);
      assert.match(await dialog.innerText(), /gallery items, records, key-value documents \(shared ones stay\), sessions, sequences, library files, and its stage and data folders are deleted/);
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        await saveScreenshot(page, 'launcher-uninstall-dialog', scheme);
      }
      await dialog.getByRole('button', { name: 'Uninstall' }).click();
      await row.waitFor({ state: 'detached', timeout: 30_000 });
      assert.equal(await svc.l.studio('sketchpad'), null);
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('update from a folder: new capabilities are listed and need approval; approved, the new version is installed', async () => {
    const v1 = fixture({ id: 'grower', name: 'Grower', version: '1.0.0', capabilities: ['kv'] });
    const v2 = fixture({ id: 'grower', name: 'Grower', version: '2.0.0', capabilities: ['kv', 'gallery', 'assets'] });
    const { page, errors, close } = await signedInPage('light', 800);
    try {
      await page.getByRole('textbox', { name: 'Install a studio from a folder' }).fill(v1);
      await page.getByRole('button', { name: 'Install', exact: true }).click();
      const row = page.locator('li.studio[data-studio="grower"]');
      await row.and(page.locator('[data-state="installed"]')).waitFor({ timeout: 60_000 });
      await row.getByRole('button', { name: 'Update…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Update Grower' });
      await dialog.waitFor();
      const source = dialog.getByRole('textbox', { name: 'Update from the folder' });
      assert.equal(await source.inputValue(), v1, 'the last source is offered');
      await source.fill(v2);
      await dialog.getByRole('button', { name: 'Update', exact: true }).click();
      const asked = dialog.getByRole('group', { name: 'The new version asks for more' });
      await asked.waitFor();
      const text = await asked.innerText();
      assert.match(text, /gallery: add to and read its gallery/);
      assert.match(text, /assets: store files/);
      assert.doesNotMatch(text, /kv/, 'only the added capabilities');
      assert.equal((await svc.l.studio('grower'))?.version, '1.0.0', 'nothing happens before the approval');
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        await saveScreenshot(page, 'launcher-800-update-approval', scheme);
      }
      await page.emulateMedia({ colorScheme: 'light' });
      await dialog.getByRole('button', { name: 'Approve and update' }).click();
      await dialog.waitFor({ state: 'detached' });
      await row.filter({ hasText: '2.0.0' }).waitFor({ timeout: 60_000 });
      const studio = await svc.l.studio('grower');
      assert.deepEqual([...(studio?.capabilities ?? [])].sort(), ['assets', 'gallery', 'kv']);
      await page.locator('li.job[data-state="succeeded"]').filter({ hasText: 'update' }).first().waitFor();
      // The one refusal is the service asking for the approval.
      assert.deepEqual(errors, ['409 /api/v1/launcher/studios/grower:update']);
    } finally {
      await close();
    }
  });

  test('a slow install shows a progress bar; Cancel says Cancelling… at once and the row ends cancelled', async () => {
    const src = fixture({ id: 'slowpoke', name: 'Slowpoke', install: [{ name: 'wait', run: 'node tool.js sleep 30000' }] });
    const { page, errors, close } = await signedInPage('light', 800);
    try {
      await page.getByRole('textbox', { name: 'Install a studio from a folder' }).fill(src);
      await page.getByRole('button', { name: 'Install', exact: true }).click();
      const job = page.locator('li.job[data-state="running"]').filter({ hasText: 'slowpoke' }).first();
      await job.waitFor({ timeout: 30_000 });
      const bar = job.getByRole('progressbar');
      await bar.waitFor();
      const den = await bar.getAttribute('aria-valuenow');
      // Indeterminate (no total known) carries no aria-valuenow; a determinate one carries a number.
      assert.ok(den === null || /^\d+$/.test(den), String(den));
      for (const scheme of SCHEMES) {
        await page.emulateMedia({ colorScheme: scheme });
        await saveScreenshot(page, 'launcher-800-install-running', scheme);
      }
      // By id: once cancelled the row no longer matches data-state="running" (the cancel may be over in ms).
      const id = await job.getAttribute('data-job');
      const shownAfter = await cancelJobFromRow(page, id!);
      assert.ok(shownAfter < 1000, `Cancelling… within 1 s (${shownAfter} ms)`);
      await page.locator(`li.job[data-job="${id}"][data-state="cancelled"]`).waitFor({ timeout: 30_000 });
      assert.equal(await page.locator(`li.job[data-job="${id}"]`).getByRole('progressbar').count(), 0, 'no progressbar on a finished job');
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });
});
