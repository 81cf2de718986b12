import assert from 'node:assert/strict';
import { appendFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { test } from 'node:test';
import { JobLogs, readRecords } from '../service/jobs/logs';
import { tempDir } from './helpers/service';

/** The per-job log files (service/jobs/logs.ts): numbering, descriptors, torn tails. */

const AT = '2026-01-01T00:00:00.000Z';
const openFds = () => readdirSync('/proc/self/fd').length;

test('line numbers continue across many jobs while descriptors stay bounded', () => {
  const dir = tempDir();
  const logs = new JobLogs(dir);
  const before = openFds();
  try {
    for (let round = 1; round <= 3; round++) {
      for (let j = 0; j < 400; j++) {
        const [r] = logs.appendLines(`job${j}`, [`round ${round}`], null, AT);
        assert.equal(r!.n, round);
      }
    }
    assert.ok(openFds() - before <= 260, `${openFds() - before} descriptors held`);
    const lines = readFileSync(logs.path('job7'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => [l.n, l.text]), [[1, 'round 1'], [2, 'round 2'], [3, 'round 3']]);
  } finally {
    logs.closeAll();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a torn last record (a crash mid-write) is cut and numbering continues', async () => {
  const dir = tempDir();
  try {
    const first = new JobLogs(dir);
    first.appendLines('j', ['a', 'b'], null, AT);
    first.appendStep('j', { step: 's', index: 0, at: AT });
    first.closeAll();
    appendFileSync(first.path('j'), '{"n":3,"text":"cut sho');
    const second = new JobLogs(dir);
    const [r] = second.appendLines('j', ['c'], 's', AT);
    assert.equal(r!.n, 3);
    second.closeAll();
    const { records } = await readRecords(second.path('j'), 0);
    assert.deepEqual(records.map((x) => JSON.parse(x.json).text ?? `step ${JSON.parse(x.json).step}`), ['a', 'b', 'step s', 'c']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
