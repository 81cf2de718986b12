import { h } from '../../lib/dom';
import { mediaUrl } from '../../lib/media';
import type { Clip } from '../types';
import { waveformCrop } from '../visible';

/**
 * An audio clip's waveform: the asset's thumbnail, which for sound is a
 * picture of the whole waveform whose x axis spans exactly 0..the source's
 * length (docs/api.md "Thumbnails"), cropped to the clip's in..out with CSS
 * (visible.ts `waveformCrop`). The picture and the source's length (read from
 * the file's metadata by an <audio> element) are fetched once per asset. When
 * the service makes no such picture for the asset (an older service, a file
 * it cannot read), the clip keeps a plain bar: `data-wave` says which.
 */

interface Wave {
  url: string;
  duration: number;
}

const known = new Map<string, Wave | null>();
const loading = new Set<string>();

export function waveformFor(c: Clip, lanes: HTMLElement): HTMLElement {
  const el = h('span', { class: 'waveform', 'aria-hidden': 'true', 'data-asset': c.asset_id, 'data-in': c.in, 'data-duration': c.duration, 'data-wave': 'loading' });
  const wave = known.get(c.asset_id);
  if (wave !== undefined) apply(el, wave);
  else void load(c.asset_id, lanes);
  return el;
}

function apply(el: HTMLElement, wave: Wave | null): void {
  const crop = wave ? waveformCrop(Number(el.dataset.in), Number(el.dataset.duration), wave.duration) : null;
  if (!wave || !crop) {
    el.dataset.wave = 'none';
    return;
  }
  el.dataset.wave = 'shown';
  el.style.backgroundImage = `url("${wave.url}")`;
  el.style.backgroundSize = crop.size;
  el.style.backgroundPosition = crop.position;
}

async function load(id: string, lanes: HTMLElement): Promise<void> {
  if (loading.has(id)) return;
  loading.add(id);
  let wave: Wave | null = null;
  try {
    const [thumb, file] = await Promise.all([mediaUrl(id, 'thumb'), mediaUrl(id, 'file')]);
    if (thumb && file) {
      const [, duration] = await Promise.all([picture(thumb), sourceLength(file)]);
      wave = { url: thumb, duration };
    }
  } catch {
    wave = null; // a plain bar
  }
  known.set(id, wave);
  loading.delete(id);
  for (const el of lanes.querySelectorAll<HTMLElement>('.waveform')) if (el.dataset.asset === id) apply(el, wave);
}

function picture(url: string): Promise<void> {
  const img = new Image();
  img.src = url;
  return img.decode();
}

function sourceLength(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const a = new Audio();
    a.preload = 'metadata';
    a.addEventListener('loadedmetadata', () => (Number.isFinite(a.duration) && a.duration > 0 ? resolve(a.duration) : reject(new Error('no length'))), { once: true });
    a.addEventListener('error', () => reject(new Error('unreadable')), { once: true });
    a.src = url;
  });
}
