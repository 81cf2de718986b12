/**
 * Merging a list read into what a page already knows from live events, by
 * time: a record read from the list replaces the known one only when it is
 * as new or newer (`updated_at`). An event that arrived while the list was
 * being read is newer than the list, so a reconnect's reload never brings an
 * old state back (renderer/README.md "Launcher: jobs and disk"). Used by the launcher's job and
 * studio lists.
 */

export interface Timed {
  id: string;
  updated_at: string;
}

/** Puts each newer-or-equal item into `known`; returns the ids it changed. */
export function mergeByTime<T extends Timed>(known: Map<string, T>, items: readonly T[]): string[] {
  const changed: string[] = [];
  for (const item of items) {
    const before = known.get(item.id);
    if (before && before.updated_at > item.updated_at) continue;
    known.set(item.id, item);
    changed.push(item.id);
  }
  return changed;
}
