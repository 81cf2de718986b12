import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { createService } from '../service/app';
import { client } from './helpers/http';
import { runCli, tempDir } from './helpers/service';
import { realAsset } from './helpers/timeline';

/**
 * A service's stop ends its own media children and refuses new ones for
 * itself only: another service in the same process (an embedder, a test, a
 * bench) goes on probing after the first has closed.
 */

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function serviceWithStudio() {
  const dataDir = tempDir();
  dirs.push(dataDir);
  assert.equal(runCli(['studio', 'add', 'cutter', '--data-dir', dataDir]).code, 0);
  const token = runCli(['token', 'create', '--studio', 'cutter', '--caps', 'assets,timeline', '--data-dir', dataDir]).stdout.trim();
  const service = createService({ dataDir });
  const { port } = await service.listen(0);
  return { service, port, token };
}

test('after one service in the process has closed, another still probes (its default durations and its plan work)', { timeout: 60_000 }, async () => {
  const first = await serviceWithStudio();
  await first.service.close();

  const second = await serviceWithStudio();
  try {
    const asset = await realAsset(second.port, second.token, 'video', 1);
    const c = client(second.port, second.token);
    const created = await c.post('/timeline', { name: 'after', target: { width: 64, height: 48, fps: 25 }, clips: [{ asset_id: asset.id }] });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.equal(created.json.tracks.V1[0].duration, 1, 'the length came from a probe');
    const plan = await c.get(`/timeline/${created.json.id}:plan`);
    assert.equal(plan.status, 200, JSON.stringify(plan.json));
    assert.equal(plan.json.path, 'copy');
  } finally {
    await second.service.close();
  }
});
