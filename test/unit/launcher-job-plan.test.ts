import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { planJobRows, type PlanJob, type PlanOptions, type PlanRow } from '../../renderer/launcher/job-plan';

/**
 * Which job rows the launcher shows (renderer/launcher/job-plan.ts; renderer/README.md
 * §Jobs): at most `perStudio` rows a studio, its unfinished jobs first, the rest folded
 * into one "N more" row after its last shown row; at most `total` rows, cutting finished
 * rows oldest first and never an unfinished one; pinned jobs always shown; newest first.
 */

let clock = 0;
/** A job of `studio` in `state`, each one created a second after the last. */
function job(studio: string, state = 'running', id?: string): PlanJob {
  clock += 1;
  const created_at = new Date(Date.UTC(2026, 0, 1, 0, 0, clock)).toISOString();
  return { id: id ?? `${studio}-${clock}`, studio_id: studio, state, created_at };
}

function opts(o: Partial<PlanOptions> = {}): PlanOptions {
  return { perStudio: 3, total: 10, expanded: new Set(), pinned: new Set(), ...o };
}

/** Rows as short strings: job ids, and "+N studio (U)" for summaries. */
function show(rows: PlanRow[]): string[] {
  return rows.map((r) => (r.kind === 'job' ? r.id : `+${r.hidden} ${r.studio} (${r.unfinished}${r.expanded ? ', expanded' : ''})`));
}

describe('launcher job plan', () => {
  test('a quiet list is shown whole, newest first', () => {
    const a = job('a', 'succeeded', 'a1');
    const b = job('b', 'running', 'b1');
    assert.deepEqual(show(planJobRows([a, b], opts())), ['b1', 'a1']);
  });

  test("one studio's storm folds into one row and never pushes another studio's older running job off", () => {
    const calm = job('calm', 'running', 'calm1');
    const storm = Array.from({ length: 50 }, () => job('storm'));
    const rows = show(planJobRows([calm, ...storm], opts()));
    const newest = storm.slice(-3).reverse().map((j) => j.id);
    assert.deepEqual(rows, [...newest, '+47 storm (47)', 'calm1']);
  });

  test("a studio's unfinished jobs come before its newer finished ones; the finished fill what is left", () => {
    const old = job('a', 'running', 'old-running');
    const done = [job('a', 'succeeded', 'd1'), job('a', 'failed', 'd2'), job('a', 'succeeded', 'd3')];
    assert.deepEqual(show(planJobRows([old, ...done], opts())), ['d3', 'd2', 'old-running', '+1 a (0)']);
  });

  test('pinned jobs (open, being cancelled, focused) keep their row past the cap', () => {
    const storm = Array.from({ length: 10 }, () => job('s'));
    const pinned = storm[0]!.id;
    const rows = show(planJobRows(storm, opts({ pinned: new Set([pinned]) })));
    assert.deepEqual(rows, [storm[9]!.id, storm[8]!.id, pinned, '+7 s (7)']);
  });

  test('an expanded studio shows up to the total, and its summary says it is expanded', () => {
    const storm = Array.from({ length: 14 }, () => job('s'));
    const rows = planJobRows(storm, opts({ expanded: new Set(['s']) }));
    assert.equal(rows.filter((r) => r.kind === 'job').length, 10);
    assert.deepEqual(show(rows).at(-1), '+4 s (4, expanded)');
  });

  test('over the total, finished rows go first, oldest first; unfinished rows stay', () => {
    const studios = ['a', 'b', 'c', 'd'];
    const all: PlanJob[] = [];
    for (const s of studios) all.push(job(s, 'running', `${s}-run`));
    for (const s of studios) all.push(job(s, 'succeeded', `${s}-done1`), job(s, 'succeeded', `${s}-done2`));
    // 4 studios × 3 rows = 12 > total 6: the 6 oldest finished rows go.
    const rows = show(planJobRows(all, opts({ total: 6 })));
    const jobs = rows.filter((r) => !r.startsWith('+'));
    assert.equal(jobs.length, 6);
    for (const s of studios) assert.ok(jobs.includes(`${s}-run`), `${s}'s running job stays`);
    assert.deepEqual(jobs.filter((r) => r.includes('done')), ['d-done2', 'd-done1']);
    assert.ok(rows.includes('+2 a (0)') && rows.includes('+2 c (0)'), rows.join(' '));
  });

  test('a studio whose every row was cut still has its summary row, at the end', () => {
    const rows = show(planJobRows([job('old', 'succeeded', 'o1'), job('new', 'running', 'n1')], opts({ total: 1 })));
    assert.deepEqual(rows, ['n1', '+1 old (0)']);
  });

  test('no jobs, no rows', () => {
    assert.deepEqual(planJobRows([], opts()), []);
  });
});
