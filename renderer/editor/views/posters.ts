import { mediaUrl } from '../../lib/media';

/**
 * Poster frames of video clips: one frame at the clip's in point, grabbed by a
 * hidden <video> (byte ranges: only the index and that frame are read), drawn
 * to a small canvas and kept as a blob: URL per asset and in point, one at a
 * time, so a redraw never loads a video again.
 */
const posters = new Map<string, string | 'pending' | 'failed'>();
const posterQueue: { id: string; at: number; key: string }[] = [];
let posterBusy = false;

/** The poster's URL when it is there; else it is asked for once and `onReady` sets it on the images waiting for it. */
export function poster(id: string, at: number, key: string, onReady: (key: string, url: string) => void): string | null {
  const ready = posters.get(key);
  if (ready === undefined) {
    posters.set(key, 'pending');
    posterQueue.push({ id, at, key });
    void nextPoster(onReady);
  }
  return typeof ready === 'string' && ready !== 'pending' && ready !== 'failed' ? ready : null;
}

async function nextPoster(onReady: (key: string, url: string) => void): Promise<void> {
  if (posterBusy) return;
  const job = posterQueue.shift();
  if (!job) return;
  posterBusy = true;
  try {
    const url = await grabFrame(job.id, job.at);
    posters.set(job.key, url);
    onReady(job.key, url);
  } catch {
    posters.set(job.key, 'failed');
  } finally {
    posterBusy = false;
    void nextPoster(onReady);
  }
}

function grabFrame(id: string, at: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const v = document.createElement('video');
    v.muted = true;
    v.preload = 'auto';
    const done = (err?: unknown) => {
      clearTimeout(timer);
      v.removeAttribute('src');
      v.load();
      if (err) reject(err);
    };
    const timer = setTimeout(() => done(new Error('poster timed out')), 15_000);
    v.addEventListener('error', () => done(new Error('poster failed')), { once: true });
    v.addEventListener('loadedmetadata', () => {
      v.currentTime = Math.min(at + 0.001, Math.max(0, v.duration - 0.05));
    }, { once: true });
    v.addEventListener('seeked', () => {
      const canvas = document.createElement('canvas');
      canvas.height = 80;
      canvas.width = Math.max(1, Math.round((80 * (v.videoWidth || 16)) / (v.videoHeight || 9)));
      canvas.getContext('2d')!.drawImage(v, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((blob) => {
        if (!blob) return done(new Error('no poster'));
        resolve(URL.createObjectURL(blob));
        done();
      }, 'image/webp');
    }, { once: true });
    mediaUrl(id, 'file').then((url) => (url ? (v.src = url) : done(new Error('no media URL'))), done);
  });
}
