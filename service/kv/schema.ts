import { z } from 'zod';
import { pageQuery } from '../core/pagination';

/** Names, keys and the shapes of KVKeyPage and KVDoc (docs/api.md "Key-value"). */

export const NS_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
export const SHARED_NS = 'shared';
export const MAX_KEY_BYTES = 512;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const key = z
  .string()
  .refine((k) => k.length > 0 && Buffer.byteLength(k, 'utf8') <= MAX_KEY_BYTES, `key must be 1..${MAX_KEY_BYTES} UTF-8 bytes`)
  .refine((k) => !/[\u0000-\u001f\u007f-\u009f]/.test(k), 'key must not contain control characters')
  .refine((k) => !LONE_SURROGATE.test(k), 'key must be well-formed Unicode')
  .meta({ description: 'The rest of the path after /kv/{ns}/, percent-decoded; may contain "/". 1..512 UTF-8 bytes, no control characters.' });

const ns = z.string().regex(NS_PATTERN, 'ns must match ^[A-Za-z0-9_.-]{1,64}$').meta({
  description: 'Namespace, ^[A-Za-z0-9_.-]{1,64}$. `shared` is common to every studio holding `kv.shared`.',
});

export const nsParams = z.object({ ns });
export const keyParams = z.object({ ns, key });

export const listQuery = z.object({
  prefix: z
    .string()
    .max(2048)
    .optional()
    .meta({ description: 'Literal key prefix (no wildcards: `%` and `_` are ordinary characters).' }),
  ...pageQuery,
});

/** A document body: any JSON; the route refuses non-objects with 400 `invalid_document`. */
export const documentBody = z.unknown().meta({
  description: 'A JSON object (anything else is 400 `invalid_document`).',
  type: 'object',
});

export const kvKeyEntry = z.object({
  key: z.string(),
  size: z.number().int().meta({ description: 'Byte length of the stored JSON text.' }),
  modified_at: z.string().meta({ description: 'RFC 3339 UTC, milliseconds.' }),
});

export const kvKeyPage = z.object({ items: z.array(kvKeyEntry), next_cursor: z.string().nullable() });

export const kvDoc = z.object({
  key: z.string(),
  value: z.record(z.string(), z.unknown()),
  etag: z.string(),
  modified_at: z.string(),
});
