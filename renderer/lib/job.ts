/**
 * A job as the service returns it (docs/api.md "Jobs"): the fields the
 * launcher's job list and the editor's export panel read. One declaration
 * for both pages.
 */
export interface Job {
  id: string;
  studio_id: string;
  kind: string;
  title: string;
  state: string;
  progress_num: number;
  progress_den: number;
  last_error: string | null;
  cancel_requested_at: string | null;
  /** Set on an export job: the sequence it exports. */
  timeline_id: string | null;
  /** An export's result once it succeeded (`asset_id`, `item_id`); a task job's own data. */
  data: { asset_id?: string; item_id?: string } | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}
