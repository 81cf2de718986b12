/**
 * The API's shapes as the editor page reads them (docs/api.md §Timelines), from
 * the module generated from the OpenAPI document, and the page's own types.
 */

import type { ExportPlan, TimelineRevision } from '../lib/api-types';

export type { Clip, Job, PlanClip, Timeline } from '../lib/api-types';
export type Revision = TimelineRevision;
export type Plan = ExportPlan;

export interface AssetInfo {
  kind: 'image' | 'video' | 'audio' | 'unknown';
  title: string | null;
}

export type Selection = { track: string; index: number } | null;
export type Preset = 'auto' | 'copy' | 'h264';
