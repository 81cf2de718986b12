import { call, query, type Page } from '../../lib/api';
import type { Asset, Handoff, Item } from '../../lib/api-types';
import { failureText } from '../read';
import { requestRender, state, type BinItem } from '../state';

/**
 * The media bin: what the sequence's studio has in the gallery (its own
 * items: GET /launcher/gallery/items?studio=…) and what other studios handed
 * it (its accepted handoffs' assets: GET /launcher/handoffs?to=…&state=accepted),
 * pictures and sound, to drag onto a track or add at the playhead.
 */

/** Seconds a still lasts when added (the service's default for pictures). */
const STILL_SECONDS = 5;
/** At most this many handed assets are listed, read a few at a time. */
const HANDED_MAX = 60;
const HANDED_READS_AT_ONCE = 6;
const MEDIA_KINDS = new Set(['image', 'video', 'audio']);
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
    const [page, handed] = await Promise.all([
      call<Page<Item>>(`/launcher/gallery/items${query({ studio, limit: 60 })}`),
      handedAssets(studio),
    ]);
    if (seq !== loadSeq) return;
    const seen = new Set<string>();
    const own = page.items
      .filter((i) => MEDIA_KINDS.has(i.kind) && !seen.has(i.asset_id) && seen.add(i.asset_id))
      .map((i) => binItem(i.asset_id, i.kind, i.title ?? `${i.kind} ${i.asset_id.slice(-6)}`));
    const given = handed
      .filter((a) => MEDIA_KINDS.has(a.asset.kind) && !seen.has(a.asset.id) && seen.add(a.asset.id))
      .map((a) => binItem(a.asset.id, a.asset.kind, `${a.asset.filename} (from ${a.from})`));
    b.items = [...own, ...given];
    b.error = null;
  } catch (err) {
    if (seq === loadSeq) b.error = `Could not list the studio's media: ${failureText(err)}`;
  } finally {
    if (seq === loadSeq) b.loading = false;
    requestRender('bin');
  }
}

function binItem(assetId: string, kind: string, title: string): BinItem {
  const length = kind === 'image' ? Math.round((STILL_SECONDS * state.rate.num) / state.rate.den) : lengths.has(assetId) ? toFrames(lengths.get(assetId)!) : null;
  return { asset_id: assetId, kind, title, length };
}

/**
 * The assets other studios handed this one (its accepted handoffs, newest first),
 * each read once for its kind and name; one that can no longer be read is left out.
 */
async function handedAssets(studio: string): Promise<{ asset: Asset; from: string }[]> {
  const page = await call<Page<Handoff>>(`/launcher/handoffs${query({ to: studio, state: 'accepted', limit: HANDED_MAX })}`);
  const wanted: { id: string; from: string }[] = [];
  const seen = new Set<string>();
  for (const ho of page.items) {
    for (const id of ho.asset_ids) {
      if (wanted.length < HANDED_MAX && !seen.has(id)) {
        seen.add(id);
        wanted.push({ id, from: ho.from });
      }
    }
  }
  const out: ({ asset: Asset; from: string } | null)[] = new Array(wanted.length).fill(null);
  let next = 0;
  const worker = async () => {
    while (next < wanted.length) {
      const at = next++;
      const w = wanted[at]!;
      out[at] = await call<Asset>(`/launcher/assets/${encodeURIComponent(w.id)}/info`).then((asset) => ({ asset, from: w.from }), () => null);
    }
  };
  await Promise.all(Array.from({ length: Math.min(HANDED_READS_AT_ONCE, wanted.length) }, worker));
  return out.filter((a): a is { asset: Asset; from: string } => a !== null);
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
