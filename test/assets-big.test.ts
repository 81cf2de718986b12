import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startService, type TestService } from './helpers/service';
import { uploadChunked } from './helpers/assets';

/**
 * A 4 GiB upload keeps the service's memory bounded (issue: RSS under 150 MB).
 * The body is generated chunk by chunk (never a file, never whole in memory)
 * and sent chunked; the service's peak RSS (VmHWM) is read from /proc after.
 */

const GiB = 1024 ** 3;
const TOTAL = 4 * GiB;
const CHUNK = 4 * 1024 * 1024;
const LIMIT_MB = 150;

let svc: TestService;
before(async () => {
  svc = await startService();
});
after(async () => {
  await svc.stop(); // removes the data dir and the 4 GiB blob with it
});

function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

test('a 4 GiB upload: stored whole, hash right, peak RSS under 150 MB', { timeout: 240_000 }, async (t) => {
  if (process.platform !== 'linux') return t.skip('reads /proc');
  const token = svc.studio('big', ['assets']);
  const block = randomBytes(CHUNK);
  const expected = createHash('sha256');
  function* body() {
    for (let sent = 0; sent < TOTAL; sent += CHUNK) {
      expected.update(block);
      yield block;
    }
  }
  const r = await uploadChunked(svc.port, token, body(), 'kind=video&filename=big.mp4');
  assert.equal(r.status, 201, r.body.toString());
  assert.equal(r.json.size, TOTAL);
  assert.equal(r.json.sha256, expected.digest('hex'));
  const peak = peakRssMb(svc.child.pid!);
  t.diagnostic(`service peak RSS ${peak.toFixed(1)} MB`);
  assert.ok(peak < LIMIT_MB, `peak RSS ${peak.toFixed(1)} MB`);
  assert.deepEqual(readdirSync(join(svc.dataDir, 'blobs', '.tmp')), []);
});
