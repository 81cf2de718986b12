import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { client } from './helpers/http';
import { startLauncher, type LauncherService } from './helpers/launcher';
import { openSse } from './helpers/sse';

/**
 * `job_output` on the launcher's event channel (docs/api.md §GET /launcher/events):
 * a job wrote log lines, naming the newest; throttled per job (the first line
 * at once, lines within the next 2 s folded into one event naming the newest);
 * never on a studio's own `/events`; nothing after the job finished.
 */

let svc: LauncherService;
before(async () => {
  svc = await startLauncher();
});
after(async () => {
  await svc.svc.stop();
});

test('job_output: the newest line, folded per job, on the launcher channel only', async () => {
  const token = svc.svc.studio('tasker', ['jobs']);
  const c = client(svc.svc.port, token);
  const launcher = await openSse(svc.svc.port, '/launcher/events', svc.l.cred);
  const own = await openSse(svc.svc.port, '/events', token);
  try {
    const job = await c.post('/jobs', { title: 'Upscale' });
    assert.equal(job.status, 201, job.text);
    const id = job.json.id;
    const outputs = () => launcher.events.filter((m) => m.event === 'job_output' && JSON.parse(m.data).id === id).map((m) => JSON.parse(m.data));

    assert.equal((await c.post(`/jobs/${id}/logs`, { lines: ['one'] })).status, 204);
    await launcher.waitFor((m) => m.event === 'job_output' && JSON.parse(m.data).n === 1);
    assert.equal((await c.post(`/jobs/${id}/logs`, { lines: ['two', 'x'.repeat(600)] })).status, 204);
    await launcher.waitFor((m) => m.event === 'job_output' && JSON.parse(m.data).n === 3, 1, 15_000);

    const seen = outputs();
    assert.deepEqual(seen.map((o) => o.n), [1, 3], 'one event per append here, naming its newest line; line 2 is never named');
    assert.deepEqual(Object.keys(seen[0]).sort(), ['at', 'id', 'n', 'studio_id', 'text']);
    assert.equal(seen[0].studio_id, 'tasker');
    assert.equal(seen[0].text, 'one');
    assert.equal(seen[1].text, `${'x'.repeat(500)}…`, 'cut to 500 characters');

    // The studio's own channel carries its job events, never job_output.
    assert.equal((await c.patch(`/jobs/${id}`, { state: 'succeeded' })).status, 200);
    await own.waitFor((m) => m.event === 'job' && JSON.parse(m.data).state === 'succeeded');
    assert.deepEqual(own.events.filter((m) => m.event === 'job_output'), []);
    assert.ok(own.events.some((m) => m.event === 'job'));
  } finally {
    launcher.close();
    own.close();
  }
});
