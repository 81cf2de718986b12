import type { Migration } from '../migrate';
import { m0001Core } from './0001-core';
import { m0002Kv } from './0002-kv';
import { m0003Sessions } from './0003-sessions';
import { m0004Records } from './0004-records';
import { m0005Assets } from './0005-assets';
import { m0006Jobs } from './0006-jobs';
import { m0007Gallery } from './0007-gallery';
import { m0008Timeline } from './0008-timeline';
import { m0009Launcher } from './0009-launcher';
import { m0010Exports } from './0010-exports';
import { m0011StudiosInstalled } from './0011-studios-installed';
import { m0012LauncherCredentialUse } from './0012-launcher-credential-use';
import { m0013TimelineDescriptions } from './0013-timeline-descriptions';
import { m0014UpdateSources } from './0014-update-sources';
import { m0015Handoffs } from './0015-handoffs';

/** Every migration, in order. A new one is a new file and one line here. */
export const MIGRATIONS: readonly Migration[] = [
  m0001Core, m0002Kv, m0003Sessions, m0004Records, m0005Assets, m0006Jobs, m0007Gallery, m0008Timeline, m0009Launcher,
  m0010Exports, m0011StudiosInstalled, m0012LauncherCredentialUse, m0013TimelineDescriptions,
  m0014UpdateSources, m0015Handoffs,
];
