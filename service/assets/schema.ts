import { z } from 'zod';

/** docs/api.md "Assets": AssetKind, Asset, AdoptRequest, the reclaim body and answers. */

export const ASSET_KINDS = ['image', 'video', 'audio', 'other'] as const;
export type AssetKind = (typeof ASSET_KINDS)[number];

export const THUMB_WIDTH = 320;

/** Ids are not checked for form: one that cannot exist is 404 like any unknown id (docs/api.md). */
const assetId = z.string();
export const idParams = z.object({ id: assetId });
/** Ids in a body are echoed in `not_reclaimable` details: bounded. */
const listedAssetId = z.string().min(1).max(64);


const kind = z.enum(ASSET_KINDS).meta({ description: 'image, video, audio or other.' });
const filename = z.string().min(1).max(1024).meta({
  description: 'Names the library file and gives the blob its extension; made safe (last path segment, no control or reserved characters).',
});
const boolText = z.enum(['true', 'false']).transform((v) => v === 'true');
const intText = z
  .string()
  .regex(/^[0-9]{1,9}$/, 'must be a positive integer')
  .transform(Number)
  .refine((n) => n >= 1, 'must be a positive integer');
const numText = z
  .string()
  .regex(/^[0-9]{1,12}(\.[0-9]{1,9})?$/, 'must be a non-negative decimal number')
  .transform(Number);

export const uploadQuery = z.object({
  kind,
  filename: filename.optional(),
  pinned: boolText.optional().meta({ description: '`true` pins the asset for good (nothing unpins).', type: 'boolean' }),
  width: intText.optional().meta({ description: 'Hint for video (images are probed).', type: 'integer' }),
  height: intText.optional().meta({ description: 'Hint for video (images are probed).', type: 'integer' }),
  duration_s: numText.optional().meta({ description: 'Hint for video and audio, seconds.', type: 'number' }),
  fps: numText.optional().meta({ description: 'Hint for video.', type: 'number' }),
});
export type UploadQuery = z.infer<typeof uploadQuery>;

const hint = {
  width: z.number().int().min(1).max(1e9).optional(),
  height: z.number().int().min(1).max(1e9).optional(),
  duration_s: z.number().min(0).max(1e12).optional(),
  fps: z.number().min(0).max(1e6).optional(),
};

export const adoptBody = z.strictObject({
  path: z.string().min(1).max(4096).meta({ description: 'Absolute path inside the studio\'s stage or data folder.' }),
  kind,
  filename: filename.optional(),
  pinned: z.boolean().optional(),
  ...hint,
});
export type AdoptBody = z.infer<typeof adoptBody>;

export const thumbQuery = z.object({
  w: z.literal(String(THUMB_WIDTH)).optional().meta({ description: 'Only 320.', type: 'integer' }),
});

export const reclaimBody = z.strictObject({
  asset_ids: z.array(listedAssetId).min(1).max(1000).optional().meta({ description: 'Only these assets (default: every reclaimable asset the caller can read).' }),
  confirm: z.string().min(1).max(200).optional().meta({ description: 'The `preview` of an earlier answer: reclaims when the set is unchanged.' }),
});
export type ReclaimBody = z.infer<typeof reclaimBody>;

export const asset = z.object({
  id: z.string(),
  sha256: z.string(),
  kind,
  mime: z.string(),
  size: z.number().int(),
  filename: z.string().meta({ description: 'The calling studio\'s name for the asset.' }),
  library_path: z.string().nullable().meta({ description: 'Absolute path of the calling studio\'s library file.' }),
  pinned: z.boolean(),
  width: z.number().int().nullable(),
  height: z.number().int().nullable(),
  duration_s: z.number().nullable(),
  fps: z.number().nullable(),
  created_at: z.string(),
});
export type Asset = z.infer<typeof asset>;

export const reclaimPreview = z.object({
  preview: z.string(),
  assets: z.array(z.string()),
  items: z.array(z.string()),
  bytes: z.number().int(),
});
export const reclaimResult = z.object({ reclaimed: z.array(z.string()), bytes_freed: z.number().int() });

const usagePart = z.object({ count: z.number().int(), bytes: z.number().int() });
/** GET /launcher/disk: what the stored assets take. */
export const diskUsage = z.object({
  assets: usagePart.extend({
    pinned: usagePart,
    unread: usagePart,
    studios: z.array(usagePart.extend({ studio_id: z.string() })),
  }),
});
