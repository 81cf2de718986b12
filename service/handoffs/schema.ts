import { z } from 'zod';
import { pageQuery } from '../core/pagination';
import { isUlid } from '../core/ids';
import { STUDIO_ID_PATTERN } from '../core/origin';
import { HANDOFF_STATES } from './store';

/** HandoffCreate, HandoffAccept, HandoffApprove, Handoff and HandoffRule (docs/api.md "Handoffs"). */

export const MAX_ASSETS = 50;
export const MAX_NOTE_CHARS = 500;
const MAX_SESSION_NAME_CHARS = 200;

const ulid = z.string().refine(isUlid, 'must be a ULID');
const chars = (min: number, max: number, what: string) =>
  z.string().refine((s) => {
    const n = [...s].length;
    return n >= min && n <= max;
  }, `${what} must be ${min}..${max} characters`);
const studioId = z.string().regex(STUDIO_ID_PATTERN, 'must be a studio id');

export const handoffCreate = z.strictObject({
  to: studioId.meta({ description: 'The studio to hand to: installed, and accepting at least one of the offered kinds.' }),
  asset_ids: z
    .array(ulid)
    .min(1)
    .max(MAX_ASSETS)
    .refine((ids) => new Set(ids).size === ids.length, 'asset_ids must not repeat')
    .meta({ description: `1..${MAX_ASSETS} of the caller's assets, no repeats.` }),
  item_id: z.string().min(1).max(64).optional().meta({ description: 'A gallery item the caller may read, shown with the request.' }),
  session_id: z.string().min(1).max(64).optional().meta({ description: "One of the caller's live sessions (needs `kv`); the recipient gets a copy." }),
  note: chars(0, MAX_NOTE_CHARS, 'note').optional().meta({ description: `Shown to the user with the request; at most ${MAX_NOTE_CHARS} characters.` }),
});

export const handoffAccept = z.strictObject({
  session_name: chars(1, MAX_SESSION_NAME_CHARS, 'session_name')
    .optional()
    .meta({ description: "The name of the recipient's copy of the session (default: the original's)." }),
});

export const handoffApprove = z.strictObject({
  always: z.boolean().optional().meta({ description: 'Also allow every later handoff from this sender to this recipient without asking.' }),
});

export const handoff = z
  .object({
    id: z.string(),
    from: z.string(),
    to: z.string(),
    asset_ids: z.array(z.string()),
    item_id: z.string().nullable(),
    session_id: z.string().nullable(),
    note: z.string().nullable(),
    state: z.enum(HANDOFF_STATES).meta({
      description: 'pending (waiting for the user), approved, accepted, declined, withdrawn, or expired (pending for 24 h).',
    }),
    accepted_session_id: z.string().nullable().meta({ description: "The recipient's copy of the session, once accepted." }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Handoff' });
export const handoffPage = z.object({ items: z.array(handoff), next_cursor: z.string().nullable() });

export const launcherHandoff = handoff
  .extend({
    session_name: z.string().nullable().meta({ description: "The offered session's name now; null without a session, or once it is deleted." }),
  })
  .meta({ id: 'LauncherHandoff', description: 'A Handoff as the launcher shows it.' });
export const launcherHandoffPage = z.object({ items: z.array(launcherHandoff), next_cursor: z.string().nullable() });

export const handoffRule = z
  .object({ from: z.string(), to: z.string(), created_at: z.string() })
  .meta({ id: 'HandoffRule', description: 'A pair the user allowed always: handoffs from `from` to `to` are approved as they are made.' });
export const handoffRulePage = z.object({ items: z.array(handoffRule), next_cursor: z.string().nullable() });

export const idParams = z.object({ id: z.string() });
export const ruleParams = z.object({ from: studioId, to: studioId });

export const studioListQuery = z.object({
  ...pageQuery,
  direction: z.enum(['sent', 'received']).optional().meta({ description: 'Only those sent, or only those received (default both).' }),
});
export const launcherListQuery = z.object({
  ...pageQuery,
  state: z.enum(HANDOFF_STATES).optional().meta({ description: 'Only handoffs in this state.' }),
  item_id: z.string().min(1).max(64).optional().meta({ description: 'Only handoffs offering this gallery item.' }),
  from: studioId.optional().meta({ description: 'Only those this studio sent.' }),
  to: studioId.optional().meta({ description: 'Only those sent to this studio (the editor\'s media bin reads what a studio accepted).' }),
});
export const rulesQuery = z.object(pageQuery);
