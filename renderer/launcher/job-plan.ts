/**
 * Which job rows the launcher shows, in which order (pure; test/unit/launcher-job-plan.test.ts).
 *
 * One studio may create jobs without end (a studio with `jobs` is untrusted code), so the
 * list is fair by studio rather than a plain "newest N" (renderer/README.md "Launcher: jobs and disk"):
 *
 * - Each studio shows at most `perStudio` rows: its unfinished jobs first (newest first),
 *   then its newest finished ones to fill the rest. Its other jobs fold into one
 *   "N more from <studio>" row placed after its last shown row. A studio the person
 *   expanded shows up to `total` rows.
 * - The whole list holds at most `total` rows; past that, finished rows go first, oldest
 *   first. Unfinished rows are never cut by another studio's rows: each studio brings at
 *   most `perStudio` of them.
 * - Pinned jobs (the open one, one being cancelled from this page) always keep their row.
 * - Rows are newest first (`created_at`, then id), whatever their studio.
 */

export interface PlanJob {
  id: string;
  studio_id: string;
  state: string;
  created_at: string;
}

export type PlanRow =
  | { kind: 'job'; id: string }
  | { kind: 'more'; studio: string; hidden: number; unfinished: number; expanded: boolean };

export interface PlanOptions {
  perStudio: number;
  total: number;
  expanded: ReadonlySet<string>;
  pinned: ReadonlySet<string>;
}

const FINISHED = new Set(['succeeded', 'failed', 'cancelled']);

export function isFinished(state: string): boolean {
  return FINISHED.has(state);
}

/** Newest first: `created_at` descending, then id descending (ULIDs grow with time). */
export function newestFirst(a: PlanJob, b: PlanJob): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

export function planJobRows(jobs: Iterable<PlanJob>, o: PlanOptions): PlanRow[] {
  const byStudio = new Map<string, PlanJob[]>();
  for (const job of [...jobs].sort(newestFirst)) {
    let list = byStudio.get(job.studio_id);
    if (!list) byStudio.set(job.studio_id, (list = []));
    list.push(job);
  }
  const chosen: PlanJob[] = [];
  const hidden = new Map<string, PlanJob[]>();
  for (const [studio, list] of byStudio) {
    const limit = o.expanded.has(studio) ? o.total : o.perStudio;
    const pinned = list.filter((j) => o.pinned.has(j.id));
    const rest = list.filter((j) => !o.pinned.has(j.id));
    const room = Math.max(0, limit - pinned.length);
    const ordered = [...rest.filter((j) => !isFinished(j.state)), ...rest.filter((j) => isFinished(j.state))];
    chosen.push(...pinned, ...ordered.slice(0, room));
    hidden.set(studio, ordered.slice(room));
  }
  // Over the whole list's size: drop finished, unpinned rows, oldest first.
  let over = chosen.length - o.total;
  if (over > 0) {
    const droppable = chosen.filter((j) => isFinished(j.state) && !o.pinned.has(j.id)).sort(newestFirst).reverse();
    const drop = new Set(droppable.slice(0, over).map((j) => j.id));
    over = 0;
    for (let i = chosen.length - 1; i >= 0; i--) {
      const job = chosen[i]!;
      if (drop.has(job.id)) {
        chosen.splice(i, 1);
        hidden.get(job.studio_id)!.push(job);
      }
    }
  }
  chosen.sort(newestFirst);
  const lastOf = new Map<string, number>();
  chosen.forEach((j, i) => lastOf.set(j.studio_id, i));
  const more = (studio: string): PlanRow | null => {
    const h = hidden.get(studio) ?? [];
    if (h.length === 0) return null;
    return { kind: 'more', studio, hidden: h.length, unfinished: h.filter((j) => !isFinished(j.state)).length, expanded: o.expanded.has(studio) };
  };
  const rows: PlanRow[] = [];
  chosen.forEach((job, i) => {
    rows.push({ kind: 'job', id: job.id });
    if (lastOf.get(job.studio_id) === i) {
      const m = more(job.studio_id);
      if (m) rows.push(m);
    }
  });
  // A studio whose every row was cut by the list's size still says how many it has.
  for (const studio of byStudio.keys()) {
    if (!lastOf.has(studio)) {
      const m = more(studio);
      if (m) rows.push(m);
    }
  }
  return rows;
}
