import type { AssetsDomain } from '../assets';
import type { Db } from '../db/open';
import type { GalleryStore } from '../gallery';
import type { JobsDomain } from '../jobs';
import { createExporter } from './export';
import { createTimelineOps, type EditorSurface } from './operations';
import { createProbes } from './probes';
import { createTimelineStore } from './store';

export { TIMELINE_SQL, purgeStudioTimelines, timelineReferenceSources } from './store';
export type { TimelineStore, TimelineRow } from './store';
export type { EditorSurface, TimelineOps } from './operations';
export type { Exporter } from './export';
export { timelineRoutes, timelineJson } from './routes';

/** The timeline domain, built once per service: its store, probe cache and operations. */
export function createTimeline(
  db: Db,
  deps: { assets: AssetsDomain; editor: EditorSurface; jobs: JobsDomain; gallery: GalleryStore; media?: { signal: AbortSignal } },
) {
  const store = createTimelineStore(db, { assets: deps.assets.store });
  const probes = createProbes(store, deps.assets, deps.media?.signal);
  const ops = createTimelineOps({ store, assets: deps.assets, probes, editor: deps.editor });
  const exporter = createExporter({ db, store, assets: deps.assets, probes, jobs: deps.jobs, gallery: deps.gallery });
  return { store, probes, ops, exporter };
}
export type TimelineDomain = ReturnType<typeof createTimeline>;
