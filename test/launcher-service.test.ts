import assert from 'node:assert/strict';
import { readdirSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { send } from './helpers/http';
import { alive, until } from './helpers/processes';
import { startService, tempDir } from './helpers/service';
import { openSse } from './helpers/sse';
import { fixture, LauncherClient, pidsIn, SKETCHPAD, startLauncher, studioGet } from './helpers/launcher';

/**
 * The service's own end: a stop (SIGTERM) stops every
 * studio; after a crash (SIGKILL) the studios' process groups live on, and
 * the next `serve` on the same data dir ends them before it serves, with the
 * studio back to `installed` and its old runtime token revoked.
 */

/** Live pids whose working folder is under `dir` (a studio's processes run in its app folder). */
function pidsUnder(dir: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if ((cwd === dir || cwd.startsWith(`${dir}/`)) && alive(Number(entry))) out.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

test('SIGTERM: the service stops every studio (a child of one too) and exits 0', async () => {
  const { svc, l } = await startLauncher({ keepDataDir: true });
  const studios = join(svc.dataDir, 'studios');
  try {
    await l.installOk(SKETCHPAD);
    await l.installOk(fixture({ id: 'family', env: { FIXTURE_MODE: 'child' } }));
    await l.startOk('sketchpad');
    const s = await l.startOk('family');
    await l.studioLog('family', (t) => t === `listening on ${s.port}`);
    const before = pidsUnder(studios);
    assert.ok(before.length >= 3, `sketchpad, family and its child run: ${before}`);
    const started = Date.now();
    assert.equal(await svc.stop('SIGTERM'), 0);
    assert.ok(Date.now() - started < 5000, 'within 5 s');
    assert.deepEqual(before.filter(alive), [], 'no studio process is left');
  } finally {
    killAll(pidsUnder(studios));
    rmSync(svc.dataDir, { recursive: true, force: true });
  }
});

test('SIGKILL: the studio outlives the service; the next serve ends its group before serving, and it is installed with its token revoked', async () => {
  const dataDir = tempDir();
  const first = await startLauncher({ dataDir, keepDataDir: true });
  let pids: number[] = [];
  try {
    await first.l.installOk(fixture({ id: 'orphan', env: { FIXTURE_MODE: 'child' } }));
    const s = await first.l.startOk('orphan');
    pids = pidsIn(await first.l.studioLog('orphan', (t) => t === `listening on ${s.port}`));
    assert.equal(pids.length, 2);
    const token = (await studioGet(s.port, '/env')).json.BACKLOT_TOKEN;
    assert.equal((await send(first.svc.port, { path: '/api/v1/kv/settings', token })).status, 200);

    first.svc.child.kill('SIGKILL');
    await new Promise((r) => (first.svc.child.exitCode !== null || first.svc.child.signalCode !== null ? r(null) : first.svc.child.once('exit', r)));
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(pids.every(alive), 'the studio and its child survive the crash');

    const second = await startService({ dataDir });
    try {
      assert.deepEqual(pids.filter(alive), [], 'ended before the ready line');
      assert.match(second.stderr(), new RegExp(`ended process group ${pids[0]} \\(studio:orphan\\)`));
      const l = new LauncherClient(second.port, second.cli(['launcher-token']).stdout.trim());
      const after = await l.studio('orphan');
      assert.equal(after.state, 'installed');
      assert.equal(after.port, null);
      assert.match(after.last_error, /service stopped while the studio was running/);
      assert.equal((await send(second.port, { path: '/api/v1/kv/settings', token })).status, 401, 'its old token is revoked');
      await l.startOk('orphan');
      await l.stopOk('orphan');
    } finally {
      await second.stop();
    }
  } finally {
    killAll(pids);
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('SIGKILL during an install step: the next serve ends the step, fails the job and the studio', async () => {
  const dataDir = tempDir();
  const first = await startLauncher({ dataDir, keepDataDir: true });
  let pids: number[] = [];
  try {
    const res = await first.l.post('/launcher/studios:install', {
      source: fixture({ id: 'halfway', install: [{ name: 'wait', run: 'node tool.js sleep 30000' }] }),
    });
    assert.equal(res.status, 202);
    const sse = await openSse(first.svc.port, `/launcher/jobs/${res.json.id}/logs`, first.l.cred);
    const [line] = await sse.waitFor((m) => m.event === 'line' && JSON.parse(m.data).text.startsWith('pids '));
    sse.close();
    pids = pidsIn([JSON.parse(line!.data).text]);
    first.svc.child.kill('SIGKILL');
    await new Promise((r) => first.svc.child.once('exit', r));
    assert.ok(pids.every(alive));

    const second = await startService({ dataDir });
    try {
      await until(() => !pids.some(alive), 'the step group to end', 2000);
      const l = new LauncherClient(second.port, second.cli(['launcher-token']).stdout.trim());
      const job = await l.job(res.json.id);
      assert.equal(job.state, 'failed');
      assert.match(job.last_error, /service stopped while this job was running/);
      const studio = await l.studio('halfway');
      assert.equal(studio.state, 'failed');
      assert.match(studio.last_error, /install it again/);
    } finally {
      await second.stop();
    }
  } finally {
    killAll(pids);
    rmSync(dataDir, { recursive: true, force: true });
  }
});
