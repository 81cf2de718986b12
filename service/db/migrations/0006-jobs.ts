import type { Migration } from '../migrate';

/** Jobs: filled in by the jobs issue (a placeholder keeps versions contiguous while domains land in parallel). */
export const m0006Jobs: Migration = {
  version: 6,
  name: 'jobs',
  up() {},
};
