import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import sharp from 'sharp';
import { upload } from './helpers/assets';
import { launchChromium, newContext, RESULTS_DIR, saveScreenshot, SCHEMES, signIn, watchPageErrors, type Scheme } from './helpers/browser';
import { client } from './helpers/http';
import { dropProxy } from './helpers/drop-proxy';
import { fixture, sleep, startLauncher, type LauncherService } from './helpers/launcher';

/**
 * The launcher's side of handoffs in real Chromium against the real service
 * (renderer/README.md "Launcher: requests and permissions", renderer/launcher/handoffs/): a request a
 * studio makes shows as a card within a second with no reload, in words (who sends
 * what to whom, the note, the access the recipient gains) with thumbnails; Decline,
 * Allow once, Always allow (the rule shows under Permissions, Revoke removes it),
 * Allow and open (the stopped recipient is started and a new tab opens at its
 * receive address); a request withdrawn under the person's click says so next to the
 * card; an item's details list its handoffs; the whole path by keyboard. Screenshots
 * in light and dark at 1280 and 800 px go to test-results/.
 */

const SENDER_CAPS = ['assets', 'gallery', 'kv'];

function colourPng(seed: number): Promise<Buffer> {
  const [r, g, b] = [Math.round(128 + 100 * Math.sin(seed)), Math.round(128 + 100 * Math.sin(seed + 2)), Math.round(128 + 100 * Math.sin(seed + 4))];
  return sharp({ create: { width: 120, height: 80, channels: 3, background: { r, g, b } } }).png().toBuffer();
}

describe('handoffs in the launcher', { timeout: 300_000 }, () => {
  let svc: LauncherService;
  let browser: Browser;
  let token: string;
  let seed = 0;
  let recipientOrigin: string;

  const sender = () => client(svc.svc.port, token);
  /** A fresh image of the sender's (each handoff offers its own, so none is `already_exists`). */
  async function image(): Promise<string> {
    const r = await upload(svc.svc.port, token, await colourPng(++seed), `kind=image&filename=drawing-${seed}.png`, 'image/png');
    assert.ok([200, 201].includes(r.status), r.body.toString());
    return r.json.id as string;
  }
  async function item(title: string): Promise<any> {
    const r = await sender().post('/gallery/items', { asset_id: await image(), title });
    assert.equal(r.status, 201, r.text);
    return r.json;
  }
  async function offer(body: Record<string, unknown> = {}): Promise<any> {
    const r = await sender().post('/handoffs', { to: 'clipmaker', asset_ids: [await image()], ...body });
    assert.equal(r.status, 201, r.text);
    return r.json;
  }
  async function handoff(id: string): Promise<any> {
    const r = await svc.l.get(`/launcher/handoffs/${id}`);
    assert.equal(r.status, 200, r.text);
    return r.json;
  }
  async function rules(): Promise<any[]> {
    const r = await svc.l.get('/launcher/handoff-rules');
    assert.equal(r.status, 200, r.text);
    return r.json.items;
  }

  before(async () => {
    const launching = launchChromium();
    launching.catch(() => undefined);
    svc = await startLauncher();
    await svc.l.installOk(fixture({ id: 'sketchpad', name: 'Sketchpad', capabilities: SENDER_CAPS }));
    const recipient = await svc.l.installOk(fixture({ id: 'clipmaker', name: 'Clipmaker', capabilities: ['assets'], accepts: { kinds: ['image'], path: '/receive' } }));
    recipientOrigin = recipient.origin;
    assert.deepEqual(recipient.accepts, { kinds: ['image'], path: '/receive' });
    // A recipient whose process exits before it is ready: "Allow and open" cannot open it.
    await svc.l.installOk(fixture({ id: 'brokenmaker', name: 'Brokenmaker', capabilities: ['assets'], accepts: { kinds: ['image'] }, start: { run: 'node tool.js fail 3' } }));
    token = svc.svc.token('sketchpad', SENDER_CAPS);
    browser = await launching;
  }, { timeout: 120_000 });

  after(async () => {
    await browser?.close();
    await svc?.svc.stop();
  }, { timeout: 30_000 });

  async function signedIn(scheme: Scheme = 'light', width = 1280): Promise<{ page: Page; context: BrowserContext; errors: string[]; close(): Promise<void> }> {
    const context = await newContext(browser, scheme, { viewport: { width, height: 900 } });
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    await signIn(page, svc.svc.cli(['login-url']).stdout);
    await page.locator('#requests').waitFor();
    // The pending list is read once the event stream is open: after that nothing can be missed.
    await page.waitForFunction(() => !document.querySelector('#requests')?.textContent?.includes('Loading'));
    await page.locator('#requests .requests-empty, #requests li.request').first().waitFor();
    return { page, context, errors, close: () => context.close() };
  }
  const region = (page: Page) => page.getByRole('region', { name: 'Requests' });
  const card = (page: Page, id: string) => page.locator(`#requests li.request[data-handoff="${id}"]`);
  /** Every pending handoff answered, so each test starts with none. */
  async function declineAll(): Promise<void> {
    const r = await svc.l.get('/launcher/handoffs?state=pending&limit=100');
    for (const ho of r.json.items) await svc.l.post(`/launcher/handoffs/${ho.id}:decline`);
  }

  test('a request shows within 1 s with no reload: who sends what to whom, thumbnails, the note, the access; Decline', async () => {
    await declineAll();
    const { page, errors, close } = await signedIn();
    try {
      await page.evaluate(() => ((window as any).__sameLoad = true));
      const sunset = await item('Sunset study');
      const sent = Date.now();
      const ho = await offer({ asset_ids: [sunset.asset_id], item_id: sunset.id, note: 'The sky layer is on top; crop as you like.' });
      assert.equal(ho.state, 'pending');
      await card(page, ho.id).waitFor({ timeout: 5000 });
      const took = Date.now() - sent;
      assert.ok(took < 1000, `the card took ${took} ms`);
      assert.equal(await page.evaluate(() => (window as any).__sameLoad), true, 'the page was not reloaded');
      const c = region(page).locator(`li[data-handoff="${ho.id}"]`);
      await c.getByRole('heading', { name: 'Sketchpad wants to send “Sunset study” to Clipmaker' }).waitFor();
      await c.getByText('Clipmaker will be able to read 1 image from Sketchpad.', { exact: true }).waitFor();
      await c.getByText('The sky layer is on top; crop as you like.').waitFor();
      // The thumbnail loads (a media URL, as the gallery's).
      await page.waitForFunction((id) => {
        const img = document.querySelector<HTMLImageElement>(`li.request[data-handoff="${id}"] .request-thumb img`);
        return !!img && img.complete && img.naturalWidth > 0;
      }, ho.id);
      for (const name of ['Allow and open', 'Allow once', 'Always allow from Sketchpad to Clipmaker', 'Decline']) {
        assert.equal(await c.getByRole('button', { name, exact: true }).count(), 1, name);
      }
      assert.match((await c.getByRole('button', { name: 'Allow and open' }).getAttribute('class')) ?? '', /primary/);
      await c.getByRole('button', { name: 'Decline' }).click();
      await c.waitFor({ state: 'detached' });
      assert.equal((await handoff(ho.id)).state, 'declined');
      await region(page).getByText('No requests.').waitFor();

      // With a session: the recipient also gets its own copy of it, named as the launcher reads it (`session_name`).
      const session = await sender().post('/sessions', { name: 'Evening', state: { layers: 3 } });
      assert.equal(session.status, 201, session.text);
      const withSession = await offer({ session_id: session.json.id });
      await card(page, withSession.id)
        .getByText('Clipmaker will be able to read 1 image from Sketchpad and get its own copy of the session “Evening”.', { exact: true })
        .waitFor();
      await card(page, withSession.id).getByRole('button', { name: 'Decline' }).click();
      await card(page, withSession.id).waitFor({ state: 'detached' });

      // A note that only repeats the item's title (Sketchpad sends the title) is not said twice.
      const echo = await offer({ asset_ids: [sunset.asset_id], item_id: sunset.id, note: 'Sunset study' });
      await card(page, echo.id).getByRole('heading', { name: 'Sketchpad wants to send “Sunset study” to Clipmaker' }).waitFor();
      assert.equal(await card(page, echo.id).locator('.request-note').count(), 0);
      await card(page, echo.id).getByRole('button', { name: 'Decline' }).click();
      await card(page, echo.id).waitFor({ state: 'detached' });
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('Allow once approves that request only; Always allow adds a rule the Permissions view shows, and Revoke removes it', async () => {
    await declineAll();
    const { page, errors, close } = await signedIn();
    try {
      const permissions = page.getByRole('region', { name: 'Permissions' });
      await permissions.getByText('No standing permissions.', { exact: false }).waitFor();
      const once = await offer();
      await card(page, once.id).getByRole('button', { name: 'Allow once' }).click();
      await card(page, once.id).waitFor({ state: 'detached' });
      assert.equal((await handoff(once.id)).state, 'approved');
      assert.deepEqual(await rules(), []);

      const always = await offer({ note: 'and keep sending' });
      await card(page, always.id).getByRole('button', { name: 'Always allow from Sketchpad to Clipmaker' }).click();
      await card(page, always.id).waitFor({ state: 'detached' });
      assert.equal((await handoff(always.id)).state, 'approved');
      assert.deepEqual((await rules()).map((r) => `${r.from}>${r.to}`), ['sketchpad>clipmaker']);
      const rule = permissions.locator('li.rule');
      await rule.getByText('Sketchpad → Clipmaker', { exact: false }).waitFor();
      assert.match(await rule.innerText(), /Sketchpad → Clipmaker, always allowed since .+/);
      // Allowed always: the next one needs no answer and shows no card.
      const next = await offer();
      assert.equal(next.state, 'approved');
      await sleep(300);
      assert.equal(await card(page, next.id).count(), 0);

      await rule.getByRole('button', { name: 'Revoke' }).click();
      await permissions.getByText('No standing permissions.', { exact: false }).waitFor();
      assert.deepEqual(await rules(), []);
      const asksAgain = await offer();
      assert.equal(asksAgain.state, 'pending');
      await card(page, asksAgain.id).waitFor({ timeout: 5000 });
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('Allow and open starts the stopped recipient and opens a new tab at its receive address', async () => {
    await declineAll();
    assert.equal((await svc.l.studio('clipmaker')).state, 'installed');
    const { page, context, errors, close } = await signedIn();
    try {
      const ho = await offer();
      const c = card(page, ho.id);
      await c.waitFor();
      // Every progress line the card shows, in order.
      await page.evaluate((id) => {
        const seen: string[] = [];
        (window as any).__progress = seen;
        new MutationObserver(() => {
          const text = document.querySelector(`li.request[data-handoff="${id}"] .request-progress`)?.textContent;
          if (text && seen[seen.length - 1] !== text) seen.push(text);
        }).observe(document.body, { subtree: true, childList: true, characterData: true });
      }, ho.id);
      const opened = context.waitForEvent('page');
      await c.getByRole('button', { name: 'Allow and open' }).click();
      const tab = await opened;
      const want = `${recipientOrigin}/receive?handoff=${ho.id}`;
      await tab.waitForURL(want, { timeout: 60_000 });
      assert.equal(tab.url(), want);
      assert.match(await tab.locator('body').innerText(), /^clipmaker 1\.0\.0/);
      assert.equal(await tab.evaluate(() => window.opener), null, 'the studio page holds no handle on the launcher');
      assert.equal((await svc.l.studio('clipmaker')).state, 'running');
      assert.equal((await handoff(ho.id)).state, 'approved');
      await c.waitFor({ state: 'detached' });
      const progress: string[] = await page.evaluate(() => (window as any).__progress);
      assert.ok(progress.includes('Starting Clipmaker…'), JSON.stringify(progress));
      await tab.close();

      // Already running: it opens at once, nothing is started.
      const again = await offer();
      const opened2 = context.waitForEvent('page');
      await card(page, again.id).getByRole('button', { name: 'Allow and open' }).click();
      const tab2 = await opened2;
      await tab2.waitForURL(`${recipientOrigin}/receive?handoff=${again.id}`, { timeout: 15_000 });
      await tab2.close();
      assert.deepEqual(errors, []);
    } finally {
      await close();
      await svc.l.stopOk('clipmaker');
      await svc.l.waitState('clipmaker', 'installed');
    }
  });

  test('Allow and open whose recipient fails to start closes the tab and says why; Open tries again', async () => {
    await declineAll();
    const { page, context, errors, close } = await signedIn();
    try {
      const ho = await offer({ to: 'brokenmaker' });
      const c = card(page, ho.id);
      await c.waitFor();
      const opened = context.waitForEvent('page');
      await c.getByRole('button', { name: 'Allow and open' }).click();
      const tab = await opened;
      await tab.waitForEvent('close', { timeout: 30_000 });
      const alert = c.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.innerText(), /^Brokenmaker did not start: The studio's process exited with code 3 before it was ready/);
      assert.equal((await handoff(ho.id)).state, 'approved', 'the approval stands');
      await c.getByText('now allowed, not opened yet', { exact: false }).waitFor();
      // Open tries the start again (and fails the same way: a tab opens and closes again).
      const reopened = context.waitForEvent('page');
      await c.getByRole('button', { name: 'Open Brokenmaker' }).click();
      await (await reopened).waitForEvent('close', { timeout: 30_000 });
      await c.getByRole('alert').waitFor();
      await c.getByRole('button', { name: 'Dismiss' }).click();
      await c.waitFor({ state: 'detached' });
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('a burst of requests shows in one go; after the event stream reconnects, what changed meanwhile is read again', async () => {
    await declineAll();
    const proxy = await dropProxy(/\/launcher\/events$/);
    const context = await newContext(browser, 'light', { proxy: { server: `http://127.0.0.1:${proxy.port}`, bypass: '<-loopback>' } });
    try {
      const page = await context.newPage();
      const errors = watchPageErrors(page);
      await signIn(page, svc.svc.cli(['login-url']).stdout);
      await page.locator('#requests .requests-empty').waitFor();
      // Twenty at once (a studio's quota of pending requests).
      const burst = await Promise.all(Array.from({ length: 20 }, () => offer()));
      const sent = Date.now();
      await page.waitForFunction((n) => document.querySelectorAll('#requests li.request').length === n, burst.length, { timeout: 5000 });
      assert.ok(Date.now() - sent < 2000, `the burst took ${Date.now() - sent} ms`);
      assert.equal(await region(page).locator('.requests-count').innerText(), '20 waiting');
      // The stream drops and cannot come back for a while: meanwhile one is withdrawn, one declined elsewhere.
      let blocked = true;
      await page.route('**/api/v1/launcher/events', (route) => (blocked ? route.abort() : route.continue()));
      proxy.drop();
      await page.waitForTimeout(300);
      assert.equal((await sender().delete(`/handoffs/${burst[0].id}`)).status, 204);
      assert.equal((await svc.l.post(`/launcher/handoffs/${burst[1].id}:decline`)).status, 200);
      await sleep(500);
      assert.equal(await card(page, burst[0].id).count(), 1, 'no event could tell the page yet');
      blocked = false;
      await card(page, burst[0].id).waitFor({ state: 'detached', timeout: 15_000 });
      await card(page, burst[1].id).waitFor({ state: 'detached', timeout: 5000 });
      assert.equal(await page.locator('#requests li.request').count(), 18);
      assert.deepEqual(errors.filter((e) => !/launcher\/events/.test(e)), []);
    } finally {
      await context.close();
      await proxy.close();
      await declineAll();
    }
  });

  test('a request withdrawn under the click says so in words next to its card', async () => {
    await declineAll();
    const { page, errors, close } = await signedIn();
    try {
      const ho = await offer();
      const c = card(page, ho.id);
      await c.waitFor();
      // The sender withdraws it while the person's approval is on its way.
      await page.route(`**/api/v1/launcher/handoffs/${ho.id}:approve`, async (route) => {
        const r = await sender().delete(`/handoffs/${ho.id}`);
        assert.equal(r.status, 204, r.text);
        await route.continue();
      });
      await c.getByRole('button', { name: 'Allow once' }).click();
      await c.getByRole('alert').getByText('This request was already answered or withdrawn.').waitFor();
      assert.match(await c.getByRole('alert').innerText(), /409 conflict/);
      await c.getByText('now withdrawn by Sketchpad', { exact: false }).waitFor();
      assert.equal(await c.getByRole('button', { name: 'Allow once' }).count(), 0, 'no answer is offered any more');
      await saveScreenshot(page, 'handoffs-conflict-1280', 'light');
      await c.getByRole('button', { name: 'Dismiss' }).click();
      await c.waitFor({ state: 'detached' });
      assert.deepEqual(errors, [`409 /api/v1/launcher/handoffs/${ho.id}:approve`]);
    } finally {
      await close();
    }
  });

  test("an item's details list its handoffs: to whom, the state in words, when", async () => {
    await declineAll();
    const made = await item('Harbour at noon');
    const declined = await offer({ asset_ids: [made.asset_id], item_id: made.id });
    assert.equal((await svc.l.post(`/launcher/handoffs/${declined.id}:decline`)).status, 200);
    const approved = await offer({ asset_ids: [made.asset_id, await image()], item_id: made.id });
    assert.equal((await svc.l.post(`/launcher/handoffs/${approved.id}:approve`, {})).status, 200);
    const { page, errors, close } = await signedIn('dark');
    try {
      await page.locator(`#gallery .g-tile[data-item-id="${made.id}"]`).click();
      await page.keyboard.press('Enter');
      const dialog = page.locator('dialog.g-details');
      const section = dialog.locator('.g-handoffs-section');
      await section.getByRole('heading', { name: 'Handoffs' }).waitFor();
      await section.locator(`li[data-handoff="${approved.id}"]`).waitFor();
      const lines = await section.locator('li').allInnerTexts();
      assert.equal(lines.length, 2, lines.join('\n'));
      assert.match(lines[0]!, /^From Sketchpad to Clipmaker: allowed, not opened yet · .+/);
      assert.match(lines[1]!, /^From Sketchpad to Clipmaker: declined · .+/);
      await dialog.screenshot({ path: join(RESULTS_DIR, 'handoffs-details-1280-dark.png') });
      // An item never handed off says so.
      await page.keyboard.press('Escape');
      const lone = await item('Kept at home');
      await page.locator(`#gallery .g-tile[data-item-id="${lone.id}"]`).click();
      await page.keyboard.press('Enter');
      await dialog.locator('.g-handoffs-section').getByText('Not sent to another studio.').waitFor();
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('keyboard: Tab reaches the buttons in order, Space and Enter answer, focus moves to the next card, then to the heading', async () => {
    await declineAll();
    const { page, errors, close } = await signedIn();
    try {
      const first = await offer({ note: 'first' });
      const second = await offer({ note: 'second' });
      await card(page, second.id).waitFor();
      await card(page, first.id).waitFor();
      const focused = () => page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        return { text: el?.textContent ?? '', card: el?.closest<HTMLElement>('li.request')?.dataset.handoff ?? null, tag: el?.tagName ?? '' };
      });
      // From the top of the page, Tab reaches the first card's primary button.
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
      let hops = 0;
      for (; hops < 20; hops++) {
        await page.keyboard.press('Tab');
        const f = await focused();
        if (f.card) break;
      }
      assert.deepEqual(await focused(), { text: 'Allow and open', card: first.id, tag: 'BUTTON' }, `after ${hops} Tabs`);
      await page.keyboard.press('Tab');
      assert.equal((await focused()).text, 'Allow once');
      await page.keyboard.press('Tab');
      assert.equal((await focused()).text, 'Always allow from Sketchpad to Clipmaker');
      await page.keyboard.press('Tab');
      assert.equal((await focused()).text, 'Decline');
      await page.keyboard.press('Shift+Tab');
      await page.keyboard.press('Shift+Tab');
      assert.equal((await focused()).text, 'Allow once');
      await page.keyboard.press('Space');
      await card(page, first.id).waitFor({ state: 'detached' });
      assert.equal((await handoff(first.id)).state, 'approved');
      await page.waitForFunction((id) => (document.activeElement as HTMLElement | null)?.closest<HTMLElement>('li.request')?.dataset.handoff === id, second.id);
      assert.deepEqual(await focused(), { text: 'Allow and open', card: second.id, tag: 'BUTTON' });
      for (let i = 0; i < 3; i++) await page.keyboard.press('Tab');
      assert.equal((await focused()).text, 'Decline');
      await page.keyboard.press('Enter');
      await card(page, second.id).waitFor({ state: 'detached' });
      assert.equal((await handoff(second.id)).state, 'declined');
      await page.waitForFunction(() => document.activeElement?.id === 'requests-title');
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });

  test('screenshots: requests, an error and a rule in light and dark at 1280 and 800 px', async () => {
    await declineAll();
    const withItem = await item('Lighthouse, evening');
    await offer({ asset_ids: [withItem.asset_id, await image(), await image()], item_id: withItem.id, note: 'Three takes of the lighthouse. The second one is my favourite; the sky needs a grade.' });
    await offer();
    const ruleFor = await offer();
    assert.equal((await svc.l.post(`/launcher/handoffs/${ruleFor.id}:approve`, { always: true })).status, 200);
    try {
      for (const width of [1280, 800]) {
        for (const scheme of SCHEMES) {
          const { page, errors, close } = await signedIn(scheme, width);
          try {
            await page.locator('#requests li.request').nth(1).waitFor();
            await page.locator('#permissions li.rule').waitFor();
            await page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLImageElement>('#requests .request-thumb img')).every((img) => img.complete && img.naturalWidth > 0));
            await saveScreenshot(page, `handoffs-${width}`, scheme);
            assert.deepEqual(errors, []);
          } finally {
            await close();
          }
        }
      }
    } finally {
      await svc.l.call('DELETE', '/launcher/handoff-rules/sketchpad/clipmaker');
    }
  });
});
