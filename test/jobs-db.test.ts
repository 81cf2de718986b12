import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { openDatabase } from '../service/db/open';
import { JOBS_SQL } from '../service/jobs';
import { tempDir } from './helpers/service';

/** Migration 0006 (jobs): the table's checks and the hot queries' plans. */

function plan(db: ReturnType<typeof openDatabase>, sql: string, params: unknown[]): string {
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join('\n');
}

test('job lists use their indexes and need no sort step', () => {
  const dir = tempDir();
  const db = openDatabase(dir);
  try {
    for (const [sql, params, index] of [
      [JOBS_SQL.byStudio, ['s', 10], 'jobs_studio'],
      [JOBS_SQL.byStudioAfter, ['s', 'x', 10], 'jobs_studio'],
      [JOBS_SQL.byTimeline, ['t', 10], 'jobs_timeline'],
      [JOBS_SQL.byTimelineAfter, ['t', 'x', 10], 'jobs_timeline'],
      [JOBS_SQL.unfinished, [], 'jobs_unfinished'],
    ] as const) {
      const p = plan(db, sql, [...params]);
      assert.match(p, new RegExp(index), sql);
      assert.doesNotMatch(p, /TEMP B-TREE/, sql);
    }
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the table refuses unknown kinds and states', () => {
  const dir = tempDir();
  const db = openDatabase(dir);
  try {
    const insert = (kind: string, state: string) =>
      db
        .prepare(
          `INSERT INTO jobs (id, studio_id, kind, title, state, progress_num, progress_den, data, created_at, updated_at)
           VALUES (?, 's', ?, 't', ?, 0, 0, '{}', 'now', 'now')`,
        )
        .run(`${kind}-${state}`, kind, state);
    insert('task', 'running');
    assert.throws(() => insert('shell', 'running'), /CHECK constraint/);
    assert.throws(() => insert('task', 'paused'), /CHECK constraint/);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
