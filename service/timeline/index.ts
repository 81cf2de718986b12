import type { AssetsDomain } from '../assets';
import type { Db } from '../db/open';
import { createTimelineOps, type EditorSurface } from './operations';
import { createProbes } from './probes';
import { createTimelineStore } from './store';

export { TIMELINE_SQL } from './store';
export type { TimelineStore, TimelineRow } from './store';
export type { EditorSurface, TimelineOps } from './operations';
export { timelineRoutes, timelineJson } from './routes';

/** The timeline domain, built once per service: its store, probe cache and operations. */
export function createTimeline(db: Db, deps: { assets: AssetsDomain; editor: EditorSurface; media?: { signal: AbortSignal } }) {
  const store = createTimelineStore(db, { assets: deps.assets.store });
  const probes = createProbes(store, deps.assets, deps.media?.signal);
  const ops = createTimelineOps({ store, assets: deps.assets, probes, editor: deps.editor });
  return { store, probes, ops };
}
export type TimelineDomain = ReturnType<typeof createTimeline>;
