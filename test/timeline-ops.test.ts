import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createAssets, type AssetsDomain } from '../service/assets';
import { ApiError } from '../service/core/errors';
import { newId } from '../service/core/ids';
import { nowIso } from '../service/core/time';
import { openDatabase, type Db } from '../service/db/open';
import type { MediaProbe } from '../service/media/types';
import { createStudiosStore } from '../service/studios';
import { createTimelineOps, type TimelineOps } from '../service/timeline/operations';
import type { Probes } from '../service/timeline/probes';
import { createTimelineStore, type TimelineStore } from '../service/timeline/store';
import { tempDir } from './helpers/service';

/**
 * The timeline's operations in process, with a probe the test releases: what
 * happens while a write waits for ffprobe (the reads that decide the write are
 * made again inside its transaction).
 */

let dir: string;
let db: Db;
let assets: AssetsDomain;
let store: TimelineStore;
let ops: TimelineOps;
let probed: MediaProbe | null = null;
let release: () => void = () => {};
let probeCalls = 0;

before(() => {
  dir = tempDir('backlot-tl-ops-');
  db = openDatabase(dir);
  const studios = createStudiosStore(db);
  studios.add({ id: 'alpha', name: 'alpha' });
  assets = createAssets(db, {
    dataDir: dir,
    uploadLimit: 1 << 20,
    diskHeadroom: 0,
    secret: studios.cursorSecret(),
    studioDirs: () => ({ stage_dir: dir, data_dir: dir }),
  });
  store = createTimelineStore(db, { assets: assets.store });
  const probes: Probes = {
    cached: () => probed,
    probe: () =>
      new Promise<MediaProbe>((resolve) => {
        probeCalls++;
        release = () => {
          probed = { version: 1, format: 'mov', duration_s: 2, video: null, audio: null };
          resolve(probed);
        };
      }),
  };
  const editor = { openTimeline: () => ({ opened: true as const, surface: '' }) };
  ops = createTimelineOps({ store, assets, probes, editor });
});

after(() => {
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A video asset row of alpha's with no length hint (so a write probes it). */
function unmeasuredVideo(): string {
  const id = newId();
  assets.store.create(
    { id, sha256: `sha-${id}`, kind: 'video', mime: 'video/mp4', size: 1, ext: '.mp4', pinned: 0, width: null, height: null, duration_s: null, fps: null, created_at: nowIso() },
    'alpha',
    `${id}.mp4`,
  );
  return id;
}

/** Waits until the operation has reached the probe. */
const probing = () => new Promise((resolve) => setImmediate(resolve));

describe('append without timeline_id: the sequence is chosen inside the write', () => {
  test('the most recent sequence deleted while the asset is probed: the append goes to the next most recent', async () => {
    probed = null;
    const older = await ops.create('alpha', { name: 'older' });
    const newer = await ops.create('alpha', { name: 'newer' });
    const asset = unmeasuredVideo();
    const pending = ops.append('alpha', { asset_id: asset });
    await probing();
    store.delete('alpha', newer.id, () => {});
    release();
    const row = await pending;
    assert.equal(row.id, older.id);
    assert.deepEqual(JSON.parse(row.tracks), { V1: [{ asset_id: asset, start: 0, in: 0, duration: 2 }] });
  });

  test('the only sequence deleted while the asset is probed: 409 no_timeline, nothing written', async () => {
    probed = null;
    for (const row of store.list({ studioId: 'alpha', readAll: false }, null, 100)) store.delete('alpha', row.id, () => {});
    const only = await ops.create('alpha', { name: 'only' });
    const pending = ops.append('alpha', { asset_id: unmeasuredVideo() });
    await probing();
    store.delete('alpha', only.id, () => {});
    release();
    await assert.rejects(pending, (err: unknown) => err instanceof ApiError && err.status === 409 && err.code === 'no_timeline');
    assert.equal(store.get(only.id)!.revision, 1);
  });
});

describe('limits come before any probe', () => {
  test('a create of more than 5000 clips over its tracks is 400 without probing a file', async () => {
    const asset = unmeasuredVideo();
    const tracks = { V1: Array.from({ length: 3000 }, (_, i) => ({ asset_id: asset, start: i })), V2: Array.from({ length: 2001 }, (_, i) => ({ asset_id: asset, start: i })) };
    probeCalls = 0;
    await assert.rejects(ops.create('alpha', { name: 'big', tracks }), (err: unknown) => err instanceof ApiError && err.status === 400);
    assert.equal(probeCalls, 0);
  });
});
