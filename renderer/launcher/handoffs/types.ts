/**
 * The handoff shapes (docs/api.md "Handoffs"). Provisional until the service's OpenAPI document
 * has them; then they come from lib/api-types.ts like every other API shape.
 */

import type { HandoffState } from './words';

export interface Handoff {
  id: string;
  from: string;
  to: string;
  asset_ids: string[];
  item_id: string | null;
  session_id: string | null;
  note: string | null;
  state: HandoffState;
  accepted_session_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface HandoffRule {
  from: string;
  to: string;
  created_at: string;
}
