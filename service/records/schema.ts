import { z } from 'zod';
import { pageQuery } from '../core/pagination';

/** Collection names and the shape of a Record (docs/api.md "Records and collections"). */

export const COLLECTION_PATTERN = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

const collection = z.string().regex(COLLECTION_PATTERN, `collection must match ${COLLECTION_PATTERN.source}`).meta({
  description: 'Collection name, ^[A-Za-z][A-Za-z0-9_]{0,63}$; any such name may be written, declared or not.',
});

export const collectionParams = z.object({ collection });
export const recordParams = z.object({
  collection,
  id: z.string().meta({ description: 'The record id (a ULID); anything else is 404.' }),
});

/** `where` may repeat; more than eight, or a bad clause, is 400 `bad_filter` (checked by filter.ts). */
export const listQuery = z.object({
  where: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .meta({
      description: 'A clause `field:op:value`; repeat for more (at most 8, all must match). See the API reference.',
      type: 'array',
      items: { type: 'string' },
    }),
  order: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .meta({ description: '`field:asc` or `field:desc`, one field (default `created_at:desc`).', type: 'string' }),
  ...pageQuery,
});

/** A record body: any JSON; the store refuses non-objects and reserved keys with 400 `invalid_document`. */
export const documentBody = z.unknown().meta({
  description: 'A JSON object without the reserved keys id, created_at, updated_at, etag.',
  type: 'object',
});

export const record = z
  .object({
    id: z.string(),
    created_at: z.string().meta({ description: 'The instant encoded in the id (RFC 3339 UTC, milliseconds).' }),
    updated_at: z.string(),
    etag: z.string(),
  })
  .catchall(z.unknown())
  .meta({ description: 'Flat: the reserved members, then the document\'s own top-level keys.' });

export const recordPage = z.object({ items: z.array(record), next_cursor: z.string().nullable() });
