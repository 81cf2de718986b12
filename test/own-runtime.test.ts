import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { resolveTool } from '../service/media';
import { downloadAsset } from './helpers/export';
import { send, type HttpResponse } from './helpers/http';
import { CLIPMAKER, FINISHED, SKETCHPAD, sleep, startLauncher, type LauncherService } from './helpers/launcher';
import { tempDir } from './helpers/service';

/**
 * Backlot brings its own runtime (docs/studios.md, "The runtime a studio
 * gets"): the service is started with PATH set to an empty folder and no
 * BACKLOT_FFMPEG / BACKLOT_FFPROBE, as a packaged app started from a file
 * manager on a machine without Node or ffmpeg would be. The example studios'
 * `node ...` commands then run on Backlot's own Node, and ffmpeg and ffprobe
 * are the copies that come with Backlot.
 *
 * bin/backlot is a `#!/usr/bin/env node` script, so the service is started
 * as `process.execPath bin/backlot serve` (test/helpers/service.ts).
 */

let ctx: LauncherService;
let emptyPath: string;
let work: string;

/** A request to a studio's origin through the service's proxy, as the studio's page makes it (same origin). */
function onOrigin(studio: string, method: string, urlPath: string, body?: { json?: unknown; raw?: Buffer; type?: string }): Promise<HttpResponse> {
  const origin = `http://${studio}.localhost:${ctx.svc.port}`;
  return send(ctx.svc.port, {
    method,
    path: urlPath,
    headers: { Host: `${studio}.localhost:${ctx.svc.port}`, ...(method === 'GET' ? {} : { Origin: origin }), 'Sec-Fetch-Site': 'same-origin' },
    ...(body?.raw !== undefined ? { raw: body.raw, contentType: body.type } : body?.json !== undefined ? { body: body.json } : {}),
  });
}

before(async () => {
  emptyPath = tempDir('backlot-empty-path-');
  work = tempDir('backlot-own-runtime-');
  ctx = await startLauncher({ env: { PATH: emptyPath, BACKLOT_FFMPEG: '', BACKLOT_FFPROBE: '' } });
});

after(async () => {
  await ctx?.svc.stop();
  rmSync(emptyPath, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

describe('with an empty PATH', () => {
  test('both example studios install: their `node scripts/install.js` step runs on Backlot’s own Node', async () => {
    for (const dir of [SKETCHPAD, CLIPMAKER]) {
      const studio = await ctx.l.installOk(dir);
      const install = (await ctx.l.jobsOf(studio.id)).find((j) => j.kind === 'install');
      assert.equal(install?.state, 'succeeded', JSON.stringify(install));
    }
  });

  test('both start and are running, each on Backlot’s Node', async () => {
    for (const id of ['sketchpad', 'clipmaker']) {
      const s = await ctx.l.startOk(id);
      assert.equal(s.state, 'running');
      const log = await ctx.l.studioLog(id, (t) => t.startsWith('[backlot] ready'));
      assert.ok(log.some((t) => t.startsWith('[backlot] ready')), log.join('\n'));
    }
  });

  test('sketchpad saves a drawing the way its page does: the PNG as an asset, then a gallery item', async () => {
    const png = await sharp({ create: { width: 16, height: 12, channels: 3, background: '#c0392b' } }).png().toBuffer();
    const asset = await onOrigin('sketchpad', 'POST', '/_backlot/api/v1/assets?kind=image&filename=drawing.png', { raw: png, type: 'image/png' });
    assert.equal(asset.status, 201, asset.text);
    const item = await onOrigin('sketchpad', 'POST', '/_backlot/api/v1/gallery/items', {
      json: { asset_id: asset.json.id, title: 'A drawing', tags: ['own-runtime'], params: { prompt: '' } },
    });
    assert.equal(item.status, 201, item.text);
    const list = await onOrigin('sketchpad', 'GET', '/_backlot/api/v1/gallery/items?limit=24');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.json.items.map((i: { id: string }) => i.id),
      [item.json.id],
    );
  });

  let timelineId = '';

  test('clipmaker renders with the ffmpeg that comes with Backlot (its BACKLOT_FFMPEG)', async () => {
    const status = await onOrigin('clipmaker', 'GET', '/app/status');
    assert.equal(status.status, 200, status.text);
    assert.ok(status.json.ffmpeg, `clipmaker sees no ffmpeg: ${status.text}`);
    const r = await onOrigin('clipmaker', 'POST', '/app/render', { json: { pattern: 'testsrc2', seconds: 1, prompt: 'own runtime' } });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json.asset_id && r.json.timeline_id, r.text);
    timelineId = r.json.timeline_id;
    const file = path.join(work, 'clip.mp4');
    await downloadAsset(ctx.svc.port, ctx.svc.token('clipmaker', ['assets']), r.json.asset_id, file);
    const probe = ffprobe(file);
    assert.deepEqual(
      probe.streams.map((s) => s.codec_name),
      ['h264', 'aac'],
    );
  });

  test('the sequence exports (timeline export through the API) and ffprobe reads H.264 + AAC of its length', async () => {
    assert.ok(timelineId, 'the render test made the sequence');
    const plan = await onOrigin('clipmaker', 'GET', `/_backlot/api/v1/timeline/${timelineId}:plan`);
    assert.equal(plan.status, 200, plan.text);
    const started = await onOrigin('clipmaker', 'POST', `/_backlot/api/v1/timeline/${timelineId}:export`, { json: { preset: 'auto' } });
    assert.equal(started.status, 202, started.text);
    let job: { state: string; data: { asset_id?: string }; last_error: string | null } | null = null;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const r = await onOrigin('clipmaker', 'GET', `/_backlot/api/v1/jobs/${started.json.id}`);
      assert.equal(r.status, 200, r.text);
      job = r.json;
      if (FINISHED.includes(job!.state)) break;
      assert.ok(Date.now() < deadline, `the export did not finish: ${r.text}`);
      await sleep(100);
    }
    assert.equal(job!.state, 'succeeded', JSON.stringify(job));
    const file = path.join(work, 'export.mp4');
    await downloadAsset(ctx.svc.port, ctx.svc.token('clipmaker', ['assets']), job!.data.asset_id!, file);
    const probe = ffprobe(file);
    assert.deepEqual(
      probe.streams.map((s) => s.codec_name),
      ['h264', 'aac'],
    );
    assert.ok(Math.abs(Number(probe.format.duration) - 1) < 0.1, `duration ${probe.format.duration}`);
  });
});

/** The ffprobe the test's own machine resolves (any will do for reading the result). */
function ffprobe(file: string): { streams: { codec_name: string }[]; format: { duration: string } } {
  const bin = resolveTool('ffprobe').path;
  assert.ok(bin, 'an ffprobe to check the output with');
  return JSON.parse(execFileSync(bin, ['-v', 'error', '-show_format', '-show_streams', '-of', 'json', `file:${file}`], { encoding: 'utf8' }));
}
