import { z } from 'zod';
import { pageQuery } from '../core/pagination';

/** SessionCreate, SessionUpdate, SessionDuplicate and Session (docs/api.md "Sessions"). */

export const MAX_NAME_CHARS = 200;

const name = z
  .string()
  .refine((n) => {
    const chars = [...n].length;
    return chars >= 1 && chars <= MAX_NAME_CHARS;
  }, `name must be 1..${MAX_NAME_CHARS} characters`)
  .meta({ description: 'Unique among the studio\'s live sessions; 1..200 characters.' });

const state = z.unknown().meta({
  description: 'A JSON object (null or anything else is 400 `invalid_document`).',
  type: 'object',
});

export const idParams = z.object({ id: z.string() });
export const listQuery = z.object(pageQuery);

export const sessionCreate = z.strictObject({ name, state: state.optional() });
export const sessionUpdate = z.strictObject({
  name: name.optional(),
  state: state.optional(),
});
export const sessionDuplicate = z.strictObject({ name });

export const session = z.object({
  id: z.string(),
  name: z.string(),
  state: z.record(z.string(), z.unknown()),
  opened_at: z.string().nullable().meta({ description: 'Null until first activated.' }),
  created_at: z.string(),
  updated_at: z.string(),
  etag: z.string(),
});
export const sessionPage = z.object({ items: z.array(session), next_cursor: z.string().nullable() });
