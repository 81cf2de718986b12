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
/** Lengths measured so far, by asset (seconds: the sequence's rate turns them into frames). */
const lengths = new Map<string, number>();

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
    b.items = page.items
      .filter((i) => (i.kind === 'image' || i.kind === 'video' || i.kind === 'audio') && !seen.has(i.asset_id) && seen.add(i.asset_id))
      .map((i): BinItem => ({
        asset_id: i.asset_id,
        kind: i.kind,
        title: i.title ?? `${i.kind} ${i.asset_id.slice(-6)}`,
        length: i.kind === 'image' ? Math.round((STILL_SECONDS * state.rate.num) / state.rate.den) : (lengths.has(i.asset_id) ? toFrames(lengths.get(i.asset_id)!) : null),
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
  if (!(seconds > 0)) return;
  lengths.set(assetId, seconds);
  const item = state.bin.items.find((i) => i.asset_id === assetId);
  if (!item) return;
  item.length = toFrames(seconds);
  requestRender('bin');
}

/** Whole frames of the open sequence that fit in the source (a clip never runs past its end). */
function toFrames(seconds: number): number {
  return Math.max(1, Math.floor((seconds * state.rate.num) / state.rate.den));
}
