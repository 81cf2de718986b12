import { call } from '../../lib/api';
import { assetInfo } from '../gallery/media';
import { nameOf, type Item } from '../gallery/types';
import { studioById } from '../studios';
import type { Handoff } from '../../lib/api-types';
import type { Facts } from './state';

/**
 * What a request card needs beyond the handoff itself: studio names (the launcher's
 * studio list), each offered asset's kind (`/launcher/assets/{id}/info`, read once per
 * asset and shared with the gallery) and the offered item's title
 * (`/launcher/gallery/items/{id}`): the launcher may read every studio's work.
 */

/** A studio's name; its id when it is not installed (a studio added by the CLI, or since removed). */
export function studioName(id: string): string {
  return studioById(id)?.name ?? id;
}

const items = new Map<string, Promise<Item | null>>();

function itemOf(id: string): Promise<Item | null> {
  let known = items.get(id);
  if (!known) {
    known = call<Item>(`/launcher/gallery/items/${encodeURIComponent(id)}`).catch(() => null);
    items.set(id, known);
  }
  return known;
}

/** Reads the kinds and the name of what `h` offers; an asset or item that cannot be read stays unnamed. */
export async function readFacts(h: Handoff): Promise<Facts> {
  const [infos, item] = await Promise.all([Promise.all(h.asset_ids.map((id) => assetInfo(id))), h.item_id ? itemOf(h.item_id) : null]);
  // Named by its item, else (one file) by the file's name.
  const title = item ? nameOf(item) : infos.length === 1 && infos[0] ? infos[0].filename : null;
  return { kinds: infos.map((info) => info?.kind ?? null), title };
}
