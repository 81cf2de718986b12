import { call } from '../../lib/api';
import { h, replace } from '../../lib/dom';
import { duration } from '../../lib/format';
import { showMedia } from '../../lib/media';
import type { AssetInfo, Item } from './types';

/**
 * Pictures of items: every kind but `other` has a thumbnail the service made
 * once (an image scaled, a video's poster frame, a sound's waveform across its
 * whole length: docs/api.md §Thumbnails), loaded through a short-lived media
 * URL (lib/media.ts). Video and sound also show their length, from the asset's
 * record (`/launcher/assets/{id}/info`), read once per asset after its
 * thumbnail loaded (making it measures the length when the studio gave none).
 */

const infos = new Map<string, Promise<AssetInfo | null>>();

/** The asset's record, read once per page. */
export function assetInfo(assetId: string, fresh = false): Promise<AssetInfo | null> {
  let known = infos.get(assetId);
  if (!known || fresh) {
    known = call<AssetInfo>(`/launcher/assets/${encodeURIComponent(assetId)}/info`).catch(() => null);
    infos.set(assetId, known);
  }
  return known;
}

/** A thumbnail box for an item (tiles, lineage): the picture, with a kind mark and a length for video and sound. */
export function preview(item: Item, cls: string): HTMLElement {
  const box = h('div', { class: `${cls} kind-${item.kind}` });
  if (item.kind === 'other') {
    box.append(h('span', { class: 'g-placeholder', 'aria-hidden': 'true' }, 'file'));
    return box;
  }
  const img = h('img', { alt: '', decoding: 'async', draggable: 'false' });
  showMedia(img, item.asset_id, 'thumb', () =>
    replace(box, h('span', { class: 'g-placeholder failed' }, item.kind === 'image' ? 'No preview: the thumbnail did not load' : `No preview of this ${item.kind}`)),
  );
  box.append(img);
  if (item.kind === 'video' || item.kind === 'audio') {
    const badge = h('span', { class: 'g-badge', 'aria-hidden': 'true' }, item.kind === 'video' ? '▶' : '♪');
    box.append(badge);
    img.addEventListener(
      'load',
      () =>
        void assetInfo(item.asset_id, true).then((info) => {
          if (info?.duration_s != null) badge.textContent = `${item.kind === 'video' ? '▶' : '♪'} ${duration(info.duration_s)}`;
        }),
      { once: true },
    );
  }
  return box;
}
