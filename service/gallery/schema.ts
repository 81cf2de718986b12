import { z } from 'zod';
import { pageQuery } from '../core/pagination';
import { parseInstant } from '../core/time';
import { isJsonObject } from '../core/merge-patch';
import { ASSET_KINDS } from '../assets';

/** ItemCreate, ItemUpdate, Item and the list query; rules and limits: docs/api.md "Gallery". */


export const LIMITS = {
  titleChars: 1000,
  tags: 100,
  tagChars: 100,
  inputs: 1000,
  roleChars: 100,
  queryTags: 20,
  /** `params` as compact JSON (413 `too_large` past it): a page of items stays small, as a job's `data` does. */
  paramsBytes: 256 * 1024,
};

const CONTROL = /[\u0000-\u001f\u007f]/;
const text = (max: number, what: string) =>
  z
    .string()
    .refine((s) => [...s].length <= max, `${what} must be at most ${max} characters`)
    .refine((s) => !CONTROL.test(s), `${what} may not contain control characters`);
const label = (max: number, what: string) =>
  text(max, what).refine((s) => s.length > 0, `${what} must not be empty`);

/** Ids are not checked for form: one that cannot exist is 404 (or 422 for a session) like any unknown id. */
const id = z.string().min(1).max(64);
const title = z
  .string()
  .refine((s) => [...s].length <= LIMITS.titleChars, `title must be at most ${LIMITS.titleChars} characters`)
  .nullable()
  .meta({ description: `Up to ${LIMITS.titleChars} characters; null for none. Searched by \`q\`.` });
const tags = z
  .array(label(LIMITS.tagChars, 'a tag'))
  .max(LIMITS.tags)
  .meta({ description: `Up to ${LIMITS.tags} tags of 1..${LIMITS.tagChars} characters; duplicates collapse; matched exactly.` });
const input = z.strictObject({
  asset_id: id.meta({ description: 'An asset the caller can read (else 404).' }),
  role: label(LIMITS.roleChars, 'role').meta({ description: `What the input was for, e.g. \`init_image\`; 1..${LIMITS.roleChars} characters.` }),
});

/** Checked, not copied: a copy would drop a member named `__proto__`, so the object would not be stored as sent. */
const params = z
  .custom<Record<string, unknown>>(isJsonObject, { message: 'params must be a JSON object' })
  .meta({ type: 'object', description: 'Generation parameters; `params.prompt` (a string) is searched by `q`.' });

export const itemCreate = z.strictObject({
  asset_id: id.meta({ description: 'The output: an asset the caller can read (else 404).' }),
  title: title.optional(),
  tags: tags.optional(),
  starred: z.boolean().optional(),
  session_id: id.nullable().optional().meta({ description: 'One of the caller\'s live sessions (else 422 `unknown_session`).' }),
  params: params.optional(),
  inputs: z.array(input).max(LIMITS.inputs).optional().meta({ description: `Up to ${LIMITS.inputs}; duplicate (asset_id, role) pairs collapse.` }),
});
export type ItemCreate = z.infer<typeof itemCreate>;

export const itemUpdate = z.strictObject({
  title: title.optional().meta({ description: 'null clears the title.' }),
  tags: tags.nullable().optional().meta({ description: 'Replaces the whole set; null clears it.' }),
  starred: z.boolean().optional(),
});
export type ItemUpdate = z.infer<typeof itemUpdate>;

const instant = z
  .string()
  .transform((s, ctx) => {
    const parsed = parseInstant(s);
    if (parsed === null) {
      ctx.addIssue({ code: 'custom', message: 'must be an RFC 3339 instant, e.g. 2026-11-22T10:01:24.123Z' });
      return z.NEVER;
    }
    return parsed;
  })
  .meta({ type: 'string', format: 'date-time' });
const boolText = z.enum(['true', 'false']).transform((v) => v === 'true');

export const listQuery = z.object({
  scope: z.enum(['self', 'all']).optional().meta({ description: '`self` (default) or `all` (needs `gallery.read_all`).' }),
  studio: z
    .string()
    .regex(/^[a-z][a-z0-9-]{1,31}$/, 'must be a studio id')
    .optional()
    .meta({ description: 'With `scope=all`: only this studio\'s items.' }),
  kind: z.enum(ASSET_KINDS).optional().meta({ description: 'The item\'s asset kind.' }),
  tag: z
    .union([label(LIMITS.tagChars, 'tag'), z.array(label(LIMITS.tagChars, 'tag')).max(LIMITS.queryTags)])
    .optional()
    .meta({ description: `Repeatable (up to ${LIMITS.queryTags}); every given tag must be present.` }),
  session_id: z.string().optional().meta({ description: 'Items recorded in this session (deleted sessions too).' }),
  starred: boolText.optional().meta({ type: 'boolean' }),
  asset_id: z.string().optional().meta({ description: 'Items whose output is this asset.' }),
  since: instant.optional().meta({ description: 'Created at or after (RFC 3339).' }),
  until: instant.optional().meta({ description: 'Created before (RFC 3339).' }),
  q: z.string().optional().meta({ description: 'Full-text over title and `params.prompt` (words, case-insensitive, the last one a prefix, "quoted phrases"); any text is valid.' }),
  ...pageQuery,
});
export type ListQuery = z.infer<typeof listQuery>;

export const lineageQuery = z.object(pageQuery);
/** Any text: an id that cannot exist is absent (404) like any unknown one. */
export const idParams = z.object({ id: z.string() });

export const item = z.object({
  id: z.string(),
  studio_id: z.string(),
  asset_id: z.string(),
  kind: z.enum(ASSET_KINDS),
  title: z.string().nullable(),
  tags: z.array(z.string()),
  starred: z.boolean(),
  session_id: z.string().nullable(),
  params: z.record(z.string(), z.unknown()),
  inputs: z.array(z.object({ asset_id: z.string(), role: z.string() })),
  timeline_id: z.string().nullable().meta({ description: 'The sequence an exported item came from; null otherwise.' }),
  created_at: z.string(),
  updated_at: z.string(),
});
export const itemPage = z.object({ items: z.array(item), next_cursor: z.string().nullable() });
