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
    clipAssets: () => Promise.reject(new Error('not used by these tests')),
  };
  const editor = { openTimeline: () => ({ opened: true as const, surface: '' }), isOpen: () => false };
  ops = createTimelineOps({ store, assets, probes, editor });
});

after(() => {
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A video asset row of alpha's with no length hint (so a write probes it). */
function unmeasuredVideo(duration_s: number | null = null): string {
  const id = newId();
  assets.store.create(
    { id, sha256: `sha-${id}`, kind: 'video', mime: 'video/mp4', size: 1, ext: '.mp4', pinned: 0, width: null, height: null, duration_s, fps: null, created_at: nowIso() },
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

/** An asset made unreadable while a sequence names it (reclaim itself never takes such an asset). */
function unreadable(assetId: string): void {
  db.prepare('UPDATE assets SET reclaimed_at = ? WHERE id = ?').run(nowIso(), assetId);
}

const invalidAt = (where: string[]) => (err: unknown) => {
  assert.ok(err instanceof ApiError && err.code === 'invalid_timeline', String(err));
  const clips = (err.details as { clips: { track: string; index: number }[] }).clips;
  for (const w of where) assert.ok(clips.some((c) => `${c.track}:${c.index}` === w), `${w} in ${JSON.stringify(clips)}`);
  return true;
};

describe('clips already present, and assets that became unreadable', () => {
  const ANY = { kind: 'any' } as const;

  test('PATCH: a clip whose asset the current revision names may stay; the same asset cannot be appended', async () => {
    probed = null;
    const kept = unmeasuredVideo(2);
    const row = await ops.create('alpha', { name: 'present', tracks: { V1: [{ asset_id: kept, start: 0 }] } });
    unreadable(kept);
    const patched = await ops.update('alpha', row.id, { name: 'renamed', tracks: { V1: [{ asset_id: kept, start: 1 }] } }, ANY);
    assert.equal(patched.revision, 2);
    assert.deepEqual(JSON.parse(patched.tracks), { V1: [{ asset_id: kept, start: 1, in: 0, duration: 2 }] });
    await assert.rejects(ops.append('alpha', { asset_id: kept, timeline_id: row.id }), invalidAt(['V1:1']));
    assert.equal(store.get(row.id)!.revision, 2);
  });

  test('revert is strict: an asset the current revision also names does not excuse the revision', async () => {
    const shared = unmeasuredVideo(2);
    const row = await ops.create('alpha', { name: 'strict', tracks: { V1: [{ asset_id: shared, start: 0 }] } });
    await ops.update('alpha', row.id, { name: 'second' }, ANY);
    unreadable(shared);
    assert.throws(() => ops.revert('alpha', row.id, 1, ANY), invalidAt(['V1:0']));
    assert.equal(store.get(row.id)!.revision, 2);
  });
});

describe('lengths and problem lists', () => {
  test("a probed length wins over the asset's duration_s hint", async () => {
    probed = { version: 1, format: 'mov', duration_s: 2, video: null, audio: null };
    const row = await ops.create('alpha', { name: 'probe wins', clips: [{ asset_id: unmeasuredVideo(5) }] });
    assert.equal(JSON.parse(row.tracks).V1[0].duration, 2);
    probed = null;
  });

  test('details.clips lists at most 100 problems; the message counts them all', async () => {
    const clips = Array.from({ length: 150 }, () => ({ asset_id: newId() }));
    await assert.rejects(ops.create('alpha', { name: 'many', clips }), (err: unknown) => {
      assert.ok(err instanceof ApiError && err.code === 'invalid_timeline');
      assert.equal((err.details as { clips: unknown[] }).clips.length, 100);
      assert.match(err.message, /and 149 more problems/);
      return true;
    });
  });
});

describe('a write that fails late leaves nothing written', () => {
  test('an error after the row was updated rolls the whole write back', async () => {
    const row = await ops.create('alpha', { name: 'atomic' });
    const failing = createTimelineStore(db, {
      assets: {
        ...assets.store,
        noteReferenced: () => {
          throw new Error('disk on fire');
        },
      },
    });
    const doc = { name: 'half', target: JSON.parse(row.target), tracks: { V1: [] } };
    assert.throws(() => failing.write('alpha', row.id, () => ({ doc, duration: 0 })), /disk on fire/);
    const after = store.get(row.id)!;
    assert.equal(after.revision, 1);
    assert.equal(after.name, 'atomic');
    assert.deepEqual(store.revisions(row.id, null, 10), []);
  });
});

describe('append answers 404 and 409 before probing the asset', () => {
  const settled = (p: Promise<unknown>) => Promise.race([p.then(() => 'resolved', (err: unknown) => err), probing().then(() => 'still probing')]);

  test('no sequence owned: 409 no_timeline at once; an unknown timeline_id: 404 at once', async () => {
    for (const row of store.list({ studioId: 'alpha', readAll: false }, null, 500)) store.delete('alpha', row.id, () => {});
    probeCalls = 0;
    const none = await settled(ops.append('alpha', { asset_id: unmeasuredVideo() }));
    assert.ok(none instanceof ApiError && none.code === 'no_timeline', String(none));
    const unknown = await settled(ops.append('alpha', { asset_id: unmeasuredVideo(), timeline_id: newId() }));
    assert.ok(unknown instanceof ApiError && unknown.code === 'not_found', String(unknown));
    assert.equal(probeCalls, 0);
    release();
  });
});
