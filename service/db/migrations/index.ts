import type { Migration } from '../migrate';
import { m0001Core } from './0001-core';
import { m0002Kv } from './0002-kv';
import { m0003Sessions } from './0003-sessions';
import { m0004Records } from './0004-records';
import { m0005Assets } from './0005-assets';
import { m0006Jobs } from './0006-jobs';
import { m0007Gallery } from './0007-gallery';
import { m0009Launcher } from './0009-launcher';

/**
 * TEMPORARY, editor branch only: migrate() needs versions 1..N without a gap,
 * and 0008 (timeline) is written on another branch. At the merge this line
 * goes and m0008Timeline takes its place; nothing else refers to it.
 */
const m0008Placeholder: Migration = { version: 8, name: 'timeline', up() {} };

/** Every migration, in order. A new one is a new file and one line here. */
export const MIGRATIONS: readonly Migration[] = [
  m0001Core, m0002Kv, m0003Sessions, m0004Records, m0005Assets, m0006Jobs, m0007Gallery,
  m0008Placeholder,
  m0009Launcher,
];
