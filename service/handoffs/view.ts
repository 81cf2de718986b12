import type { HandoffRow } from './store';

/** A handoff as the API shows it (docs/api.md "Handoffs"): the same shape to the sender, the recipient and the launcher. */
export interface Handoff {
  id: string;
  from: string;
  to: string;
  asset_ids: string[];
  item_id: string | null;
  session_id: string | null;
  note: string | null;
  state: HandoffRow['state'];
  accepted_session_id: string | null;
  created_at: string;
  updated_at: string;
}

export function handoffView(row: HandoffRow): Handoff {
  return {
    id: row.id,
    from: row.from_studio,
    to: row.to_studio,
    asset_ids: JSON.parse(row.asset_ids) as string[],
    item_id: row.item_id,
    session_id: row.session_id,
    note: row.note,
    state: row.state,
    accepted_session_id: row.accepted_session_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The launcher's view adds the offered session's current name (null without one, or once it is deleted), for the request's words. */
export interface LauncherHandoff extends Handoff {
  session_name: string | null;
}
