import { z } from 'zod';
import { pageQuery } from '../core/pagination';
import { isSupportedFps } from './snap';

/**
 * Timeline, Clip, TimelineCreate/Update/Revert/Append,
 * TimelineRevision, ExportPlan. Shapes and ranges are checked here (400
 * `bad_request`); what needs the whole document or the assets (snapping,
 * overlaps, kinds, readable assets) is checked by document.ts (422
 * `invalid_timeline` with `details.clips`).
 */

export const LIMITS = {
  nameChars: 500,
  /** Clips in one sequence, over all tracks. */
  clips: 5000,
  /** Any time in seconds (start, in, duration): 100 hours. */
  seconds: 360_000,
  fpsMax: 240,
  sampleRateMin: 8000,
  sampleRateMax: 192_000,
  sizeMin: 16,
  widthMax: 7680,
  heightMax: 4320,
};

export const TARGET_DEFAULTS = { sample_rate: 48000, fps: 30, width: 1920, height: 1080 } as const;
export const TRACK_NAME = /^[VA][1-9]$/;

const CONTROL = /[\u0000-\u001f\u007f]/;
const name = z
  .string()
  .refine((s) => s.trim().length > 0, 'name must not be empty')
  .refine((s) => [...s].length <= LIMITS.nameChars, `name must be at most ${LIMITS.nameChars} characters`)
  .refine((s) => !CONTROL.test(s), 'name may not contain control characters')
  .meta({ description: `1..${LIMITS.nameChars} characters.` });

/** Ids are not checked for form: an unknown one is 404, or 422 for a clip's asset. */
const id = z.string().min(1).max(64);
const seconds = (what: string) =>
  z
    .number()
    .min(0, `${what} must not be negative`)
    .max(LIMITS.seconds, `${what} must be at most ${LIMITS.seconds} seconds`);

const even = (what: string, max: number) =>
  z
    .number()
    .int(`${what} must be a whole number`)
    .min(LIMITS.sizeMin, `${what} must be at least ${LIMITS.sizeMin}`)
    .max(max, `${what} must be at most ${max}`)
    .refine((n) => n % 2 === 0, `${what} must be even (H.264 4:2:0 needs even sizes)`);

const targetMembers = {
  sample_rate: z
    .number()
    .int('sample_rate must be a whole number')
    .min(LIMITS.sampleRateMin)
    .max(LIMITS.sampleRateMax)
    .meta({ description: `Hz, ${LIMITS.sampleRateMin}..${LIMITS.sampleRateMax} (default 48000).` }),
  fps: z
    .number()
    .gt(0, 'fps must be positive')
    .max(LIMITS.fpsMax)
    .refine(isSupportedFps, 'fps must be whole, an NTSC rate (23.976, 29.97, 59.94 ...) or have at most 3 decimals')
    .meta({ description: 'Frames per second (default 30). 23.976, 29.97, 59.94 ... mean n×1000/1001 exactly.' }),
  width: even('width', LIMITS.widthMax).meta({ description: 'Pixels, even (default 1920).' }),
  height: even('height', LIMITS.heightMax).meta({ description: 'Pixels, even (default 1080).' }),
};

export const target = z.strictObject(targetMembers);
export type Target = z.infer<typeof target>;
const targetIn = z.strictObject({
  sample_rate: targetMembers.sample_rate.optional(),
  fps: targetMembers.fps.optional(),
  width: targetMembers.width.optional(),
  height: targetMembers.height.optional(),
});
/** In a merge patch a member may be null: back to its default. */
const targetPatch = z.strictObject({
  sample_rate: targetMembers.sample_rate.nullable().optional(),
  fps: targetMembers.fps.nullable().optional(),
  width: targetMembers.width.nullable().optional(),
  height: targetMembers.height.nullable().optional(),
});

export const transition = z.strictObject({
  kind: z.literal('crossfade'),
  duration: seconds('transition.duration'),
});

export const clipIn = z.strictObject({
  asset_id: id.meta({ description: 'An asset the caller can read (else 422 `invalid_timeline`).' }),
  start: seconds('start').meta({ description: 'Seconds from the start of the sequence.' }),
  in: seconds('in').optional().meta({ description: 'Offset into the source, seconds (default 0).' }),
  duration: seconds('duration')
    .optional()
    .meta({ description: "Length on the timeline, seconds (default: the source's duration minus `in`; 5 for images)." }),
  transition: transition.optional(),
});
export type ClipIn = z.infer<typeof clipIn>;

/** A clip of `clips` in TimelineCreate: laid end to end, so it has no `start`. */
const layClip = clipIn.omit({ start: true, transition: true });
export type LayClip = z.infer<typeof layClip>;

const TRACK_NAMES_MESSAGE = 'track names are V1..V9 and A1..A9';
/**
 * Keys are checked on the object as parsed, before zod's record copies it: the
 * copy drops a member named `__proto__`, so its clips would vanish silently.
 */
const tracksIn = z
  .preprocess((value, ctx) => {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const key of Object.keys(value)) {
        if (!TRACK_NAME.test(key)) ctx.addIssue({ code: 'custom', message: TRACK_NAMES_MESSAGE, path: [key], input: value });
      }
    }
    return value;
  }, z.record(z.string().regex(TRACK_NAME, TRACK_NAMES_MESSAGE), z.array(clipIn).max(LIMITS.clips)))
  .meta({ description: 'Track name (`V1`..`V9`, `A1`..`A9`) to its clips.' });
export type TracksIn = Record<string, ClipIn[]>;

export const timelineCreate = z
  .strictObject({
    name,
    target: targetIn.optional(),
    clips: z.array(layClip).max(LIMITS.clips).optional(),
    tracks: tracksIn.optional(),
  })
  .refine((b) => b.clips === undefined || b.tracks === undefined, 'give either clips or tracks, not both');
export type TimelineCreate = z.infer<typeof timelineCreate>;

export const timelineUpdate = z.strictObject({
  name: name.optional(),
  target: targetPatch.nullable().optional(),
  tracks: tracksIn.nullable().optional(),
  description: z.string().min(1).max(200).optional().meta({ description: 'What this write changes, in words, kept with the revision it makes (not part of the document).' }),
});
export type TimelineUpdate = z.infer<typeof timelineUpdate>;

export const timelineRevert = z.strictObject({
  revision: z.number().int().min(1).meta({ description: 'One of the numbers GET /timeline/{id}/revisions lists.' }),
  description: z.string().min(1).max(200).optional().meta({ description: 'What this revert does (default: "Restored revision N"), in words, kept with the revision it makes (not part of the document).' }),
});

export const timelineAppend = z.strictObject({
  asset_id: id,
  timeline_id: id.optional(),
  track: z.string().regex(TRACK_NAME, 'track must be V1..V9 or A1..A9').optional(),
  in: seconds('in').optional(),
  duration: seconds('duration').optional(),
});
export type TimelineAppend = z.infer<typeof timelineAppend>;

// Responses.
const clip = z.object({
  asset_id: z.string(),
  start: z.number(),
  in: z.number(),
  duration: z.number(),
  transition: z.object({ kind: z.literal('crossfade'), duration: z.number() }).optional(),
});
export type Clip = z.infer<typeof clip>;
export type Tracks = Record<string, Clip[]>;

export const timeline = z.object({
  id: z.string(),
  studio_id: z.string(),
  name: z.string(),
  target,
  tracks: z.record(z.string(), z.array(clip)),
  revision: z.number().int(),
  duration: z.number().meta({ description: 'End of the last clip on any track, seconds.' }),
  description: z.string().nullable().meta({ description: 'What the write that made this revision changed, as its writer said it; null when it gave none.' }),
  created_at: z.string(),
  updated_at: z.string(),
});
export const timelinePage = z.object({ items: z.array(timeline), next_cursor: z.string().nullable() });
export const timelineRevision = z.object({
  revision: z.number().int(),
  name: z.string(),
  target,
  tracks: z.record(z.string(), z.array(clip)),
  description: z.string().nullable().meta({ description: 'What the write that made this revision changed; null when its writer gave none.' }),
  created_at: z.string(),
});
export const revisionPage = z.object({ items: z.array(timelineRevision), next_cursor: z.string().nullable() });

export const EXPORT_PRESETS = ['auto', 'copy', 'h264'] as const;
export type ExportPreset = (typeof EXPORT_PRESETS)[number];
export const planQuery = z.strictObject({ preset: z.enum(EXPORT_PRESETS).optional() });
export const exportPlan = z.object({
  preset: z.enum(EXPORT_PRESETS),
  path: z.enum(['copy', 'conform']),
  clips: z.array(
    z.object({
      track: z.string(),
      index: z.number().int(),
      asset_id: z.string(),
      path: z.enum(['copy', 'conform']),
      reason: z.string().nullable(),
    }),
  ),
});
export const exportRequest = z.strictObject({
  preset: z.enum(EXPORT_PRESETS).optional().meta({ description: '`auto` (default): copy when the plan allows, else conform; `copy`: copy or 422; `h264`: always conform.' }),
  filename: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .meta({ description: 'Library file name of the output; `.mp4` is added unless it ends so. Default: the sequence name + `.mp4`.' }),
});
export type ExportRequest = z.infer<typeof exportRequest>;
export const exportParams = z.strictObject({ id, job: id });
export const timelineOpened = z.object({ opened: z.literal(true), surface: z.string() });

export const idParams = z.strictObject({ id });
export const listQuery = z.strictObject({ ...pageQuery });
export const launcherListQuery = z.strictObject({
  studio: z.string().regex(/^[a-z][a-z0-9-]{1,31}$/, 'must be a studio id').optional().meta({ description: "Only this studio's sequences." }),
  q: z.string().min(1).max(200).optional().meta({ description: 'Only sequences whose name contains this text (any case).' }),
  ...pageQuery,
});
