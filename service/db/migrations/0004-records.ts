import type { Migration } from '../migrate';

/** Records: filled in by the records issue (a placeholder keeps versions contiguous while domains land in parallel). */
export const m0004Records: Migration = {
  version: 4,
  name: 'records',
  up() {},
};
