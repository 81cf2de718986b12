import { h, replace } from '../../lib/dom';
import { showMedia } from '../../lib/media';
import { assetRecord } from './facts';

/**
 * The offered assets as thumbnails (short-lived media URLs, lib/media.ts, as the gallery
 * loads them). Built once per handoff and kept across rebuilds of its card, so a card
 * drawn again does not load its pictures again.
 */

/** Thumbnails shown on a card; the rest are counted. */
export const SHOWN = 6;

const strips = new Map<string, HTMLElement>();

export function thumbStrip(handoffId: string, assetIds: readonly string[], from: string): HTMLElement {
  let strip = strips.get(handoffId);
  if (strip) return strip;
  const list = h('ul', { class: 'request-thumbs', 'aria-label': `What ${from} offers` });
  for (const id of assetIds.slice(0, SHOWN)) list.append(h('li', {}, thumb(id)));
  if (assetIds.length > SHOWN) list.append(h('li', { class: 'request-more' }, `+${assetIds.length - SHOWN} more`));
  strip = list;
  strips.set(handoffId, strip);
  return strip;
}

/** Forgets a strip whose card left for good. */
export function dropStrip(handoffId: string): void {
  strips.delete(handoffId);
}

function thumb(assetId: string): HTMLElement {
  const box = h('div', { class: 'request-thumb', 'data-asset': assetId });
  const img = h('img', { alt: '', decoding: 'async', draggable: 'false' });
  box.append(img);
  void assetRecord(assetId).then((info) => {
    if (!info) return replace(box, h('span', { class: 'g-placeholder failed' }, 'Gone'));
    img.alt = info.filename;
    box.title = info.filename;
    if (info.kind === 'other') replace(box, h('span', { class: 'g-placeholder' }, 'file'));
    else if (info.kind !== 'image') box.append(h('span', { class: 'g-badge', 'aria-hidden': 'true' }, info.kind === 'video' ? '▶' : '♪'));
  });
  showMedia(img, assetId, 'thumb', () => {
    if (img.isConnected) img.replaceWith(h('span', { class: 'g-placeholder failed' }, 'No preview'));
  });
  return box;
}
