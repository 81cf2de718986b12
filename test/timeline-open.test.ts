import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { client } from './helpers/http';
import { assertError } from './helpers/scenario';
import { startService, type TestService } from './helpers/service';
import { openSse, type SseConnection } from './helpers/sse';
import { upload } from './helpers/assets';
import { randomBytes } from 'node:crypto';

/**
 * POST /timeline/{id}:open end to end (docs/api.md "Open `POST
 * /timeline/{id}:open`"): real editor pages (server-sent event clients on /editor/events with a
 * launcher credential) connected to the real service see the sequence arrive.
 */

const EVENTS = '!/editor/events';

describe('POST /timeline/{id}:open', () => {
  let svc: TestService;
  let alpha: ReturnType<typeof client>;
  let beta: ReturnType<typeof client>;
  let credential: string;
  let timelineId: string;
  let betaTimelineId: string;

  before(async () => {
    svc = await startService();
    const alphaToken = svc.studio('alpha', ['timeline', 'assets']);
    alpha = client(svc.port, alphaToken);
    beta = client(svc.port, svc.studio('beta', ['timeline', 'assets', 'gallery.read_all']));
    const r = svc.cli(['launcher-token']);
    assert.equal(r.code, 0, r.stderr);
    credential = r.stdout.trim();
    const asset = await upload(svc.port, alphaToken, randomBytes(64), 'kind=video&filename=a.mp4&duration_s=2');
    assert.equal(asset.status, 201, JSON.stringify(asset.json));
    const created = await alpha.post('/timeline', { name: 'Opening night', target: { fps: 25 }, clips: [{ asset_id: asset.json.id }] });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    timelineId = created.json.id;
    const other = await beta.post('/timeline', { name: 'Beta' });
    betaTimelineId = other.json.id;
  });
  after(async () => {
    if (svc) await svc.stop();
  });

  test('with no editor page connected: 501 unsupported, the page to open named in the message', async () => {
    const r = await alpha.post(`/timeline/${timelineId}:open`, undefined);
    assertError(r, 501, 'unsupported');
    assert.match(r.json.message, new RegExp(`http://127\\.0\\.0\\.1:${svc.port}/editor/`));
  });

  test('every connected page receives the sequence as GET shows it; the answer names the surface', async () => {
    const pages: SseConnection[] = [await openSse(svc.port, EVENTS, credential), await openSse(svc.port, EVENTS, credential)];
    try {
      for (const page of pages) {
        assert.equal(page.status, 200, page.text());
        await page.waitFor((m) => m.event === 'hello');
      }
      const r = await alpha.post(`/timeline/${timelineId}:open`, undefined);
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(r.json, { opened: true, surface: `http://127.0.0.1:${svc.port}/editor/` });
      const current = await alpha.get(`/timeline/${timelineId}`);
      for (const page of pages) {
        const [open] = await page.waitFor((m) => m.event === 'open');
        const data = JSON.parse(open!.data);
        assert.deepEqual(Object.keys(data).sort(), ['opened_at', 'studio_id', 'timeline']);
        assert.equal(data.studio_id, 'alpha');
        assert.deepEqual(data.timeline, current.json);
        assert.match(data.opened_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      }
    } finally {
      for (const page of pages) page.close();
    }
  });

  test('after the last page goes away, :open is 501 again', async () => {
    const page = await openSse(svc.port, EVENTS, credential);
    await page.waitFor((m) => m.event === 'hello');
    page.close();
    await page.closed;
    // The service notices the closed connection on its own schedule; poll briefly.
    let status = 0;
    for (let i = 0; i < 50 && status !== 501; i++) {
      status = (await alpha.post(`/timeline/${timelineId}:open`, undefined)).status;
      if (status !== 501) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(status, 501);
  });

  test("another studio's sequence is 404 even with gallery.read_all, before 501; a deleted one is 404", async () => {
    assertError(await beta.post(`/timeline/${timelineId}:open`, undefined), 404, 'not_found');
    assertError(await alpha.post(`/timeline/${betaTimelineId}:open`, undefined), 404, 'not_found');
    const gone = await beta.post('/timeline', { name: 'Gone' });
    assert.equal((await beta.delete(`/timeline/${gone.json.id}`)).status, 204);
    assertError(await beta.post(`/timeline/${gone.json.id}:open`, undefined), 404, 'not_found');
  });

  test('nothing is sent to pages by a refused :open', async () => {
    const page = await openSse(svc.port, EVENTS, credential);
    try {
      await page.waitFor((m) => m.event === 'hello');
      assertError(await beta.post(`/timeline/${timelineId}:open`, undefined), 404, 'not_found');
      const ok = await beta.post(`/timeline/${betaTimelineId}:open`, undefined);
      assert.equal(ok.status, 200);
      const [open] = await page.waitFor((m) => m.event === 'open');
      // The first open event the page sees is beta's own sequence: the refused one sent nothing.
      assert.equal(JSON.parse(open!.data).timeline.id, betaTimelineId);
    } finally {
      page.close();
    }
  });
});
