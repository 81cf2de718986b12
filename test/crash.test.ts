import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INTERRUPTED_MESSAGE } from '../service/jobs';
import { runCrashRounds } from './helpers/crash';
import { descendants, stillAlive, type Proc } from './helpers/crash-procs';
import { client } from './helpers/http';
import { sleep } from './helpers/launcher';
import { until } from './helpers/processes';
import { propSeed } from './helpers/prng';
import { startService, tempDir } from './helpers/service';
import { realAsset } from './helpers/timeline';

/**
 * Crash safety (docs/reliability.md "Crashes and durability"): rounds of SIGKILL at seeded random moments while clients
 * write everything the service keeps, with an export, a studio install or
 * uninstall and a running studio under way (test/helpers/crash.ts says what
 * each restart must show). BACKLOT_CRASH_ROUNDS sets the rounds (default 6);
 * BACKLOT_PROP_SEED replays a seed. The long run: `npm run bench -- crash`.
 */

const ROUNDS = Number(process.env.BACKLOT_CRASH_ROUNDS ?? 6);
const seed = propSeed();

describe('crashes', { timeout: 600_000 }, () => {
  test(`${ROUNDS} rounds of SIGKILL lose no acknowledged write and leave nothing behind (seed ${seed})`, async () => {
    const report = await runCrashRounds({ seed, rounds: ROUNDS, log: (line) => process.stderr.write(`crash: ${line}\n`) });
    process.stderr.write(`crash: ${JSON.stringify({ ...report, lost: report.lost.length, problems: report.problems.length })}\n`);
    assert.deepEqual(report.problems, []);
    assert.deepEqual(report.lost, []);
    assert.equal(report.rounds, ROUNDS);
    assert.ok(report.acknowledged > ROUNDS * 5, `only ${report.acknowledged} writes were acknowledged`);
    assert.ok(report.checked >= report.acknowledged / 4, `only ${report.checked} reads back`);
  });
});

describe('an export killed with the service', { timeout: 120_000 }, () => {
  test('its ffmpeg outlives the SIGKILL (it ignores SIGPIPE) and is ended by the next start, from the process ledger', async () => {
    const dataDir = tempDir('backlot-crash-export-');
    let svc = await startService({ dataDir, keepDataDir: true });
    let ffmpeg: Proc | undefined;
    try {
      const token = svc.studio('alpha', ['timeline', 'assets', 'jobs']);
      const clip = await realAsset(svc.port, token, 'video', 20);
      const c = client(svc.port, token);
      const target = { sample_rate: 48000, fps: 30, width: 1280, height: 720 };
      const seq = await c.post('/timeline', { name: 'long export', target, tracks: { V1: [{ asset_id: clip.id, start: 0, in: 0, duration: 20 }] } });
      assert.equal(seq.status, 201, seq.text);
      const job = await c.post(`/timeline/${seq.json.id}:export`, {});
      assert.equal(job.status, 202, job.text);
      await until(() => (ffmpeg = descendants(svc.child.pid!).find((p) => p.comm === 'ffmpeg')) !== undefined, 'the export to start ffmpeg');
      svc.child.kill('SIGKILL');
      await svc.stop();
      await sleep(500);
      assert.ok(stillAlive(ffmpeg!), 'ffmpeg ended with the service by itself: this test proves nothing then');
      assert.ok(readdirSync(join(dataDir, 'blobs', '.tmp')).length > 0, 'the export had its temp files');

      svc = await startService({ dataDir, keepDataDir: true });
      await until(() => !stillAlive(ffmpeg!), 'the leftover ffmpeg to end', 10_000);
      assert.match(svc.stderr(), new RegExp(`ended process group ${ffmpeg!.pgid} \\(job:${job.json.id}\\)`));
      const after = await client(svc.port, token).get(`/jobs/${job.json.id}`);
      assert.equal(after.json.state, 'failed');
      assert.equal(after.json.last_error, INTERRUPTED_MESSAGE);
      assert.deepEqual(readdirSync(join(dataDir, 'blobs', '.tmp')), []);
    } finally {
      if (ffmpeg && stillAlive(ffmpeg)) process.kill(-ffmpeg.pgid, 'SIGKILL');
      await svc.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a kill while serve writes its server file', () => {
  test('the temp file of a dead server is removed at the next start; a live process\'s is left alone', async () => {
    const dataDir = tempDir('backlot-crash-server-');
    try {
      // What a SIGKILL between writing server.json.<pid>.tmp and its rename leaves (pid 2147483646 never exists).
      mkdirSync(dataDir, { recursive: true });
      writeFileSync(join(dataDir, 'server.json.2147483646.tmp'), '{"pid":2147483646,"port":1}\n');
      writeFileSync(join(dataDir, `server.json.${process.pid}.tmp`), '{}\n');
      const svc = await startService({ dataDir, keepDataDir: true });
      try {
        assert.deepEqual(readdirSync(dataDir).filter((n) => n.startsWith('server.json')).sort(), ['server.json', `server.json.${process.pid}.tmp`]);
      } finally {
        await svc.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
