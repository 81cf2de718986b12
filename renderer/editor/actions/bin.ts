import { call, query, type Page } from '../../lib/api';
import { failureText } from '../read';
import { requestRender, state, type BinItem } from '../state';

/**
 * The media bin: what the sequence's studio has in the gallery (its own
 * items: GET /launcher/gallery/items?studio=…), pictures and sound, to drag
 * onto a track or add at the playhead.
 */

interface Item {
  asset_id: string;
  kind: string;
  title: string | null;
}

/** Seconds a still lasts when added (the service's default for pictures). */
const STILL_SECONDS = 5;
let loadSeq = 0;

export async function loadBin(): Promise<void> {
  const studio = state.tl?.studio_id ?? null;
  if (!studio) return;
  const seq = ++loadSeq;
  const b = state.bin;
  if (b.studio !== studio) b.items = [];
  b.studio = studio;
  b.loading = true;
  requestRender('bin');
  try {
    const page = await call<Page<Item>>(`/launcher/gallery/items${query({ studio, limit: 60 })}`);
    if (seq !== loadSeq) return;
    const seen = new Set<string>();
    const known = new Map(b.items.map((i) => [i.asset_id, i.length]));
    b.items = page.items
      .filter((i) => (i.kind === 'image' || i.kind === 'video' || i.kind === 'audio') && !seen.has(i.asset_id) && seen.add(i.asset_id))
      .map((i): BinItem => ({
        asset_id: i.asset_id,
        kind: i.kind,
        title: i.title ?? `${i.kind} ${i.asset_id.slice(-6)}`,
        length: i.kind === 'image' ? Math.round((STILL_SECONDS * state.rate.num) / state.rate.den) : (known.get(i.asset_id) ?? null),
      }));
    b.error = null;
  } catch (err) {
    if (seq === loadSeq) b.error = `Could not list the studio's media: ${failureText(err)}`;
  } finally {
    if (seq === loadSeq) b.loading = false;
    requestRender('bin');
  }
}

/** A bin item's length, once its media told it (seconds → whole frames of the sequence). */
export function measured(assetId: string, seconds: number): void {
  const item = state.bin.items.find((i) => i.asset_id === assetId);
  if (!item || !(seconds > 0)) return;
  item.length = Math.max(1, Math.floor((seconds * state.rate.num) / state.rate.den));
  requestRender('bin');
}
