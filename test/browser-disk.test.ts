import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, newContext, saveScreenshot, SCHEMES, watchPageErrors } from './helpers/browser';
import { client, send } from './helpers/http';
import { startLauncher, type LauncherService } from './helpers/launcher';

/**
 * The launcher's Disk panel (renderer/README.md "Launcher: jobs and disk") and its route
 * `GET /launcher/disk`: what stored assets take in all and per studio (an
 * asset two studios share counts in both), what reclaim would free (the
 * preview), a confirmation dialog that lists exactly what goes, a changed set
 * shown again before anything goes (409 `preview_changed`), then the bytes
 * actually freed. Screenshots in light and dark, 1280 and 800 px.
 */

describe('launcher UI: disk', () => {
  let svc: LauncherService;
  let browser: Browser;
  let painter: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;
  const ids: Record<string, string> = {};
  const sizes: Record<string, number> = {};
  const items: Record<string, string> = {};

  async function uploadAs(c: ReturnType<typeof client>, token: string, name: string, bytes: Buffer): Promise<void> {
    const res = await send(svc.svc.port, { method: 'POST', path: '/api/v1/assets?kind=other&filename=x.bin', token, raw: bytes, contentType: 'application/octet-stream' });
    assert.ok(res.status === 201 || res.status === 200, res.text);
    ids[name] = res.json.id;
    sizes[name] = res.json.size;
    void c;
  }

  before(async () => {
    svc = await startLauncher();
    browser = await launchChromium();
    const pt = svc.svc.studio('painter', ['assets', 'gallery']);
    const ot = svc.svc.studio('other', ['assets', 'gallery']);
    painter = client(svc.svc.port, pt);
    other = client(svc.svc.port, ot);
    await uploadAs(painter, pt, 'kept', Buffer.alloc(3000, 1));
    await uploadAs(painter, pt, 'dropped', Buffer.alloc(5000, 2));
    await uploadAs(painter, pt, 'later', Buffer.alloc(7000, 3));
    await uploadAs(other, ot, 'kept', Buffer.alloc(3000, 1)); // the same bytes: `other` is granted the same asset
    for (const name of ['kept', 'dropped', 'later']) {
      const r = await painter.post('/gallery/items', { asset_id: ids[name], title: name });
      assert.equal(r.status, 201, r.text);
      items[name] = r.json.id;
    }
    assert.equal((await painter.delete(`/gallery/items/${items.dropped}`)).status, 204);
  });
  after(async () => {
    await browser?.close();
    await svc?.svc.stop();
  });

  async function signedInPage(width = 1280): Promise<{ page: Page; errors: string[]; close(): Promise<void> }> {
    const context = await newContext(browser, 'light', { viewport: { width, height: 900 } });
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    const r = svc.svc.cli(['login-url']);
    assert.equal(r.code, 0, r.stderr);
    await page.goto(r.stdout.trim());
    await page.getByRole('heading', { name: 'Disk' }).waitFor();
    await page.locator('.disk .reclaimable').waitFor();
    return { page, errors, close: () => context.close() };
  }

  async function shoot(page: Page, name: string): Promise<void> {
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      await saveScreenshot(page, name, scheme);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }

  test('GET /launcher/disk: totals, pinned, per studio (shared assets in both); the launcher credential only', async () => {
    const r = await svc.l.get('/launcher/disk');
    assert.equal(r.status, 200, r.text);
    const all = sizes.kept! + sizes.dropped! + sizes.later!;
    assert.deepEqual(r.json, {
      assets: {
        count: 3,
        bytes: all,
        pinned: { count: 0, bytes: 0 },
        unread: { count: 0, bytes: 0 },
        studios: [
          { studio_id: 'other', count: 1, bytes: sizes.kept },
          { studio_id: 'painter', count: 3, bytes: all },
        ],
      },
    });
    assert.equal((await svc.l.call('GET', '/launcher/disk', undefined, null)).status, 401);
    assert.notEqual((await painter.get('/launcher/disk')).status, 200, 'a studio token does not read it');
  });

  test('the panel shows usage and the preview; Reclaim… lists what goes, shows a changed set again, then what was freed', async () => {
    for (const width of [1280, 800]) {
      const { page, close } = await signedInPage(width);
      try {
        await shoot(page, width === 800 ? 'disk-800-panel' : 'disk-panel');
      } finally {
        await close();
      }
    }
    const { page, errors, close } = await signedInPage(1280);
    try {
      const panel = page.getByRole('region', { name: 'Disk' });
      assert.equal(await panel.locator('[data-total-bytes]').getAttribute('data-total-bytes'), String(sizes.kept! + sizes.dropped! + sizes.later!));
      assert.match(await panel.locator('tr[data-studio="painter"]').innerText(), /3 assets/);
      assert.match(await panel.locator('tr[data-studio="other"]').innerText(), /1 asset/);
      assert.equal(await panel.locator('.reclaimable').getAttribute('data-reclaimable-bytes'), String(sizes.dropped));

      // The dialog lists exactly what goes; keeping them changes nothing.
      await panel.getByRole('button', { name: 'Reclaim…' }).click();
      let dialog = page.getByRole('dialog', { name: 'Reclaim disk space?' });
      await dialog.waitFor();
      assert.deepEqual(await dialog.getByRole('list', { name: 'Assets that go' }).locator('li').allInnerTexts(), [ids.dropped]);
      assert.match(await dialog.innerText(), /4\.9 KiB are freed: the files of 1 asset/);
      assert.match(await dialog.innerText(), /1 deleted gallery item/);
      await shoot(page, 'disk-reclaim-dialog');
      await dialog.getByRole('button', { name: 'Keep them' }).click();
      await dialog.waitFor({ state: 'detached' });
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Reclaim…', 'focus back on the button');
      assert.equal((await painter.get(`/assets/${ids.dropped}`)).status, 200);

      // The set changes while the dialog is open: the confirm shows the new set and reclaims nothing yet.
      await panel.getByRole('button', { name: 'Reclaim…' }).click();
      dialog = page.getByRole('dialog', { name: 'Reclaim disk space?' });
      await dialog.waitFor();
      assert.equal((await painter.delete(`/gallery/items/${items.later}`)).status, 204);
      await dialog.getByRole('button', { name: 'Reclaim', exact: true }).click();
      await dialog.getByRole('alert').filter({ hasText: 'changed since the preview' }).waitFor();
      assert.deepEqual((await dialog.getByRole('list', { name: 'Assets that go' }).locator('li').allInnerTexts()).sort(), [ids.dropped, ids.later].sort());
      assert.equal((await painter.get(`/assets/${ids.dropped}`)).status, 200, 'nothing reclaimed yet');
      await shoot(page, 'disk-reclaim-changed');

      await dialog.getByRole('button', { name: 'Reclaim', exact: true }).click();
      await dialog.waitFor({ state: 'detached' });
      const result = panel.getByRole('status').filter({ hasText: 'Reclaimed 2 assets' });
      await result.waitFor();
      assert.equal(await result.getAttribute('data-freed'), String(sizes.dropped! + sizes.later!));
      await panel.locator('.reclaimable', { hasText: 'Nothing to reclaim' }).waitFor();
      assert.equal(await panel.locator('[data-total-bytes]').getAttribute('data-total-bytes'), String(sizes.kept));
      assert.equal(await panel.getByRole('button', { name: 'Reclaim…' }).isDisabled(), true);
      for (const name of ['dropped', 'later']) assert.equal((await painter.get(`/assets/${name === 'dropped' ? ids.dropped : ids.later}`)).status, 410);
      assert.equal((await painter.get(`/assets/${ids.kept}`)).status, 200);
      await shoot(page, 'disk-reclaimed');
      assert.deepEqual(errors, ['409 /api/v1/launcher/assets:reclaim'], 'only the expected preview_changed');
    } finally {
      await close();
    }
  });
});
