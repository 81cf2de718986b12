import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createService, type Service } from '../service/app';
import { openDatabase } from '../service/db/open';
import { newId } from '../service/core/ids';
import { INTERRUPTED_MESSAGE, type RunStep } from '../service/jobs';
import { groupMembers } from '../service/core/processes';
import { createJobsStore, type JobRow } from '../service/jobs/store';
import { client } from './helpers/http';
import { assertError } from './helpers/scenario';
import { runCli, startService, tempDir } from './helpers/service';
import { openSse } from './helpers/sse';

/**
 * The job runner with real child processes, in-process through createService
 * (no public route starts a runner job yet: export and the launcher will).
 * Also shutdown, restart recovery, listener cleanup and slow clients.
 */

const NODE = process.execPath;
const HIGH_WATER = 64 * 1024;

let dataDir: string;
let service: Service;
let port: number;
const tokens: Record<string, string> = {};

function register(dir: string, id: string): string {
  assert.equal(runCli(['studio', 'add', id, '--data-dir', dir]).code, 0);
  return runCli(['token', 'create', '--studio', id, '--caps', 'jobs', '--data-dir', dir]).stdout.trim();
}

before(async () => {
  dataDir = tempDir();
  tokens.alpha = register(dataDir, 'alpha');
  tokens.beta = register(dataDir, 'beta');
  service = createService({ dataDir, jobs: { heartbeatMs: 100, highWater: HIGH_WATER, killGraceMs: 500 } });
  port = (await service.listen(0)).port;
});
after(async () => {
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const alpha = () => client(port, tokens.alpha);
const script = (name: string, code: string, ...args: string[]): RunStep => ({ name, command: [NODE, '-e', code, ...args] });

/** Whether a pid is a live process (a zombie is not). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return false;
  }
}

describe('runner', () => {
  test('steps run in order as step and line events; progress from a line parser; onSuccess sets data', async () => {
    const run = service.jobs.runJob({
      studioId: 'alpha',
      kind: 'install',
      title: 'install thing',
      steps: [
        script('fetch', 'console.log("out a"); console.error("err b"); console.log("progress 1/2")'),
        script('build', 'console.log("progress 2/2"); console.log("multi\\nline")'),
      ],
      onLine: (line) => {
        const m = /^progress (\d+)\/(\d+)$/.exec(line);
        return m ? { num: Number(m[1]), den: Number(m[2]) } : undefined;
      },
      onSuccess: () => ({ result: 'ok' }),
    });
    assert.equal(run.job.state, 'running');
    const s = await openSse(port, `/jobs/${run.job.id}/logs`, tokens.alpha);
    const done = await run.done;
    await s.closed;
    assert.equal(done.state, 'succeeded');
    assert.deepEqual([done.progress_num, done.progress_den], [2, 2]);
    assert.deepEqual(JSON.parse(done.data), { result: 'ok' });
    const kinds = s.events.map((m) => m.event);
    assert.deepEqual(kinds, ['step', 'line', 'line', 'line', 'step', 'line', 'line', 'line', 'end']);
    const steps = s.events.filter((m) => m.event === 'step').map((m) => JSON.parse(m.data));
    assert.deepEqual(steps.map((x) => [x.step, x.index]), [['fetch', 0], ['build', 1]]);
    const lines = s.events.filter((m) => m.event === 'line').map((m) => JSON.parse(m.data));
    assert.deepEqual(new Set(lines.slice(0, 3).map((l) => l.text)), new Set(['out a', 'err b', 'progress 1/2']));
    assert.deepEqual(lines.slice(3).map((l) => [l.text, l.step]), [['progress 2/2', 'build'], ['multi', 'build'], ['line', 'build']]);
    assert.deepEqual(lines.map((l) => l.n), [1, 2, 3, 4, 5, 6]);
    assert.deepEqual(JSON.parse(s.events.at(-1)!.data), { state: 'succeeded', last_error: null });
  });

  test('arguments reach the program as they are: no shell', async () => {
    const run = service.jobs.runJob({
      studioId: 'alpha', kind: 'build', title: 't',
      steps: [script('echo', 'console.log(process.argv[1])', '$(echo pwned); `id` | cat > x && echo *')],
    });
    await run.done;
    const s = await openSse(port, `/jobs/${run.job.id}/logs`, tokens.alpha);
    await s.closed;
    const lines = s.events.filter((m) => m.event === 'line').map((m) => JSON.parse(m.data).text);
    assert.deepEqual(lines, ['$(echo pwned); `id` | cat > x && echo *']);
  });

  test('a failing step ends the job failed, names the step and code, runs cleanup, skips later steps', async () => {
    let cleaned = 0;
    const run = service.jobs.runJob({
      studioId: 'alpha', kind: 'build', title: 't',
      steps: [script('ok', 'console.log(1)'), script('bad', 'process.exit(3)'), script('never', 'console.log(2)')],
      cleanup: () => {
        cleaned++;
      },
    });
    const done = await run.done;
    assert.equal(done.state, 'failed');
    assert.equal(done.last_error, 'Step "bad" exited with code 3.');
    assert.notEqual(done.finished_at, null);
    assert.equal(cleaned, 1);
    const s = await openSse(port, `/jobs/${run.job.id}/logs`, tokens.alpha);
    await s.closed;
    assert.deepEqual(s.events.filter((m) => m.event === 'step').map((m) => JSON.parse(m.data).step), ['ok', 'bad']);
    assert.deepEqual(JSON.parse(s.events.at(-1)!.data), { state: 'failed', last_error: 'Step "bad" exited with code 3.' });
  });

  test('a program that does not exist fails the job', async () => {
    const done = await service.jobs.runJob({
      studioId: 'alpha', kind: 'download', title: 't', steps: [{ name: 'x', command: ['/nonexistent/program-xyz'] }],
    }).done;
    assert.equal(done.state, 'failed');
    assert.match(done.last_error!, /Step "x" could not start/);
  });

  test('cancel ends the whole process group (SIGTERM ignored: SIGKILL), runs cleanup, ends cancelled', async () => {
    const partial = join(dataDir, 'partial.out');
    const pids: number[] = [];
    let ready!: () => void;
    const started = new Promise<void>((r) => (ready = r));
    const grandchild = `process.on("SIGTERM", () => {}); console.log("child " + process.pid); setInterval(() => {}, 1000)`;
    const leader = `
      const { spawn } = require("node:child_process");
      require("node:fs").writeFileSync(process.argv[1], "partial");
      process.on("SIGTERM", () => {});
      for (let i = 0; i < 2; i++) spawn(process.execPath, ["-e", ${JSON.stringify(grandchild)}], { stdio: ["ignore", "inherit", "inherit"] });
      console.log("leader " + process.pid);
      setInterval(() => {}, 1000);`;
    const run = service.jobs.runJob({
      studioId: 'alpha', kind: 'export', title: 'export', timelineId: '01J0000000000000000000TL00',
      steps: [script('encode', leader, partial)],
      onLine: (line) => {
        const m = /^(leader|child) (\d+)$/.exec(line);
        if (m) pids.push(Number(m[2]));
        if (pids.length === 3) ready();
      },
      cleanup: () => rmSync(partial, { force: true }),
    });
    const events = await openSse(port, '/events', tokens.alpha);
    try {
      await started;
      assert.ok(existsSync(partial));
      assert.ok(pids.every(alive));
      const done = await run.cancel();
      assert.equal(done.state, 'cancelled');
      assert.equal(done.last_error, null);
      assert.notEqual(done.cancel_requested_at, null);
      assert.deepEqual(pids.filter(alive), [], 'no process of the group is alive');
      assert.equal(existsSync(partial), false, 'cleanup removed the partial output');
      await events.waitFor((m) => m.event === 'job' && JSON.parse(m.data).id === run.job.id && JSON.parse(m.data).state === 'cancelled');
    } finally {
      events.close();
    }
    // Cancelling a finished job: 409.
    await assert.rejects(service.jobs.cancelJob(run.job.id), (err: any) => err.status === 409 && err.code === 'job_finished');
  });

  /**
   * A leader that prints its pid and its child's, then (after the child is
   * ready) exits `exitCode` or, with null, waits for SIGTERM (which ends it at
   * once). The child has stdio 'ignore' (so the leader's pipes close when the
   * leader exits), ignores SIGTERM and keeps rewriting the partial file.
   */
  const leaderWithStubbornChild = (exitCode: number | null): string => {
    const child = `process.on("SIGTERM", () => {});
      const fs = require("node:fs");
      fs.writeFileSync(process.argv[1], "start");
      setInterval(() => fs.writeFileSync(process.argv[1], String(Date.now())), 5);`;
    return `
      const { spawn } = require("node:child_process");
      const fs = require("node:fs");
      const path = process.argv[1];
      const c = spawn(process.execPath, ["-e", ${JSON.stringify(child)}, path], { stdio: "ignore" });
      console.log("pids " + process.pid + " " + c.pid);
      const wait = setInterval(() => {
        if (!fs.existsSync(path)) return;
        clearInterval(wait);
        console.log("ready");
        ${exitCode === null ? '' : `process.exit(${exitCode});`}
      }, 10);
      setInterval(() => {}, 1000);`;
  };

  /** Runs `leaderWithStubbornChild`; `ready` resolves with the group's pids once the child writes. */
  const runStubborn = (partial: string, exitCode: number | null) => {
    let pids: number[] = [];
    let ready!: (pids: number[]) => void;
    const started = new Promise<number[]>((r) => (ready = r));
    const run = service.jobs.runJob({
      studioId: 'alpha', kind: 'export', title: 'stubborn',
      steps: [script('encode', leaderWithStubbornChild(exitCode), partial)],
      onLine: (line) => {
        const m = /^pids (\d+) (\d+)$/.exec(line);
        if (m) pids = [Number(m[1]), Number(m[2])];
        if (line === 'ready') ready(pids);
      },
      cleanup: () => rmSync(partial, { force: true }),
    });
    return { run, started };
  };

  const killAll = (pids: number[]) => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  };

  test('cancel waits for the whole group, not only the leader, before cleanup and the end', async () => {
    const partial = join(dataDir, 'stubborn-cancel.out');
    const { run, started } = runStubborn(partial, null);
    const pids = await started;
    try {
      assert.ok(pids.every(alive));
      const done = await run.cancel();
      assert.equal(done.state, 'cancelled');
      assert.deepEqual(groupMembers(pids[0]!), [], 'no process of the group is alive');
      assert.deepEqual(pids.filter(alive), []);
      assert.equal(existsSync(partial), false, 'cleanup ran after the group was gone');
    } finally {
      killAll(pids);
    }
  });

  test('a failed step ends only once the processes its leader left behind are gone', async () => {
    const partial = join(dataDir, 'stubborn-fail.out');
    const { run, started } = runStubborn(partial, 3);
    const pids = await started;
    try {
      const done = await run.done;
      assert.equal(done.state, 'failed');
      assert.equal(done.last_error, 'Step "encode" exited with code 3.');
      assert.deepEqual(groupMembers(pids[0]!), [], 'no process of the group is alive');
      assert.deepEqual(pids.filter(alive), []);
      assert.equal(existsSync(partial), false, 'cleanup ran after the group was gone');
    } finally {
      killAll(pids);
    }
  });

  test("runner jobs show to their own studio only, and cannot be changed through /jobs", async () => {
    const run = service.jobs.runJob({
      studioId: 'alpha', kind: 'export', title: 'slow', timelineId: '01J0000000000000000000TL01',
      steps: [script('sleep', 'setTimeout(() => {}, 60000)')],
    });
    try {
      const got = await alpha().get(`/jobs/${run.job.id}`);
      assert.equal(got.status, 200);
      assert.deepEqual([got.json.kind, got.json.state, got.json.timeline_id], ['export', 'running', '01J0000000000000000000TL01']);
      assert.ok((await alpha().get('/jobs?limit=500')).json.items.some((j: any) => j.id === run.job.id));
      assertError(await client(port, tokens.beta).get(`/jobs/${run.job.id}`), 404, 'not_found');
      assertError(await alpha().patch(`/jobs/${run.job.id}`, { state: 'cancelled' }), 403, 'not_a_task');
      assertError(await alpha().post(`/jobs/${run.job.id}/logs`, { lines: ['x'] }), 403, 'not_a_task');
      assertError(await alpha().post(`/jobs/${run.job.id}:cancel`), 403, 'not_a_task');
    } finally {
      assert.equal((await service.jobs.cancelJob(run.job.id)).state, 'cancelled');
    }
  });

  test('cancelJob on a task job records the request only', async () => {
    const id = (await alpha().post('/jobs', { title: 't' })).json.id;
    const row = await service.jobs.cancelJob(id);
    assert.equal(row.state, 'running');
    assert.notEqual(row.cancel_requested_at, null);
  });
});

describe('streams hold nothing after the client goes', () => {
  test('many connect/disconnect cycles on logs and events leave no listener, timer or stream', async () => {
    const id = (await alpha().post('/jobs', { title: 't' })).json.id;
    await alpha().post(`/jobs/${id}/logs`, { lines: ['x'] });
    for (let round = 0; round < 10; round++) {
      const open = await Promise.all(
        Array.from({ length: 5 }, (_, i) => openSse(port, i % 2 ? '/events' : `/jobs/${id}/logs`, tokens.alpha)),
      );
      await Promise.all(open.map((s) => s.waitForComment(() => true)));
      assert.ok(service.jobs.hub.stats().streams >= 5);
      for (const s of open) s.close();
    }
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline && service.jobs.hub.stats().streams > 0) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(service.jobs.hub.stats(), { logListeners: 0, channelListeners: 0, streams: 0, maxBuffered: 0 });
  });

  test('a client that does not read is paused, not buffered for; it later gets every line in order', async () => {
    const id = (await alpha().post('/jobs', { title: 'loud' })).json.id;
    const s = await openSse(port, `/jobs/${id}/logs`, tokens.alpha);
    s.res.pause();
    const line = 'y'.repeat(1000);
    for (let i = 0; i < 12; i++) assert.equal((await alpha().post(`/jobs/${id}/logs`, { lines: Array(1000).fill(line) })).status, 204);
    // 12 MB appended; the stream holds at most its high-water mark plus one file read.
    assert.ok(service.jobs.hub.stats().maxBuffered <= HIGH_WATER + 300 * 1024, JSON.stringify(service.jobs.hub.stats()));
    await alpha().patch(`/jobs/${id}`, { state: 'succeeded' });
    s.res.resume();
    await s.closed;
    const ns = s.events.filter((m) => m.event === 'line').map((m) => Number(m.id));
    assert.equal(ns.length, 12_000);
    assert.ok(ns.every((n, i) => n === i + 1));
    assert.equal(s.events.at(-1)!.event, 'end');
  });

  test('an /events client that stops reading is disconnected once it is highWater behind', async () => {
    const s = await openSse(port, '/events', tokens.alpha);
    try {
      await s.waitForComment(() => true);
      assert.equal(service.jobs.hub.stats().channelListeners, 1);
      s.res.pause();
      // One event per turn of the event loop, so the stream only falls behind
      // once the socket buffers are full; far more than those hold in all.
      const data = { id: 'x', filler: 'z'.repeat(8 * 1024) };
      let sent = 0;
      while (sent < 8000 && service.jobs.hub.stats().channelListeners > 0) {
        service.jobs.publish('alpha', 'job', data);
        sent++;
        await new Promise((r) => setImmediate(r));
      }
      assert.equal(service.jobs.hub.stats().channelListeners, 0, 'the slow client was dropped');
      s.res.resume();
      await s.closed;
      assert.deepEqual(service.jobs.hub.stats(), { logListeners: 0, channelListeners: 0, streams: 0, maxBuffered: 0 });
    } finally {
      s.close();
    }
  });
});

describe('shutdown and restart', () => {
  test('close() cancels running runner jobs: group ended, cleanup run, job cancelled', async () => {
    const dir = tempDir();
    register(dir, 'alpha');
    const svc = createService({ dataDir: dir, jobs: { killGraceMs: 500 } });
    await svc.listen(0);
    const partial = join(dir, 'partial');
    writeFileSync(partial, 'x');
    let pid = 0;
    let ready!: () => void;
    const started = new Promise<void>((r) => (ready = r));
    const run = svc.jobs.runJob({
      studioId: 'alpha', kind: 'export', title: 't',
      steps: [script('sleep', 'process.on("SIGTERM", () => {}); console.log(process.pid); setInterval(() => {}, 1000)')],
      onLine: (l) => {
        pid = Number(l);
        ready();
      },
      cleanup: () => rmSync(partial),
    });
    await started;
    await svc.close();
    assert.equal(alive(pid), false);
    assert.equal(existsSync(partial), false);
    const db = openDatabase(dir);
    assert.equal(createJobsStore(db).get(run.job.id)!.state, 'cancelled');
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('SIGTERM ends open event streams and the service exits 0', async () => {
    const dir = tempDir();
    const token = register(dir, 'alpha');
    const svc = await startService({ dataDir: dir });
    const id = (await client(svc.port, token).post('/jobs', { title: 't' })).json.id;
    const logs = await openSse(svc.port, `/jobs/${id}/logs`, token);
    const events = await openSse(svc.port, '/events', token);
    await Promise.all([logs.waitForComment(() => true), events.waitForComment(() => true)]);
    const code = await svc.stop('SIGTERM');
    await Promise.all([logs.closed, events.closed]);
    assert.equal(code, 0);
    assert.equal(logs.events.filter((m) => m.event === 'end').length, 0, 'no end: the job did not finish');
  });

  test('on start, runner jobs a crash left running or queued are failed; task jobs stay', async () => {
    const dir = tempDir();
    const token = register(dir, 'alpha');
    const db = openDatabase(dir);
    const store = createJobsStore(db);
    const now = new Date().toISOString();
    const row = (kind: JobRow['kind'], state: JobRow['state']): JobRow => ({
      id: newId(), studio_id: 'alpha', kind, title: kind, state, progress_num: 1, progress_den: 4, last_error: null,
      cancel_requested_at: null, data: '{}', timeline_id: null, created_at: now, updated_at: now, finished_at: null,
    });
    const exportJob = store.insert(row('export', 'running'));
    const installJob = store.insert(row('install', 'queued'));
    const taskJob = store.insert(row('task', 'running'));
    db.close();
    const svc = await startService({ dataDir: dir });
    try {
      const c = client(svc.port, token);
      for (const j of [exportJob, installJob]) {
        const got = (await c.get(`/jobs/${j.id}`)).json;
        assert.equal(got.state, 'failed');
        assert.equal(got.last_error, INTERRUPTED_MESSAGE);
        assert.notEqual(got.finished_at, null);
      }
      assert.equal((await c.get(`/jobs/${taskJob.id}`)).json.state, 'running');
      const s = await openSse(svc.port, `/jobs/${exportJob.id}/logs`, token);
      await s.closed;
      assert.deepEqual(JSON.parse(s.events.at(-1)!.data), { state: 'failed', last_error: INTERRUPTED_MESSAGE });
    } finally {
      await svc.stop();
    }
  });
});
