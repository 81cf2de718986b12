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

/** Reads in flight at once: a burst of requests of 50 assets each is a steady trickle, not a thousand requests at once. */
const READS = 6;
let inFlight = 0;
const waiting: (() => void)[] = [];

async function limited<T>(read: () => Promise<T>): Promise<T> {
  if (inFlight >= READS) await new Promise<void>((go) => waiting.push(go));
  inFlight++;
  try {
    return await read();
  } finally {
    inFlight--;
    waiting.shift()?.();
  }
}

/** An asset's record (kind, file name), read once per page and shared with the gallery; at most READS reads at once. */
export function assetRecord(id: string): ReturnType<typeof assetInfo> {
  return limited(() => assetInfo(id));
}

/** Reads the kinds and the name of what `h` offers; an asset or item that cannot be read stays unnamed. */
export async function readFacts(h: Handoff): Promise<Facts> {
  const [infos, item] = await Promise.all([
    Promise.all(h.asset_ids.map(assetRecord)),
    h.item_id ? limited(() => itemOf(h.item_id!)) : null,
  ]);
  // Named by its item, else (one file) by the file's name.
  const title = item ? nameOf(item) : infos.length === 1 && infos[0] ? infos[0].filename : null;
  return { kinds: infos.map((info) => info?.kind ?? null), title };
}
