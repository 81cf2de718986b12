import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { newAsset } from './helpers/timeline';
import { runCli, startService, tempDir } from './helpers/service';
import { send } from './helpers/http';
import { openSse } from './helpers/sse';
import { alive, until } from './helpers/processes';

/**
 * The service's stop: SIGTERM while a probe runs (ffprobe stuck on a file)
 * and an editor page is connected: exit 0 within 5 s, the page's stream
 * ended, and no process the probe started left alive.
 */

describe('shutdown with a probe running and an editor page connected', { timeout: 60_000 }, () => {
  let dir: string;
  before(() => {
    dir = tempDir('backlot-media-stop-');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('SIGTERM: exit 0 within 5 s, the page ended, no ffprobe (nor its children) left alive, none started during the stop', async () => {
    // A stuck ffprobe that ignores SIGTERM and has a child of its own (which ignores it too).
    const pids = join(dir, 'pids');
    const fake = join(dir, 'ffprobe');
    writeFileSync(fake, `#!/bin/sh\ntrap '' TERM\necho $$ >> '${pids}'\nsleep 60 &\necho $! >> '${pids}'\nwait\n`);
    chmodSync(fake, 0o755);
    const svc = await startService({ env: { BACKLOT_FFPROBE: fake } });
    let started: number[] = [];
    try {
      const token = svc.studio('cutter', ['assets', 'timeline']);
      // Six files: the plan probes them together, four at a time (the media module's
      // limit), so two wait in the queue; once the running four are ended at the
      // stop, the queued two must not start.
      const clips: { asset_id: string }[] = [];
      for (let i = 0; i < 6; i++) clips.push({ asset_id: (await newAsset(svc.port, token, 'video', { duration_s: 2 })).id });
      const created = await send(svc.port, { method: 'POST', path: '/api/v1/timeline', token, body: { name: 'stop', clips } });
      assert.equal(created.status, 201, created.text);
      const credential = runCli(['launcher-token', '--data-dir', svc.dataDir]).stdout.trim();
      const page = await openSse(svc.port, '!/editor/events', credential);
      await page.waitFor((m) => m.event === 'hello');
      // The plan waits on the stuck probe; its answer does not matter (the service stops under it).
      const plan = send(svc.port, { path: `/api/v1/timeline/${created.json.id}:plan`, token }).catch(() => null);
      const lines = () => (existsSync(pids) ? readFileSync(pids, 'utf8').trim().split('\n').length : 0);
      await until(() => lines() === 8, 'four probes to start (each writes its pid and its child\'s)');
      started = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
      assert.ok(started.every(alive));
      const t0 = Date.now();
      const code = await svc.stop('SIGTERM');
      assert.equal(code, 0);
      assert.ok(Date.now() - t0 < 5000, `stopped in ${Date.now() - t0} ms`);
      await page.closed;
      await plan;
      // A probe started during the stop would have written its pids by now.
      await new Promise((r) => setTimeout(r, 1000));
      started = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
      for (const pid of started) assert.equal(alive(pid), false, `pid ${pid} (a probe's) outlived the service`);
    } finally {
      await svc.stop();
      for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
