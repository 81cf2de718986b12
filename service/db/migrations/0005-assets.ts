import type { Migration } from '../migrate';

/** Assets: filled in by the assets issue (a placeholder keeps versions contiguous while domains land in parallel). */
export const m0005Assets: Migration = {
  version: 5,
  name: 'assets',
  up() {},
};
