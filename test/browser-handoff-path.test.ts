import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, newContext, pageFetch, runtimeToken, saveScreenshot, SCHEMES, signIn, watchPageErrors } from './helpers/browser';
import { send } from './helpers/http';
import { CLIPMAKER, fixture, SKETCHPAD, startLauncher, type LauncherService } from './helpers/launcher';

/**
 * Sending work from one studio to another as a person does it (docs/studios.md,
 * "Sending and receiving work"), in real Chromium against the real service with
 * the two example studios and the real ffmpeg: Sketchpad draws and saves, "Send to
 * Clipmaker" asks Backlot; the launcher's request card ("Allow and open") approves
 * it and opens Clipmaker at /receive?handoff=<id>, which takes the drawing, puts it
 * on its reel and renders the reel; the render's gallery item has the drawing
 * upstream in the launcher's lineage. Also: every refusal of a send in words next
 * to Sketchpad's button, the request followed to Withdrawn, Declined, Approved and Expired,
 * and every reason /receive cannot take a request. Screenshots (light and dark, 1280 and
 * 800 px) go to test-results/.
 */

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const HANDOFFS = '/_backlot/api/v1/handoffs';

/** Light and dark at 1280 and 800 px wide, then back to 1280 light. */
async function shootAll(page: Page, name: string): Promise<void> {
  const height = page.viewportSize()?.height ?? 900;
  for (const width of [1280, 800]) {
    await page.setViewportSize({ width, height });
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      await saveScreenshot(page, `${name}-${width}`, scheme);
    }
  }
  await page.setViewportSize({ width: 1280, height });
  await page.emulateMedia({ colorScheme: 'light' });
}

/**
 * Draws a stroke on Sketchpad's canvas, saves with `title` and returns the new item's id.
 * Each drawing has its own peak, so no two are the same bytes (one asset, whose items
 * would all be upstream of anything made from it).
 */
async function drawAndSave(page: Page, title: string): Promise<string> {
  const box = (await page.locator('#canvas').boundingBox())!;
  const peak = 0.2 + Math.random() * 0.6;
  await page.mouse.move(box.x + box.width * 0.15, box.y + box.height * 0.7);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * peak, box.y + box.height * 0.2, { steps: 10 });
  await page.mouse.move(box.x + box.width * 0.85, box.y + box.height * 0.75, { steps: 10 });
  await page.mouse.up();
  await page.locator('#prompt').fill(title);
  await page.locator('#save').click();
  await page.locator('#status[data-kind="ok"]').waitFor({ timeout: 15_000 }).catch(async (err) => {
    throw new Error(`save did not succeed: ${await page.locator('#status').textContent()} (${err})`);
  });
  const id = /item ([0-9A-Z]{26})/.exec((await page.locator('#status').textContent()) ?? '')?.[1];
  assert.match(id ?? '', ULID, 'the status names the new item');
  await page.locator(`#gallery .card[data-item-id="${id}"]`).waitFor();
  return id!;
}

/** A JSON call made by a studio page itself through its /_backlot prefix. */
async function pageJson(page: Page, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await pageFetch(page, path, {
    method,
    ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  });
  assert.equal(r.error, undefined, JSON.stringify(r));
  if (r.error !== undefined) throw new Error('unreachable');
  return { status: r.status, json: r.text ? JSON.parse(r.text) : null };
}

describe('handoffs: Sketchpad sends a drawing to Clipmaker, in real Chromium', { timeout: 400_000 }, () => {
  let ls: LauncherService;
  let browser: Browser;
  let context: BrowserContext;
  let sketchpad: string;
  let clipmaker: string;
  /** The handoff the whole path accepted (reopened in the last test). */
  let accepted: { id: string; asset: string } | undefined;

  before(async () => {
    assert.ok(existsSync('/usr/bin/chromium'), 'Chromium at /usr/bin/chromium');
    const env: NodeJS.ProcessEnv = {};
    if (existsSync('/usr/bin/ffmpeg')) env.BACKLOT_FFMPEG = '/usr/bin/ffmpeg';
    if (existsSync('/usr/bin/ffprobe')) env.BACKLOT_FFPROBE = '/usr/bin/ffprobe';
    ls = await startLauncher({ env });
    browser = await launchChromium();
    context = await newContext(browser, 'light');
    // Only Sketchpad at first: the first refusal is "Clipmaker isn't installed".
    await ls.l.installOk(SKETCHPAD);
    await ls.l.startOk('sketchpad');
    sketchpad = `http://sketchpad.localhost:${ls.svc.port}`;
    clipmaker = `http://clipmaker.localhost:${ls.svc.port}`;
  }, { timeout: 90_000 });

  after(async () => {
    await context?.close();
    await browser?.close();
    await ls?.svc.stop();
  }, { timeout: 30_000 });

  test('Sketchpad: each refusal in words next to the button; the request followed to Withdrawn, Declined and Approved; Withdraw', async () => {
    const page = await context.newPage();
    const errors = watchPageErrors(page);
    await page.goto(`${sketchpad}/`);
    const itemId = await drawAndSave(page, 'a kite over the hill');
    const card = page.locator(`#gallery .card[data-item-id="${itemId}"]`);
    const sendButton = card.getByRole('button', { name: 'Send to Clipmaker' });
    const words = card.locator('.send-state');
    const withdraw = card.getByRole('button', { name: 'Withdraw' });
    assert.equal(await withdraw.isVisible(), false, 'nothing to withdraw yet');

    // 409 not_installed.
    await sendButton.click();
    await card.getByText("Clipmaker isn't installed: install it from Examples in the launcher.").waitFor();
    assert.equal(await words.getAttribute('data-kind'), 'error');
    assert.equal(await sendButton.isEnabled(), true, 'it can be tried again');

    // 422 not_launchable: a studio named clipmaker that takes only video.
    const videoOnly = fixture({ id: 'clipmaker', name: 'Clipmaker', accepts: { kinds: ['video'] } });
    await ls.l.installOk(videoOnly);
    await sendButton.click();
    await card.getByText("Clipmaker can't take a drawing: it takes video only.").waitFor();
    await ls.l.uninstall('clipmaker', true);
    const installed = await ls.l.installOk(CLIPMAKER);
    assert.deepEqual(installed.accepts, { kinds: ['image'], path: '/receive' }, 'the launcher knows what Clipmaker takes and where');

    // A second tab of Sketchpad, opened before the send: its button is still live.
    const other = await context.newPage();
    const otherErrors = watchPageErrors(other);
    await other.goto(`${sketchpad}/`);
    const otherCard = other.locator(`#gallery .card[data-item-id="${itemId}"]`);
    await otherCard.waitFor();

    // Sent: pending, in words; Send is off and Withdraw on while it waits.
    await sendButton.click();
    await card.getByText('Waiting for your approval in the Backlot launcher.').waitFor();
    assert.equal(await words.getAttribute('data-state'), 'pending');
    assert.equal(await sendButton.isDisabled(), true);
    await withdraw.waitFor();
    await card.scrollIntoViewIfNeeded();
    await shootAll(page, 'handoff-sketchpad-pending');

    // 409 already_exists from the other tab: said in words, and that tab follows the same request.
    await otherCard.getByRole('button', { name: 'Send to Clipmaker' }).click();
    await otherCard.getByText('This drawing is already waiting for your approval in the Backlot launcher.').waitFor();
    const sent = await pageJson(page, 'GET', `${HANDOFFS}?direction=sent`);
    assert.equal(sent.status, 200);
    assert.equal(sent.json.items.length, 1, 'one request, not two');
    const first = sent.json.items[0];
    assert.deepEqual(
      { to: first.to, from: first.from, item_id: first.item_id, note: first.note, state: first.state },
      { to: 'clipmaker', from: 'sketchpad', item_id: itemId, note: 'a kite over the hill', state: 'pending' },
    );

    // Withdraw in the other tab; the first tab sees it by following the request.
    await otherCard.getByRole('button', { name: 'Withdraw' }).click();
    await otherCard.getByText('Withdrawn.').waitFor();
    await card.getByText('Withdrawn.').waitFor({ timeout: 6000 });
    assert.equal(await withdraw.isVisible(), false);
    assert.equal((await ls.l.get(`/launcher/handoffs/${first.id}`)).json.state, 'withdrawn');
    await other.close();

    // Sent again and declined in the launcher: "Declined".
    await sendButton.click();
    await card.getByText('Waiting for your approval in the Backlot launcher.').waitFor();
    const pending = (await ls.l.get(`/launcher/handoffs?state=pending`)).json.items;
    assert.equal(pending.length, 1);
    const declined = await ls.l.post(`/launcher/handoffs/${pending[0].id}:decline`);
    assert.equal(declined.status, 200, declined.text);
    await card.getByText('Declined.').waitFor({ timeout: 6000 });
    assert.equal(await words.getAttribute('data-state'), 'declined');

    // Sent again and allowed once in the launcher: "Approved" until Clipmaker takes it, and still withdrawable.
    await sendButton.click();
    await card.getByText('Waiting for your approval in the Backlot launcher.').waitFor();
    const asked = (await ls.l.get(`/launcher/handoffs?state=pending`)).json.items;
    assert.equal(asked.length, 1);
    const allowed = await ls.l.post(`/launcher/handoffs/${asked[0].id}:approve`, {});
    assert.equal(allowed.status, 200, allowed.text);
    await card.getByText('Approved: waiting for Clipmaker to open it.').waitFor({ timeout: 6000 });
    assert.equal(await words.getAttribute('data-state'), 'approved');
    await withdraw.click();
    await card.getByText('Withdrawn.').waitFor();
    assert.equal((await ls.l.get(`/launcher/handoffs/${asked[0].id}`)).json.state, 'withdrawn');

    // 429 quota_exceeded: 20 requests already waiting (other items of the same picture).
    const assetId = first.asset_ids[0];
    const queued: string[] = [];
    for (let i = 0; i < 20; i++) {
      const item = await pageJson(page, 'POST', '/_backlot/api/v1/gallery/items', { asset_id: assetId, title: `copy ${i}` });
      assert.equal(item.status, 201);
      const h = await pageJson(page, 'POST', HANDOFFS, { to: 'clipmaker', asset_ids: [assetId], item_id: item.json.id });
      assert.equal(h.status, 201, JSON.stringify(h.json));
      queued.push(h.json.id);
    }
    await sendButton.click();
    await card.getByText('Too many requests are waiting for your approval: answer some in the Backlot launcher first.').waitFor();
    await card.scrollIntoViewIfNeeded();
    await shootAll(page, 'handoff-sketchpad-refused');
    for (const id of queued) assert.equal((await pageJson(page, 'DELETE', `${HANDOFFS}/${id}`)).status, 204);

    // 404 not_found: the drawing was deleted after the strip was drawn.
    assert.equal((await pageJson(page, 'DELETE', `/_backlot/api/v1/gallery/items/${itemId}`)).status, 204);
    await sendButton.click();
    await card.getByText('This drawing is no longer in the gallery.').waitFor();

    // The refusals were the service's own answers, nothing else failed.
    const expected = ['409 /_backlot/api/v1/handoffs', '422 /_backlot/api/v1/handoffs', '409 /_backlot/api/v1/handoffs', '429 /_backlot/api/v1/handoffs', '404 /_backlot/api/v1/handoffs'];
    assert.deepEqual(
      errors.filter((e) => e !== '404 /_backlot/api/v1/kv/settings/brush'),
      [expected[0], expected[1], expected[3], expected[4]],
    );
    assert.deepEqual(otherErrors.filter((e) => e !== '404 /_backlot/api/v1/kv/settings/brush'), [expected[2]]);
    await page.close();
  });

  test('the whole path: draw, Send to Clipmaker, Allow and open in the launcher, the drawing arrives as a clip, Render, the lineage shows the drawing upstream', async () => {
    const title = 'a red boat at sea';
    const sketch = await context.newPage();
    const sketchErrors = watchPageErrors(sketch);
    await sketch.goto(`${sketchpad}/`);
    const drawingId = await drawAndSave(sketch, title);
    const drawing = (await ls.l.get(`/launcher/gallery/items/${drawingId}`)).json;

    // The launcher, open beside it.
    const launcher = await context.newPage();
    const launcherErrors = watchPageErrors(launcher);
    const login = ls.svc.cli(['login-url']);
    assert.equal(login.code, 0, login.stderr);
    await signIn(launcher, login.stdout);

    const card = sketch.locator(`#gallery .card[data-item-id="${drawingId}"]`);
    await card.getByRole('button', { name: 'Send to Clipmaker' }).click();
    await card.getByText('Waiting for your approval in the Backlot launcher.').waitFor();
    const handoff = (await ls.l.get('/launcher/handoffs?state=pending')).json.items.find((h: any) => h.item_id === drawingId);
    assert.ok(handoff, 'the request is pending for the launcher');
    assert.deepEqual(handoff.asset_ids, [drawing.asset_id]);

    // The request card in the launcher; "Allow and open" approves it and opens Clipmaker.
    const requests = launcher.getByRole('region', { name: 'Requests' });
    const allow = requests.getByRole('button', { name: 'Allow and open' });
    await allow.waitFor({ timeout: 15_000 });
    await requests.scrollIntoViewIfNeeded();
    await shootAll(launcher, 'handoff-launcher-request');
    const [tab] = await Promise.all([context.waitForEvent('page', { timeout: 90_000 }), allow.click()]);
    const receiveErrors = watchPageErrors(tab);
    await tab.waitForURL(`${clipmaker}/receive?handoff=${handoff.id}`, { timeout: 90_000 });

    // The drawing arrives: taken, its thumbnail and note shown, on the reel as a still.
    const stateLine = tab.locator('#handoff-state');
    await tab.locator('#handoff-state[data-kind="ok"]').waitFor({ timeout: 30_000 }).catch(async (err) => {
      throw new Error(`not taken: ${await stateLine.textContent()} (${err})`);
    });
    assert.equal(await stateLine.textContent(), 'Taken and added to your reel as a 3 s still.');
    assert.equal(await tab.locator('#received-from').textContent(), 'From Sketchpad: one picture');
    assert.equal(await tab.locator('#received-note').textContent(), `“${title}”`);
    await tab.waitForFunction(() => {
      const img = document.getElementById('received-thumb') as HTMLImageElement;
      return !img.hidden && img.complete && img.naturalWidth > 0;
    });
    assert.match((await tab.locator('#reel-summary').textContent()) ?? '', /“Clipmaker reel” is 0:03\.0 long; the picture is on it from 0:00\.0 to 0:03\.0/);
    const reel = (await ls.l.get('/launcher/timelines?studio=clipmaker')).json.items[0];
    assert.equal(reel.name, 'Clipmaker reel');
    assert.deepEqual(reel.tracks.V1.map((c: any) => [c.asset_id, c.start, c.duration]), [[drawing.asset_id, 0, 3]]);
    // The sender sees it taken.
    await card.getByText('Clipmaker took it.').waitFor({ timeout: 6000 });
    await card.scrollIntoViewIfNeeded();
    await shootAll(sketch, 'handoff-sketchpad-taken');
    await shootAll(tab, 'handoff-clipmaker-received');

    // Render: the timeline export, followed to its end.
    await tab.getByRole('button', { name: 'Render the reel' }).click();
    await tab.locator('#status[data-kind="ok"]').waitFor({ timeout: 90_000 }).catch(async (err) => {
      throw new Error(`render did not succeed: ${await tab.locator('#status').textContent()} (${err})`);
    });
    assert.equal(await tab.getByRole('progressbar', { name: 'Render progress' }).getAttribute('aria-valuenow'), '100');
    const renderId = await tab.locator('#result').getAttribute('data-item-id');
    assert.match(renderId ?? '', ULID);
    const job = (await ls.l.jobsOf('clipmaker')).find((j) => j.kind === 'export');
    assert.equal(job?.state, 'succeeded', JSON.stringify(job));
    assert.equal(job.data.item_id, renderId);
    const render = (await ls.l.get(`/launcher/gallery/items/${renderId}`)).json;
    assert.equal(render.studio_id, 'clipmaker');
    assert.equal(render.timeline_id, reel.id);
    assert.deepEqual(render.inputs, [{ asset_id: drawing.asset_id, role: 'clip' }]);
    await tab.waitForFunction(() => {
      const v = document.getElementById('result-video') as HTMLVideoElement;
      return v.readyState >= 1 && Math.abs(v.duration - 3) < 0.2;
    }, undefined, { timeout: 15_000 });
    await shootAll(tab, 'handoff-clipmaker-rendered');

    // The lineage: the service's, and the launcher gallery's "Made from".
    const lineage = await ls.l.get(`/launcher/gallery/items/${renderId}/lineage`);
    assert.equal(lineage.status, 200, lineage.text);
    assert.deepEqual(lineage.json.items.map((i: any) => i.id), [drawingId]);
    // In the launcher (open since the send), the render arrived in the gallery by itself; its details show the drawing under "Made from".
    const tile = launcher.locator(`#gallery .g-tile[data-item-id="${renderId}"]`);
    await tile.waitFor({ timeout: 15_000 });
    await tile.click();
    await launcher.keyboard.press('Enter'); // the gallery's key for an item's details
    const dialog = launcher.locator('dialog.g-details');
    await dialog.waitFor({ timeout: 15_000 }).catch(async (err) => {
      await saveScreenshot(launcher, 'handoff-launcher-lineage-failed', 'light');
      throw err;
    });
    assert.equal(await dialog.locator('h2').textContent(), 'Clipmaker reel');
    const madeFrom = dialog.locator('section', { has: launcher.getByRole('heading', { name: 'Made from' }) });
    await madeFrom.locator(`button[data-item-id="${drawingId}"]`).waitFor({ timeout: 15_000 });
    await shootAll(launcher, 'handoff-launcher-lineage');

    assert.deepEqual(sketchErrors.filter((e) => e !== '404 /_backlot/api/v1/kv/settings/brush'), []);
    assert.deepEqual(receiveErrors, []);
    assert.deepEqual(launcherErrors, []);
    accepted = { id: handoff.id, asset: drawing.asset_id };
    for (const p of [sketch, launcher, tab]) await p.close();
  });

  test("Clipmaker's /receive says why it cannot take a request: none named, not approved yet (then Try again), gone, withdrawn, taken before (and taken elsewhere: 409 conflict); allowed once, it waits under Sent to you", async () => {
    assert.ok(accepted, 'the whole path ran first');
    const sketch = await context.newPage();
    await sketch.goto(`${sketchpad}/`);
    const page = await context.newPage();
    const stateLine = page.locator('#handoff-state');
    const sendNew = async (title: string) => {
      const itemId = await drawAndSave(sketch, title);
      const item = (await ls.l.get(`/launcher/gallery/items/${itemId}`)).json;
      const h = await pageJson(sketch, 'POST', HANDOFFS, { to: 'clipmaker', asset_ids: [item.asset_id], item_id: itemId, note: title });
      assert.equal(h.status, 201, JSON.stringify(h.json));
      return { handoff: h.json, itemId };
    };
    const approve = async (id: string) => {
      const r = await ls.l.post(`/launcher/handoffs/${id}:approve`, {});
      assert.equal(r.status, 200, r.text);
    };

    // None named.
    await page.goto(`${clipmaker}/receive`);
    await page.getByText('No request to open here: Backlot opens this page when you allow another studio to send work to Clipmaker.').waitFor();

    // Not approved yet: 404 in words, Try again once it is allowed.
    const waiting = await sendNew('a green field');
    await page.goto(`${clipmaker}/receive?handoff=${waiting.handoff.id}`);
    await page.getByText('This request is not for Clipmaker, or it is not approved yet: allow it in the Backlot launcher, then try again.').waitFor();
    await shootAll(page, 'handoff-clipmaker-not-approved');
    await approve(waiting.handoff.id);
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.locator('#handoff-state[data-kind="ok"]').waitFor({ timeout: 15_000 });
    assert.equal(await stateLine.textContent(), 'Taken and added to your reel as a 3 s still.');
    assert.equal((await ls.l.get(`/launcher/handoffs/${waiting.handoff.id}`)).json.state, 'accepted');

    // Allowed once, not opened: Clipmaker's own page lists it under "Sent to you" until it is taken.
    const later = await sendNew('a windmill');
    await approve(later.handoff.id);
    await page.goto(`${clipmaker}/`);
    const waitingList = page.getByRole('region', { name: 'Sent to you' });
    await waitingList.getByText('From Sketchpad: “a windmill”').waitFor();
    await shootAll(page, 'handoff-clipmaker-sent-to-you');
    await waitingList.getByRole('link', { name: 'Take it: from Sketchpad, a windmill' }).click();
    await page.waitForURL(`${clipmaker}/receive?handoff=${later.handoff.id}`);
    await page.locator('#handoff-state[data-kind="ok"]').waitFor({ timeout: 15_000 });
    assert.equal(await stateLine.textContent(), 'Taken and added to your reel as a 3 s still.');
    await page.goto(`${clipmaker}/`);
    await page.locator('#received-section[data-loaded="true"]').waitFor({ state: 'attached' });
    assert.equal(await page.locator('#received-section').isHidden(), true, 'nothing waits any more');

    // Gone: the drawing's item deleted by Sketchpad after it was sent: 409 missing, nothing taken.
    const gone = await sendNew('a sunken ship');
    assert.equal((await pageJson(sketch, 'DELETE', `/_backlot/api/v1/gallery/items/${gone.itemId}`)).status, 204);
    await approve(gone.handoff.id);
    await page.goto(`${clipmaker}/receive?handoff=${gone.handoff.id}`);
    await page.getByText('What Sketchpad sent is gone (deleted since it was sent), so nothing was taken.').waitFor();
    assert.equal((await ls.l.get(`/launcher/handoffs/${gone.handoff.id}`)).json.state, 'approved');
    await shootAll(page, 'handoff-clipmaker-missing');

    // Withdrawn by the sender after it was approved.
    const back = await sendNew('a paper plane');
    await approve(back.handoff.id);
    assert.equal((await pageJson(sketch, 'DELETE', `${HANDOFFS}/${back.handoff.id}`)).status, 204);
    await page.goto(`${clipmaker}/receive?handoff=${back.handoff.id}`);
    await page.getByText('Sketchpad withdrew it; nothing was sent.').waitFor();

    // Taken before (the whole path's request, opened again): said so, and the clip can still be rendered.
    await page.goto(`${clipmaker}/receive?handoff=${accepted!.id}`);
    await page.locator('#handoff-state[data-kind="ok"]').waitFor();
    assert.equal(await stateLine.textContent(), 'You took this before; it is on your reel.');
    assert.equal(await page.getByRole('button', { name: 'Render the reel' }).isEnabled(), true);

    // Taken in another place while this page was reading it: its :accept is 409 conflict, said as taken before.
    const race = await sendNew('a lighthouse');
    await approve(race.handoff.id);
    // The page's :accept is held until another holder of Clipmaker's token has taken it.
    const token = runtimeToken('clipmaker', ls.svc.dataDir);
    let elsewhere: number | undefined;
    const acceptPath = `**/_backlot/api/v1/handoffs/${race.handoff.id}:accept`;
    await page.route(acceptPath, async (route) => {
      elsewhere = (await send(ls.svc.port, { method: 'POST', path: `/api/v1/handoffs/${race.handoff.id}:accept`, token, body: {} })).status;
      await route.continue();
    });
    const accepting = page.waitForResponse((r) => r.url().endsWith(`/handoffs/${race.handoff.id}:accept`));
    await page.goto(`${clipmaker}/receive?handoff=${race.handoff.id}`);
    assert.equal((await accepting).status(), 409);
    assert.equal(elsewhere, 200, 'taken elsewhere first');
    // Taken elsewhere, so not on the reel: this page offers to put it there.
    await page.getByText('You took this before, and it is not on a reel any more.').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Add it to the reel' }).click();
    await page.getByText('Added to your reel as a 3 s still.').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Add it to the reel' }).isVisible(), false);
    assert.equal(await page.getByRole('button', { name: 'Render the reel' }).isEnabled(), true);
    await page.unroute(acceptPath);
    await sketch.close();
    await page.close();
  });
});

describe('handoffs: a request nobody answers expires, and Sketchpad says so', { timeout: 120_000 }, () => {
  let ls: LauncherService;
  let browser: Browser;

  before(async () => {
    // Requests expire after 3 s here instead of 24 h.
    ls = await startLauncher({ env: { BACKLOT_HANDOFF_TTL_MS: '3000' } });
    browser = await launchChromium();
    await ls.l.installOk(SKETCHPAD);
    await ls.l.startOk('sketchpad');
    // A receiver of pictures named clipmaker (the real one is not needed to be asked).
    await ls.l.installOk(fixture({ id: 'clipmaker', name: 'Clipmaker', capabilities: ['assets'], accepts: { kinds: ['image'] } }));
  }, { timeout: 60_000 });

  after(async () => {
    await browser?.close();
    await ls?.svc.stop();
  }, { timeout: 30_000 });

  test('"Expired" in words once the request ran out of time; Send is offered again', async () => {
    const context = await newContext(browser, 'light');
    try {
      const page = await context.newPage();
      const errors = watchPageErrors(page);
      await page.goto(`http://sketchpad.localhost:${ls.svc.port}/`);
      const itemId = await drawAndSave(page, 'a kite nobody saw');
      const card = page.locator(`#gallery .card[data-item-id="${itemId}"]`);
      await card.getByRole('button', { name: 'Send to Clipmaker' }).click();
      await card.getByText('Waiting for your approval in the Backlot launcher.').waitFor();
      await card.getByText('Expired: nobody answered it within a day.').waitFor({ timeout: 10_000 });
      assert.equal(await card.locator('.send-state').getAttribute('data-state'), 'expired');
      assert.equal(await card.getByRole('button', { name: 'Send to Clipmaker' }).isEnabled(), true);
      assert.equal(await card.getByRole('button', { name: 'Withdraw' }).isVisible(), false);
      // A reload shows it again, from the list of what was sent.
      await page.reload();
      await page.locator(`#gallery .card[data-item-id="${itemId}"]`).getByText('Expired: nobody answered it within a day.').waitFor();
      assert.deepEqual(errors.filter((e) => e !== '404 /_backlot/api/v1/kv/settings/brush'), []);
    } finally {
      await context.close();
    }
  });
});
