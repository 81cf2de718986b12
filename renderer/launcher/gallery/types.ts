/** The gallery's shapes (docs/api.md "Gallery", "Launcher events"); the item itself comes from lib/api-types.ts, generated from the OpenAPI document. */

import type { Asset, Item } from '../../lib/api-types';

export type { Item };

/** `GET /launcher/assets/{id}/info`: the asset's record (its kind, file name, length). */
export type AssetInfo = Asset;

/** An `item` event of `/launcher/events`. */
export interface ItemEvent {
  id: string;
  studio_id: string;
  change: 'created' | 'updated' | 'deleted';
}

export interface Filters {
  q: string;
  tags: string[];
  studio: string;
  starred: boolean;
}

/** The change of `PATCH /launcher/gallery/items/{id}` (the studio route's ItemUpdate). */
export interface ItemChange {
  title?: string | null;
  tags?: string[] | null;
  starred?: boolean;
}

/** What a tile or a lineage entry is called: its title, else its prompt, else its kind. */
export function nameOf(item: Item): string {
  const prompt = typeof item.params.prompt === 'string' ? item.params.prompt : '';
  return (item.title ?? '').trim() || prompt.trim() || `Untitled ${item.kind}`;
}

/** Tags as typed in a field: comma-separated, trimmed, empty ones dropped, each once. */
export function parseTags(text: string): string[] {
  return [...new Set(text.split(',').map((t) => t.trim()).filter(Boolean))];
}
