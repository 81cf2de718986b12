import { z } from 'zod';
import { isJsonObject } from '../core/merge-patch';
import { pageQuery } from '../core/pagination';
import { JOB_KINDS, JOB_STATES } from './states';

/** Job, TaskCreate, TaskUpdate, LogAppend (docs/api.md "Jobs and events"). */

const MAX_TITLE_CHARS = 500;
const MAX_LINES_PER_APPEND = 1000;
const MAX_ERROR_CHARS = 10_000;
/** A job's `data` as compact JSON, also after a merge (docs/api.md §Jobs: 413 `too_large` past it). */
export const MAX_DATA_BYTES = 256 * 1024;

const title = z
  .string()
  .refine((t) => {
    const chars = [...t].length;
    return chars >= 1 && chars <= MAX_TITLE_CHARS;
  }, `title must be 1..${MAX_TITLE_CHARS} characters`)
  .meta({ description: '1..500 characters (Unicode code points).' });
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
// Passed through as parsed (a `__proto__` member stays), checked as a document by task.ts.
const data = z
  .custom<Record<string, unknown>>(isJsonObject, { message: 'data must be a JSON object' })
  .meta({
    type: 'object',
    description: `A JSON object the studio keeps with the job: at most ${MAX_DATA_BYTES} bytes as compact JSON and 100 levels deep; counts toward \`kv_bytes\`.`,
  });

export const idParams = z.object({ id: z.string() });
export const listQuery = z.object(pageQuery);

export const taskCreate = z.strictObject({
  title,
  state: z.enum(['queued', 'running']).optional().meta({ description: 'Default `running`.' }),
  progress_num: count.optional(),
  progress_den: count.optional().meta({ description: '0 (the default) means indeterminate.' }),
  data: data.optional(),
});

export const taskUpdate = z.strictObject({
  title: title.optional(),
  state: z.enum(JOB_STATES).optional(),
  progress_num: count.optional(),
  progress_den: count.optional(),
  last_error: z.string().max(MAX_ERROR_CHARS).nullable().optional().meta({ description: 'At most 10000 characters; `null` clears the error.' }),
  data: data.nullable().optional().meta({ description: 'Merge-patched into the stored data; `null` empties it.' }),
});
export type TaskUpdate = z.infer<typeof taskUpdate>;

export const logAppend = z.strictObject({
  lines: z
    .array(z.string())
    .min(1)
    .max(MAX_LINES_PER_APPEND)
    .meta({ description: '1..1000 strings; one with line breaks becomes several lines; each line at most 16 KiB (UTF-8).' }),
});

export const job = z.object({
  id: z.string(),
  studio_id: z.string(),
  kind: z.enum(JOB_KINDS),
  title: z.string(),
  state: z.enum(JOB_STATES),
  progress_num: z.number().int(),
  progress_den: z.number().int(),
  last_error: z.string().nullable(),
  cancel_requested_at: z.string().nullable(),
  data: z.record(z.string(), z.unknown()),
  timeline_id: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  finished_at: z.string().nullable(),
});
export const jobPage = z.object({ items: z.array(job), next_cursor: z.string().nullable() });
