import type { ItemRow } from './store';

/** Item as JSON text (docs/api.md "Gallery"); tags, params and inputs are stored as JSON. */
export function itemJson(row: ItemRow): string {
  return (
    `{"id":"${row.id}","studio_id":"${row.studio_id}","asset_id":${JSON.stringify(row.asset_id)},"kind":"${row.kind}",` +
    `"title":${JSON.stringify(row.title)},"tags":${row.tags},"starred":${row.starred === 1},` +
    `"session_id":${JSON.stringify(row.session_id)},"params":${row.params},"inputs":${row.inputs},` +
    `"timeline_id":${JSON.stringify(row.timeline_id)},"created_at":"${row.created_at}","updated_at":"${row.updated_at}"}`
  );
}
