import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { openDatabase, type Db } from '../service/db/open';
import { createStudiosStore } from '../service/studios';
import { createRecordsStore, declareIndex, RECORDS_SQL } from '../service/records';
import { compileQuery } from '../service/records/compile';
import { parseOrder, parseWhere } from '../service/records/filter';
import { runCli, startService, tempDir } from './helpers/service';
import { client } from './helpers/http';

/** Declared indexes (docs/api.md "Declared indexes"): `index add`, the query plans they give, and a live server picking them up. */

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function setup() {
  const dir = tempDir();
  dirs.push(dir);
  const db = openDatabase(dir);
  const studios = createStudiosStore(db);
  studios.add({ id: 'st', name: 'st' });
  studios.add({ id: 'other', name: 'other' });
  const records = createRecordsStore(db, studios, { maxDocBytes: () => 1 << 20 });
  records.createMany('st', 'c', Array.from({ length: 200 }, (_, i) => ({ price: i % 50, title: `t${i}`, ...(i % 7 ? {} : { odd: true }) })));
  return { dir, db, records };
}

/** The plan of every statement a page would run. */
function plans(db: Db, records: ReturnType<typeof createRecordsStore>, where: string[], order?: string): string[] {
  const steps = compileQuery({
    studioId: 'st',
    collection: 'c',
    clauses: parseWhere(where),
    order: parseOrder(order),
    indexed: records.indexedFields('st', 'c'),
    after: null,
  });
  return steps.map((s) =>
    (db.prepare(`EXPLAIN QUERY PLAN ${s.sql}`).all(...s.params, 51) as { detail: string }[]).map((r) => r.detail).join(' | '),
  );
}

describe('query plans', () => {
  const { db, records } = setup();
  const name = declareIndex(db, { studioId: 'st', collection: 'c', field: 'price' }).name;
  const uses = new RegExp(`USING INDEX ${name} \\(studio_id=\\? AND collection=\\? AND <expr>`);

  const rows: [string, string[], string | undefined, boolean][] = [
    ['eq', ['price:eq:3'], undefined, false],
    ['in', ['price:in:[3,4]'], undefined, true],
    ['lt', ['price:lt:3'], undefined, true],
    ['gte and lt', ['price:gte:3', 'price:lt:9'], undefined, true],
    ['range and order on the field', ['price:gte:3', 'price:lt:9'], 'price:asc', false],
    ['eq with another unindexed clause', ['price:eq:3', 'title:eq:t3'], undefined, false],
  ];
  for (const [label, where, order, sorts] of rows) {
    test(`${label} uses the declared index`, () => {
      const [plan] = plans(db, records, where, order);
      assert.match(plan!, uses, plan);
      if (!sorts) assert.doesNotMatch(plan!, /TEMP B-TREE/, plan);
    });
  }

  test('order on the field uses it for every step, without a sort', () => {
    for (const dir of ['asc', 'desc']) {
      for (const plan of plans(db, records, [], `price:${dir}`)) {
        assert.match(plan, new RegExp(`USING INDEX ${name}`), plan);
        assert.doesNotMatch(plan, /TEMP B-TREE/, plan);
      }
    }
  });

  test('an unindexed field scans the collection through the primary key; the index is not touched', () => {
    const [plan] = plans(db, records, ['title:eq:t3']);
    assert.match(plan!, /SEARCH records USING PRIMARY KEY \(studio_id=\? AND collection=\?\)/);
    assert.doesNotMatch(plan!, /TEMP B-TREE/);
  });

  test('the same field in a collection without the declaration does not use it', () => {
    assert.deepEqual([...records.indexedFields('st', 'd')], []);
    assert.deepEqual([...records.indexedFields('other', 'c')], []);
    const steps = compileQuery({ studioId: 'st', collection: 'd', clauses: parseWhere(['price:eq:3']), order: parseOrder(undefined), indexed: records.indexedFields('st', 'd'), after: null });
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${steps[0]!.sql}`).all(...steps[0]!.params, 51) as { detail: string }[]).map((r) => r.detail).join();
    assert.doesNotMatch(plan, new RegExp(name));
  });

  test('get by id, the default order and updated_at order use their indexes without a sort', () => {
    const get = (db.prepare(`EXPLAIN QUERY PLAN ${RECORDS_SQL.get}`).all('st', 'c', 'X') as { detail: string }[]).map((r) => r.detail).join();
    assert.match(get, /PRIMARY KEY \(studio_id=\? AND collection=\? AND id=\?\)/);
    for (const plan of plans(db, records, [], 'created_at:desc')) assert.doesNotMatch(plan, /TEMP B-TREE/);
    for (const plan of plans(db, records, [], 'updated_at:asc')) {
      assert.match(plan, /records_updated/);
      assert.doesNotMatch(plan, /TEMP B-TREE/);
    }
  });

  test('declaring again changes nothing; names come from a hash', () => {
    const again = declareIndex(db, { studioId: 'st', collection: 'c', field: 'price' });
    assert.equal(again.created, false);
    assert.equal(again.name, name);
    assert.match(name, /^records_ix_[0-9a-f]{24}$/);
  });

  test('refusals: unknown studio, bad collection, bad field', () => {
    assert.throws(() => declareIndex(db, { studioId: 'nobody', collection: 'c', field: 'x' }), { code: 'not_found' });
    for (const collection of ['1c', 'a-b', "c'", '']) {
      assert.throws(() => declareIndex(db, { studioId: 'st', collection, field: 'x' }), { code: 'bad_request' });
    }
    for (const field of ['a.b', "a'", 'id', 'created_at', 'updated_at', 'etag', '', 'é']) {
      assert.throws(() => declareIndex(db, { studioId: 'st', collection: 'c', field }), { code: 'bad_request' });
    }
  });
});

test('a second connection declaring an index: the first uses it on its next query', () => {
  const { dir, db, records } = setup();
  assert.doesNotMatch(plans(db, records, ['price:eq:3'])[0]!, /records_ix_/);
  const before = records.list({ studioId: 'st', collection: 'c', clauses: parseWhere(['price:eq:3']), order: parseOrder(undefined), after: null }, 100).rows;
  const cli = openDatabase(dir);
  declareIndex(cli, { studioId: 'st', collection: 'c', field: 'price' });
  cli.close();
  assert.match(plans(db, records, ['price:eq:3'])[0]!, /records_ix_/);
  const afterwards = records.list({ studioId: 'st', collection: 'c', clauses: parseWhere(['price:eq:3']), order: parseOrder(undefined), after: null }, 100).rows;
  assert.deepEqual(afterwards.map((r) => r.id), before.map((r) => r.id));
  assert.equal(afterwards.length, 4);
});

describe('bin/backlot index add', () => {
  test('--help prints usage and exits 0', () => {
    const r = runCli(['index', 'add', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Usage: backlot index add --studio ID --collection NAME --field FIELD/);
  });

  const usage: [string, string[], RegExp][] = [
    ['no subcommand', ['index'], /Unknown index command/],
    ['an unknown subcommand', ['index', 'drop'], /Unknown index command/],
    ['no --studio', ['index', 'add', '--collection', 'c', '--field', 'f'], /--studio is required/],
    ['no --collection', ['index', 'add', '--studio', 's', '--field', 'f'], /--collection is required/],
    ['no --field', ['index', 'add', '--studio', 's', '--collection', 'c'], /--field is required/],
    ['an unknown flag', ['index', 'add', '--studio', 's', '--collection', 'c', '--field', 'f', '--unique'], /unique/],
    ['a stray argument', ['index', 'add', 'x', '--studio', 's', '--collection', 'c', '--field', 'f'], /argument/],
  ];
  for (const [label, args, message] of usage) {
    test(`${label} is a usage error (exit 2)`, () => {
      const dir = tempDir();
      dirs.push(dir);
      const r = runCli([...args, '--data-dir', dir]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, message);
    });
  }

  test('works while serve runs; failures exit 1 with a clear message; the server\'s answers stay the same', async () => {
    const svc = await startService();
    try {
      const api = client(svc.port, svc.studio('live', ['records']));
      svc.cli(['studio', 'add', 'empty']);
      for (let i = 0; i < 30; i++) await api.post('/records/items', { n: i % 5, s: `s${i}` });
      const q = '/records/items?where=n:eq:3&order=s:asc';
      const before = await api.get(q);
      assert.equal(before.json.items.length, 6);
      const ok = svc.cli(['index', 'add', '--studio', 'live', '--collection', 'items', '--field', 'n']);
      assert.equal(ok.code, 0, ok.stderr);
      assert.deepEqual(JSON.parse(ok.stdout), { studio_id: 'live', collection: 'items', field: 'n', name: JSON.parse(ok.stdout).name, created: true });
      assert.equal(JSON.parse(svc.cli(['index', 'add', '--studio', 'live', '--collection', 'items', '--field', 'n']).stdout).created, false);
      assert.deepEqual((await api.get(q)).json.items, before.json.items);
      const again = await api.post('/records/items', { n: 3, s: 's99' });
      assert.equal((await api.get(q)).json.items.at(-1).id, again.json.id, 'a write after the index is found through it');
      const failures: [string[], RegExp][] = [
        [['--studio', 'nobody', '--collection', 'items', '--field', 'n'], /studio "nobody" was not found/],
        [['--studio', 'live', '--collection', 'bad-name', '--field', 'n'], /collection name "bad-name" must match/],
        [['--studio', 'live', '--collection', 'items', '--field', 'a.b'], /field "a.b" must be a top-level/],
        [['--studio', 'live', '--collection', 'items', '--field', 'id'], /always indexed/],
      ];
      for (const [args, message] of failures) {
        const r = svc.cli(['index', 'add', ...args]);
        assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message);
      }
      assert.equal(svc.cli(['index', 'add', '--studio', 'empty', '--collection', 'fresh', '--field', 'x']).code, 0, 'a collection need not exist yet');
    } finally {
      await svc.stop();
    }
  });
});
