import { call } from './api';

/**
 * Stored files in `<img>`, `<video>`, `<audio>` and links (docs/api.md §Media
 * URLs): these send no Authorization header, so they load through
 * short-lived URLs (`/api/v1/media/...`, at most 10 minutes, one asset and
 * variant each) minted by `POST /launcher/media-urls`. Asks made in the same
 * turn go out as one request; a URL is reused until a minute before its
 * expiry. An element whose URL failed (expired while a video played, a lazy
 * thumbnail shown late) gets a fresh one and carries on where it was.
 */

export type MediaVariant = 'file' | 'thumb';
interface Minted {
  url: string | null;
  expires: number;
}

const MARGIN_MS = 60_000;
const BATCH = 200;
const cache = new Map<string, Minted>();
let queue: { id: string; variant: MediaVariant; done: (m: Minted) => void; fail: (e: unknown) => void }[] = [];

const keyOf = (id: string, variant: MediaVariant) => `${variant}:${id}`;

/** A URL that opens the asset's bytes (`file`) or its thumbnail, or null when no studio can read it. */
export function mediaUrl(id: string, variant: MediaVariant, fresh = false): Promise<string | null> {
  const known = cache.get(keyOf(id, variant));
  if (!fresh && known && known.expires - MARGIN_MS > Date.now()) return Promise.resolve(known.url);
  return new Promise((resolve, reject) => {
    if (queue.length === 0) queueMicrotask(flush);
    queue.push({ id, variant, done: (m) => resolve(m.url), fail: reject });
  });
}

function flush(): void {
  const asked = queue;
  queue = [];
  for (let i = 0; i < asked.length; i += BATCH) {
    const part = asked.slice(i, i + BATCH);
    call<{ items: { id: string; variant: MediaVariant; url: string | null; expires_at: string }[] }>('/launcher/media-urls', {
      method: 'POST',
      body: { assets: part.map(({ id, variant }) => ({ id, variant })) },
    }).then(
      ({ items }) => {
        items.forEach((item, n) => {
          const minted = { url: item.url, expires: Date.parse(item.expires_at) };
          cache.set(keyOf(item.id, item.variant), minted);
          part[n]!.done(minted);
        });
      },
      (err) => {
        for (const p of part) p.fail(err);
      },
    );
  }
}

export type MediaElement = HTMLImageElement | HTMLVideoElement | HTMLAudioElement;

/**
 * Points `el` at the asset and keeps it working: on a load error it asks for
 * a fresh URL once (an expired one: a video played past it, a lazy thumbnail
 * shown late) and, for video and audio, resumes at the same time and play
 * state. A fresh URL that fails too, or an asset no studio can read, calls
 * `onFail` (the file is gone): the page says so in place.
 */
export function showMedia(el: MediaElement, id: string, variant: MediaVariant, onFail: () => void): void {
  let retried = 0;
  const set = (fresh: boolean) =>
    mediaUrl(id, variant, fresh).then(
      (url) => {
        if (url === null) return onFail();
        if (el instanceof HTMLImageElement) {
          el.src = url;
          return;
        }
        const at = el.currentTime;
        const playing = !el.paused && !el.ended;
        el.src = url;
        if (at > 0) el.addEventListener('loadedmetadata', () => (el.currentTime = at), { once: true });
        if (playing) void el.play().catch(() => {});
      },
      () => onFail(),
    );
  el.addEventListener('error', () => {
    if (!el.getAttribute('src')) return;
    if (Date.now() - retried < MARGIN_MS) return onFail();
    retried = Date.now();
    void set(true);
  });
  void set(false);
}

/** Opens the asset's bytes in a new tab through a fresh URL (a link's href may have expired). */
export function openMedia(id: string): void {
  void mediaUrl(id, 'file').then((url) => {
    if (url) window.open(url, '_blank', 'noopener');
  });
}
