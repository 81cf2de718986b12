import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ApiError } from '../service/core/errors';
import type { Viewer } from '../service/gallery';
import { openGallery, type GalleryFixture } from './helpers/gallery-db';
import { LineageOracle, type OracleItem } from './helpers/lineage-oracle';
import { propSeed, rng } from './helpers/prng';

/**
 * Property test of lineage (docs/api.md "Lineage"): a random graph of items over shared assets, in three
 * studios, some soft-deleted, loops allowed, written through the real store;
 * every page walk (small limits, each page after the last seq of the one
 * before) of lineageUp / lineageDown must give exactly the oracle's items in
 * seq-descending order, for many starts and for viewers with and without
 * gallery.read_all. The seed is printed; BACKLOT_PROP_SEED=N replays it.
 */

const SEED = propSeed();
const r = rng(SEED);
const STUDIOS = ['alpha', 'beta', 'gamma'] as const;
const ASSETS = 100;
const ITEMS = 300;

let fx: GalleryFixture;
const items: (OracleItem & { id: string })[] = [];
let assets: string[] = [];
let oracle: LineageOracle;

before(() => {
  fx = openGallery(STUDIOS);
  assets = Array.from({ length: ASSETS }, () => fx.newAsset());
  // Outputs come from the first 85 assets; the last 15 are only ever inputs (the walk ends there).
  for (let n = 0; n < ITEMS; n++) {
    const studio = r.pick(STUDIOS);
    const asset = assets[r.int(85)]!;
    const inputs: { asset_id: string; role: string }[] = [];
    const count = r.pick([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3]);
    for (let k = 0; k < count; k++) {
      const roll = r.next();
      // Mostly a recent item's asset (chains), sometimes any asset (loops, and
      // inputs made later), now and then the item's own asset.
      const input =
        roll < 0.7 && items.length > 0
          ? items[Math.max(0, items.length - 1 - r.int(15))]!.asset
          : roll < 0.95
            ? r.pick(assets)
            : asset;
      inputs.push({ asset_id: input, role: r.pick(['init', 'mask', 'ref']) });
      if (r.chance(0.1)) inputs.push({ asset_id: input, role: 'again' });
    }
    const row = fx.gallery.create(studio, { asset_id: asset, inputs, title: `item ${n}` });
    items.push({ seq: row.seq, id: row.id, studio, asset, deleted: false, inputs: inputs.map((i) => i.asset_id) });
  }
  for (const item of items) {
    if (!r.chance(0.15)) continue;
    fx.gallery.delete(item.studio, item.id);
    item.deleted = true;
  }
  // Whatever the seed makes of the random graph (often one big tangle), a few
  // short chains over fresh assets guarantee short walks to check as well.
  for (let chain = 0; chain < 3; chain++) {
    const studio = STUDIOS[chain]!;
    let previous: string | null = null;
    for (let link = 0; link < 2 + chain; link++) {
      const asset = fx.newAsset();
      const inputs = previous ? [{ asset_id: previous, role: 'init' }] : [];
      const row = fx.gallery.create(studio, { asset_id: asset, inputs, title: `chain ${chain}.${link}` });
      items.push({ seq: row.seq, id: row.id, studio, asset, deleted: false, inputs: inputs.map((i) => i.asset_id) });
      previous = asset;
    }
  }
  oracle = new LineageOracle(items);
});

after(() => fx?.close());

/** Every page of a lineage walk, each one after the last seq of the page before. */
function walk(page: (after: number | null, limit: number) => { seq: number }[], limit: number, label: string): number[] {
  const seqs: number[] = [];
  let afterSeq: number | null = null;
  for (let pages = 0; pages <= ITEMS + 1; pages++) {
    const rows = page(afterSeq, limit);
    assert.ok(rows.length <= limit, `${label}: a page is at most the limit`);
    seqs.push(...rows.map((row) => row.seq));
    if (rows.length < limit) return seqs;
    afterSeq = rows[rows.length - 1]!.seq;
  }
  throw new Error(`${label}: the walk does not end`);
}

/** A small limit, but at most about a dozen pages a walk (each page runs the whole walk). */
const pageLimit = (size: number) => Math.max(1 + r.int(7), Math.ceil(size / (8 + r.int(5))));

const viewers = (): Viewer[] => [
  ...STUDIOS.map((studioId) => ({ studioId, readAll: false })),
  { studioId: r.pick(STUDIOS), readAll: true },
];

test(`upstream lineage pages equal the oracle (seed ${SEED})`, { timeout: 120_000 }, () => {
  console.log(`gallery lineage property seed: ${SEED} (rerun with BACKLOT_PROP_SEED=${SEED})`);
  let nonEmpty = 0;
  const sizes: number[] = [];
  for (const item of items) {
    for (const viewer of viewers()) {
      const label = `seed ${SEED}: up from item seq ${item.seq} as ${JSON.stringify(viewer)}`;
      const visible = !item.deleted && (viewer.readAll || viewer.studioId === item.studio);
      if (!visible) {
        // A start the viewer cannot see is 404, like any unknown item.
        assert.throws(() => fx.gallery.lineageUp(viewer, item.id, null, 5), (err: ApiError) => err.status === 404, label);
        continue;
      }
      const expected = oracle.up(item.seq, viewer);
      if (expected.length > 0) nonEmpty++;
      sizes.push(expected.length);
      const limit = pageLimit(expected.length);
      const got = walk((afterSeq, lim) => fx.gallery.lineageUp(viewer, item.id, afterSeq, lim), limit, label);
      assert.deepEqual(got, expected, `${label}, limit ${limit}`);
    }
  }
  assert.ok(nonEmpty > 50, `the graph has lineage to check (${nonEmpty} non-empty walks)`);
  // Both short and long walks were checked.
  assert.ok(sizes.some((n) => n > 0 && n <= 10) && sizes.some((n) => n > 50), `walk sizes ${Math.min(...sizes)}..${Math.max(...sizes)}`);
});

test(`downstream lineage pages equal the oracle (seed ${SEED})`, { timeout: 120_000 }, () => {
  let nonEmpty = 0;
  for (const asset of [...assets, 'no-such-asset']) {
    for (const viewer of viewers()) {
      const label = `seed ${SEED}: down from asset ${asset} as ${JSON.stringify(viewer)}`;
      const expected = oracle.down(asset, viewer);
      if (expected.length > 0) nonEmpty++;
      const limit = pageLimit(expected.length);
      const got = walk((afterSeq, lim) => fx.gallery.lineageDown(viewer, asset, afterSeq, lim), limit, label);
      assert.deepEqual(got, expected, `${label}, limit ${limit}`);
    }
  }
  assert.ok(nonEmpty > 50, `the graph has lineage to check (${nonEmpty} non-empty walks)`);
});

test(`pages carry the items' own rows (seed ${SEED})`, () => {
  const bySeq = new Map(items.map((i) => [i.seq, i]));
  const start = items.find((i) => !i.deleted && oracle.up(i.seq, { studioId: i.studio, readAll: true }).length > 0);
  assert.ok(start, 'some item has upstream lineage');
  for (const row of fx.gallery.lineageUp({ studioId: start.studio, readAll: true }, start.id, null, 500)) {
    const item = bySeq.get(row.seq)!;
    assert.equal(row.id, item.id);
    assert.equal(row.studio_id, item.studio);
    assert.equal(row.asset_id, item.asset);
  }
});
