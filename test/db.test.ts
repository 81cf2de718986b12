import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { openDatabase } from '../service/db/open';
import { migrate, type Migration } from '../service/db/migrate';
import { MIGRATIONS } from '../service/db/migrations';
import { createKvStore, KV_SQL } from '../service/kv';
import { createSessionsStore, SESSIONS_SQL } from '../service/sessions';
import { createStudiosStore } from '../service/studios';
import { tempDir } from './helpers/service';

/** Storage: one database per data dir, its settings, migrations, and query plans. */

test('a new data dir gets WAL, foreign keys, a busy timeout and every migration, recorded', () => {
  const dir = tempDir();
  const db = openDatabase(dir);
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
  assert.equal(db.pragma('busy_timeout', { simple: true }), 5000);
  const rows = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all();
  assert.deepEqual(rows, MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
  assert.equal(statSync(join(dir, 'backlot.db')).mode & 0o077, 0, 'the database is private to its user');
  db.close();
});

test('opening again applies nothing twice and keeps the data', () => {
  const dir = tempDir();
  const first = openDatabase(dir);
  first.prepare("INSERT INTO studios (id, name, quota_records, quota_kv_bytes, created_at) VALUES ('x', 'x', 1, 1, 'now')").run();
  first.close();
  const second = openDatabase(dir);
  assert.deepEqual(second.prepare('SELECT id FROM studios').all(), [{ id: 'x' }]);
  assert.equal((second.prepare('SELECT count(*) AS n FROM schema_migrations').get() as { n: number }).n, MIGRATIONS.length);
  second.close();
});

test('a failing migration rolls back whole and is not recorded', () => {
  const db = new Database(':memory:');
  const broken: Migration[] = [
    { version: 1, name: 'ok', up: (d) => d.exec('CREATE TABLE a (x INTEGER)') },
    {
      version: 2,
      name: 'broken',
      up: (d) => {
        d.exec('CREATE TABLE b (x INTEGER)');
        throw new Error('boom');
      },
    },
  ];
  assert.throws(() => migrate(db, broken), /boom/);
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
  assert.deepEqual(tables, [{ name: 'a' }, { name: 'schema_migrations' }]);
  assert.deepEqual(db.prepare('SELECT version FROM schema_migrations').all(), [{ version: 1 }]);
});

test('migrations must be numbered 1..n without gaps', () => {
  const db = new Database(':memory:');
  assert.throws(() => migrate(db, [{ version: 2, name: 'gap', up: () => {} }]), /expected 1/);
});

test('every migration applies on its own, in order, from an empty database', () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  for (let n = 1; n <= MIGRATIONS.length; n++) {
    assert.deepEqual(migrate(db, MIGRATIONS.slice(0, n)), [n]);
  }
});

test('usage counters stay equal to what is stored, through every kind of write', () => {
  const db = openDatabase(tempDir());
  const studios = createStudiosStore(db);
  for (const id of ['s', 't']) studios.add({ id, name: id, quotaKvBytes: 10_000 });
  const kv = createKvStore(db, studios);
  const sessions = createSessionsStore(db, studios);
  const any = { kind: 'absent' } as const;
  const counted = (id: string) =>
    (db.prepare('SELECT kv_bytes_used AS n FROM studios WHERE id = ?').get(id) as { n: number }).n;
  const stored = (id: string) =>
    (db.prepare(
      `SELECT (SELECT coalesce(sum(size), 0) FROM kv WHERE writer = @id)
            + (SELECT coalesce(sum(state_size), 0) FROM sessions WHERE studio_id = @id AND deleted_at IS NULL) AS n`,
    ).get({ id }) as { n: number }).n;
  const check = (step: string) => {
    for (const id of ['s', 't']) assert.equal(counted(id), stored(id), `${step}: studio ${id}`);
  };
  kv.put({ scope: 's', ns: 'n', key: 'a' }, 's', { v: 'x'.repeat(50) }, any);
  check('insert');
  kv.put({ scope: 's', ns: 'n', key: 'a' }, 's', { v: 'x' }, any);
  check('shrink');
  kv.patch({ scope: 's', ns: 'n', key: 'a' }, 's', { w: 'y'.repeat(20) }, any);
  check('patch');
  kv.put({ scope: '', ns: 'shared', key: 'k' }, 's', { v: 1 }, any);
  kv.put({ scope: '', ns: 'shared', key: 'k' }, 't', { v: 'taken over' }, any);
  check('shared write moves the bytes to the last writer');
  assert.throws(() => kv.put({ scope: 's', ns: 'n', key: 'big' }, 's', { v: 'z'.repeat(20_000) }, any), { code: 'quota_exceeded' });
  check('refused write');
  const session = sessions.create('t', 'one', { a: [1, 2, 3] });
  sessions.patch('t', session.id, { state: { b: 'more' } }, any);
  const copy = sessions.duplicate('t', session.id, 'two');
  check('sessions');
  sessions.delete('t', copy.id, any);
  kv.delete({ scope: '', ns: 'shared', key: 'k' }, any);
  kv.delete({ scope: 's', ns: 'n', key: 'a' }, any);
  check('deletes');
  assert.equal(counted('s'), 0);
  db.close();
});

function plan(db: Database.Database, sql: string, params: unknown[]): string {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('\n');
}

test('hot queries use their indexes and need no sort step', () => {
  const db = openDatabase(tempDir());
  const kvGet = plan(db, KV_SQL.get, ['s', 'n', 'k']);
  assert.match(kvGet, /SEARCH kv USING PRIMARY KEY \(scope=\? AND ns=\? AND key=\?\)/);
  const kvList = plan(db, KV_SQL.list, ['s', 'n', 'p', 'p', '', 10]);
  assert.match(kvList, /SEARCH kv USING PRIMARY KEY \(scope=\? AND ns=\? AND key>\? AND key<\?\)/);
  assert.doesNotMatch(kvList, /TEMP B-TREE/);
  const first = plan(db, SESSIONS_SQL.first, ['s', 10]);
  assert.match(first, /sessions_list/);
  assert.doesNotMatch(first, /TEMP B-TREE/);
  const after = plan(db, SESSIONS_SQL.after, ['s', '', '', '', 10]);
  assert.match(after, /sessions_list/);
  assert.doesNotMatch(after, /TEMP B-TREE/);
  assert.match(plan(db, SESSIONS_SQL.nameTaken, ['s', 'n']), /sessions_live_name/);
  db.close();
});
