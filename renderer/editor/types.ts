/** The API's shapes as the editor page reads them (docs/api.md §Timelines). */

export interface Clip {
  asset_id: string;
  start: number;
  in: number;
  duration: number;
  transition?: { kind: 'crossfade'; duration: number };
}

export interface Timeline {
  id: string;
  studio_id: string;
  name: string;
  revision: number;
  duration: number;
  target: { fps: number; width: number; height: number; sample_rate: number };
  tracks: Record<string, Clip[]>;
  updated_at: string;
  /** What the write that made this revision changed, in words (null when its writer gave none). */
  description?: string | null;
}

export interface Revision {
  revision: number;
  name: string;
  tracks: Record<string, Clip[]>;
  created_at: string;
  description?: string | null;
}

export interface PlanClip {
  track: string;
  index: number;
  asset_id: string;
  path: 'copy' | 'conform';
  reason: string | null;
}

export interface Plan {
  preset: string;
  path: 'copy' | 'conform';
  clips: PlanClip[];
}

export interface AssetInfo {
  kind: 'image' | 'video' | 'audio' | 'unknown';
  title: string | null;
}

export type Selection = { track: string; index: number } | null;
export type Preset = 'auto' | 'copy' | 'h264';
