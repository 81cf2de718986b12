import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createService, type Service } from '../service/app';
import { openDatabase } from '../service/db/open';
import type { JobContext, JobWork } from '../service/jobs';
import { createJobsStore, type JobRow } from '../service/jobs/store';
import { runCli, tempDir } from './helpers/service';
import { openSse } from './helpers/sse';

/**
 * A runner job that runs its own `work` (what export uses) instead of steps,
 * in-process through createService: outcomes, cancel and its point of no
 * return, progress, log lines, and service close.
 */

const KILL_GRACE_MS = 500;

let dataDir: string;
let service: Service;
let port: number;
let token: string;

function register(dir: string, id: string): string {
  assert.equal(runCli(['studio', 'add', id, '--data-dir', dir]).code, 0);
  return runCli(['token', 'create', '--studio', id, '--caps', 'jobs', '--data-dir', dir]).stdout.trim();
}

before(async () => {
  dataDir = tempDir();
  token = register(dataDir, 'alpha');
  service = createService({ dataDir, jobs: { heartbeatMs: 100, killGraceMs: KILL_GRACE_MS } });
  port = (await service.listen(0)).port;
});
after(async () => {
  await service.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A promise and its resolver. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves when the signal aborts. */
const aborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));

/** `job` channel events of one job, as the rows they carry. */
function jobEvents(svc: Service, studioId: string) {
  const rows: Record<string, unknown>[] = [];
  const off = svc.jobs.hub.onChannel(studioId, (e) => {
    const m = /^event: job\ndata: (.*)$/m.exec(e.frame);
    if (m) rows.push(JSON.parse(m[1]!));
  });
  return { of: (id: string) => rows.filter((r) => r.id === id), off };
}

const spec = (work: JobWork, more: { cleanup?: () => void; data?: Record<string, unknown> } = {}) => ({
  studioId: 'alpha',
  kind: 'export' as const,
  title: 'work',
  timelineId: '01J0000000000000000000TL00',
  work,
  ...more,
});

describe('runJob with work: outcomes', () => {
  test('resolves: succeeded with what it returned as data; no cleanup', async () => {
    let cleaned = 0;
    const run = service.jobs.runJob(spec(async () => ({ asset_id: 'A1', item_id: 'I1' }), { cleanup: () => void cleaned++ }));
    assert.equal(run.job.state, 'running');
    assert.equal(run.job.kind, 'export');
    const done = await run.done;
    assert.equal(done.state, 'succeeded');
    assert.deepEqual(JSON.parse(done.data), { asset_id: 'A1', item_id: 'I1' });
    assert.equal(done.last_error, null);
    assert.equal(done.cancel_requested_at, null);
    assert.notEqual(done.finished_at, null);
    assert.equal(cleaned, 0);
    assert.deepEqual(service.jobs.store.get(run.job.id), done);
  });

  test('resolves with nothing: the data given at the start is kept', async () => {
    const done = await service.jobs.runJob(spec(async () => undefined, { data: { started: true } })).done;
    assert.equal(done.state, 'succeeded');
    assert.deepEqual(JSON.parse(done.data), { started: true });
  });

  test('throws: failed with its message; cleanup ran after the work ended, once', async () => {
    const order: string[] = [];
    const run = service.jobs.runJob(
      spec(
        async () => {
          await new Promise((r) => setTimeout(r, 10));
          order.push('work');
          throw new Error('ffmpeg exited with code 1: Invalid data found');
        },
        { cleanup: () => void order.push('cleanup') },
      ),
    );
    const done = await run.done;
    assert.equal(done.state, 'failed');
    assert.equal(done.last_error, 'ffmpeg exited with code 1: Invalid data found');
    assert.notEqual(done.finished_at, null);
    assert.deepEqual(order, ['work', 'cleanup']);
    const s = await openSse(port, `/jobs/${run.job.id}/logs`, token);
    await s.closed;
    assert.deepEqual(JSON.parse(s.events.at(-1)!.data), { state: 'failed', last_error: 'ffmpeg exited with code 1: Invalid data found' });
  });

  test('throws something that is not an Error, or throws at once: still failed with a message', async () => {
    const text = await service.jobs.runJob(spec(async () => Promise.reject('boom'))).done;
    assert.deepEqual([text.state, text.last_error], ['failed', 'boom']);
    const sync: JobWork = () => {
      throw new Error('not even a promise');
    };
    const at = await service.jobs.runJob(spec(sync)).done;
    assert.deepEqual([at.state, at.last_error], ['failed', 'not even a promise']);
  });

  test('a cleanup that throws does not change the outcome', async () => {
    const done = await service.jobs.runJob(
      spec(async () => Promise.reject(new Error('real reason')), {
        cleanup: () => {
          throw new Error('cleanup broke');
        },
      }),
    ).done;
    assert.deepEqual([done.state, done.last_error], ['failed', 'real reason']);
  });

  test('steps and work together, or neither: refused before any job is made', async () => {
    const count = () => service.jobs.store.list({ studioId: 'alpha' }, null, 10_000).length;
    const before = count();
    assert.throws(
      () => service.jobs.runJob({ ...spec(async () => undefined), steps: [{ name: 'x', command: [process.execPath, '-e', ''] }] }),
      /steps or work/,
    );
    assert.throws(() => service.jobs.runJob({ studioId: 'alpha', kind: 'export', title: 'nothing' }), /steps or work/);
    assert.equal(count(), before);
  });
});

describe('runJob with work: cancel', () => {
  test('cancelJob while the work waits for the abort: cancelled, requested time set, cleanup ran, done resolves', async () => {
    const started = deferred();
    const order: string[] = [];
    let grace = -1;
    const events = jobEvents(service, 'alpha');
    const run = service.jobs.runJob(
      spec(
        async (ctx) => {
          started.resolve();
          await aborted(ctx.signal);
          grace = ctx.graceMs();
          order.push('work ended');
          throw new Error('ffmpeg was ended by SIGTERM');
        },
        { cleanup: () => void order.push('cleanup') },
      ),
    );
    try {
      await started.promise;
      const row = await service.jobs.cancelJob(run.job.id);
      assert.equal(row.state, 'cancelled');
      assert.equal(row.last_error, null, 'a cancel is an outcome, not an error');
      assert.notEqual(row.cancel_requested_at, null);
      assert.notEqual(row.finished_at, null);
      assert.deepEqual(order, ['work ended', 'cleanup']);
      assert.equal(grace, KILL_GRACE_MS);
      assert.deepEqual(await run.done, row);
      // The request is announced while the job still runs, then the end.
      assert.deepEqual(
        events.of(run.job.id).map((e) => [e.state, e.cancel_requested_at !== null]),
        [['running', false], ['running', true], ['cancelled', true]],
      );
      await assert.rejects(service.jobs.cancelJob(run.job.id), (err: any) => err.status === 409 && err.code === 'job_finished');
    } finally {
      events.off();
    }
  });

  test('two cancels at once: one request, both resolve with the cancelled job', async () => {
    const started = deferred();
    let cleaned = 0;
    const events = jobEvents(service, 'alpha');
    const run = service.jobs.runJob(
      spec(
        async (ctx) => {
          started.resolve();
          await aborted(ctx.signal);
          throw ctx.signal.reason;
        },
        { cleanup: () => void cleaned++ },
      ),
    );
    try {
      await started.promise;
      const [a, b] = await Promise.all([service.jobs.cancelJob(run.job.id), run.cancel()]);
      assert.equal(a.state, 'cancelled');
      assert.deepEqual(a, b);
      assert.equal(cleaned, 1);
      assert.equal(events.of(run.job.id).filter((e) => e.state === 'running' && e.cancel_requested_at !== null).length, 1);
    } finally {
      events.off();
    }
  });

  test('work that resolves after the abort (its point of no return passed): succeeded, no cleanup', async () => {
    const started = deferred();
    let cleaned = 0;
    const run = service.jobs.runJob(
      spec(
        async (ctx) => {
          started.resolve();
          await aborted(ctx.signal);
          return { asset_id: 'committed' };
        },
        { cleanup: () => void cleaned++ },
      ),
    );
    await started.promise;
    const row = await service.jobs.cancelJob(run.job.id);
    assert.equal(row.state, 'succeeded');
    assert.deepEqual(JSON.parse(row.data), { asset_id: 'committed' });
    assert.equal(row.last_error, null);
    assert.notEqual(row.cancel_requested_at, null, 'the request is still recorded');
    assert.equal(cleaned, 0);
    assert.deepEqual(await run.done, row);
  });
});

describe('runJob with work: progress and log', () => {
  test('ctx.progress: num clamped to den, out-of-range ignored, repeats write nothing', async () => {
    const events = jobEvents(service, 'alpha');
    const gate = deferred();
    const checked = deferred<{ first: JobRow; again: JobRow }>();
    const run = service.jobs.runJob(
      spec(async (ctx: JobContext) => {
        ctx.progress(0, 4000);
        ctx.progress(0, 4000);
        ctx.progress(1500, 4000);
        const first = service.jobs.store.get(ctx.job.id)!;
        await new Promise((r) => setTimeout(r, 15));
        ctx.progress(1500, 4000);
        ctx.progress(1500, 4000);
        const again = service.jobs.store.get(ctx.job.id)!;
        ctx.progress(9000, 4000);
        ctx.progress(12000, 4000);
        ctx.progress(-1, 4000);
        ctx.progress(1.5, 4000);
        ctx.progress(Number.NaN, 4000);
        ctx.progress(5, -1);
        checked.resolve({ first, again });
        await gate.promise;
        return undefined;
      }),
    );
    try {
      const { first, again } = await checked.promise;
      assert.deepEqual([first.progress_num, first.progress_den], [1500, 4000]);
      assert.equal(again.updated_at, first.updated_at, 'a repeat does not write the row');
      const live = service.jobs.store.get(run.job.id)!;
      assert.deepEqual([live.progress_num, live.progress_den], [4000, 4000], 'clamped to den; bad values ignored');
      gate.resolve();
      const done = await run.done;
      assert.deepEqual([done.progress_num, done.progress_den], [4000, 4000]);
      assert.deepEqual(
        events.of(run.job.id).map((e) => [e.state, e.progress_num, e.progress_den]),
        [
          ['running', 0, 0],
          ['running', 0, 4000],
          ['running', 1500, 4000],
          ['running', 4000, 4000],
          ['succeeded', 4000, 4000],
        ],
        'one event per change, none for repeats or ignored values',
      );
    } finally {
      gate.resolve();
      events.off();
    }
  });

  test('ctx.progress after the job ended changes nothing', async () => {
    let kept = null as JobContext | null;
    const done = await service.jobs.runJob(
      spec(async (ctx) => {
        kept = ctx;
        ctx.progress(1, 2);
      }),
    ).done;
    kept!.progress(2, 2);
    assert.deepEqual(service.jobs.store.get(done.id), done);
  });

  test('ctx.log lines reach the log file and the log stream, long ones cut; no step events', async () => {
    const long = 'é'.repeat(10_000); // 20 000 bytes: two pieces of at most 16 KiB
    const run = service.jobs.runJob(
      spec(async (ctx) => {
        ctx.log(['ffmpeg -hide_banner ...', 'filter graph:']);
        ctx.log([long]);
        ctx.log([]);
        ctx.log(['checked']);
        return { ok: true };
      }),
    );
    const done = await run.done;
    assert.equal(done.state, 'succeeded');
    const s = await openSse(port, `/jobs/${run.job.id}/logs`, token);
    await s.closed;
    assert.deepEqual(s.events.map((m) => m.event), ['line', 'line', 'line', 'line', 'line', 'end']);
    const lines = s.events.filter((m) => m.event === 'line').map((m) => JSON.parse(m.data));
    assert.deepEqual(lines.map((l) => l.n), [1, 2, 3, 4, 5]);
    assert.equal(lines[0].text, 'ffmpeg -hide_banner ...');
    assert.equal(lines[1].text, 'filter graph:');
    assert.equal(lines[2].text + lines[3].text, long);
    assert.ok(Buffer.byteLength(lines[2].text) <= 16 * 1024);
    assert.equal(lines[4].text, 'checked');
    assert.deepEqual(JSON.parse(s.events.at(-1)!.data), { state: 'succeeded', last_error: null });
    const file = readFileSync(join(dataDir, 'jobs', `${run.job.id}.log`), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(file.map((r) => r.text), lines.map((l) => l.text));
  });

  test('ctx.log while running is heard live by an open log stream', async () => {
    const gate = deferred();
    const run = service.jobs.runJob(
      spec(async (ctx) => {
        ctx.log(['before']);
        await gate.promise;
        ctx.log(['after']);
      }),
    );
    const s = await openSse(port, `/jobs/${run.job.id}/logs`, token);
    await s.waitFor((m) => m.event === 'line' && JSON.parse(m.data).text === 'before');
    gate.resolve();
    await s.waitFor((m) => m.event === 'line' && JSON.parse(m.data).text === 'after');
    await run.done;
    await s.closed;
    assert.equal(s.events.at(-1)!.event, 'end');
  });
});

describe('runJob with work: service close', () => {
  test('close() cancels a running work job: signal aborted with the shorter grace, cleanup ran, job cancelled', async () => {
    const dir = tempDir();
    register(dir, 'alpha');
    const svc = createService({ dataDir: dir, jobs: { killGraceMs: 5000 } });
    await svc.listen(0);
    const started = deferred();
    let grace = -1;
    let cleaned = 0;
    const run = svc.jobs.runJob(
      spec(
        async (ctx) => {
          started.resolve();
          await aborted(ctx.signal);
          grace = ctx.graceMs();
          throw new Error('ended');
        },
        { cleanup: () => void cleaned++ },
      ),
    );
    await started.promise;
    await svc.close();
    const done = await run.done;
    assert.equal(done.state, 'cancelled');
    assert.equal(cleaned, 1);
    assert.ok(grace >= 0 && grace < 5000, `the stop's grace is shorter than a cancel's: ${grace}`);
    const db = openDatabase(dir);
    try {
      const row = createJobsStore(db).get(run.job.id)!;
      assert.equal(row.state, 'cancelled');
      assert.notEqual(row.cancel_requested_at, null);
      assert.notEqual(row.finished_at, null);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
