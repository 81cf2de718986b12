import { existsSync, renameSync } from 'node:fs';
import { open } from 'node:fs/promises';
import sharp from 'sharp';
import { ApiError } from '../core/errors';
import { removeQuietly, type BlobStore } from './blobs';
import { THUMB_WIDTH } from './schema';
import { decoderBytes } from './decoder-input';
import { drawMediaPicture } from './media-thumbs';

/**
 * Thumbnails (docs/api.md "Thumbnail `GET /assets/{id}/thumb`"): 320 px wide WebP,
 * aspect kept, generated once per sha256 and cached at
 * DIR/thumbs/<sha256>-320.webp (written to a temp file, then renamed).
 *
 * - Single flight: concurrent first requests for one image share one job.
 * - Bounded: at most MAX_JOBS jobs run, the rest wait in a queue. sharp works
 *   on libuv's thread pool (4 threads), which file reads and writes share; with
 *   two jobs of one libvips thread each, a burst of thumbnails leaves the pool
 *   free for the rest of the API.
 * - From bytes alone: the decoder gets a Buffer, never the blob's path, so it
 *   has no folder to resolve a name in, and SVG is first rebuilt without any
 *   external reference (svg-sanitise.ts). An SVG naming `<sha256>.png` beside
 *   it in the blob store once drew another studio's image into its thumbnail
 *   (docs/security.md, Inputs: thumbnails). An image larger than MAX_DECODED_BYTES
 *   gets no thumbnail (decoder-input.ts).
 * - Video and sound (media-thumbs.ts): ffmpeg draws a poster frame or the
 *   whole file's waveform into a PNG beside the temp file, which is then
 *   made into the WebP as an image is; the same slots bound it, so at most
 *   MAX_JOBS ffmpeg runs make thumbnails at once, off the serving thread (a
 *   child process). The probe's length is handed to `onDuration` (the asset's
 *   `duration_s` when the studio gave none).
 */

const MAX_JOBS = 2;

export type ThumbKind = 'image' | 'video' | 'audio';

export interface ThumbnailerOptions {
  /** Ends the ffmpeg runs at the service's stop (its MediaScope). */
  signal?: AbortSignal;
  /** A video or sound file's probed length, once per thumbnail made. */
  onDuration?: (sha256: string, seconds: number) => void;
}

/** `isLive(sha256)`: a live (not reclaimed) asset has these bytes. */
export function createThumbnailer(blobs: BlobStore, isLive: (sha256: string) => boolean, options: ThumbnailerOptions = {}) {
  sharp.cache(false); // cached operations would keep reclaimed blobs open
  sharp.concurrency(1);
  const inflight = new Map<string, Promise<void>>();
  const waiting: (() => void)[] = [];
  let running = 0;

  async function inSlot<T>(job: () => Promise<T>): Promise<T> {
    if (running >= MAX_JOBS) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await job();
    } finally {
      running--;
      waiting.shift()?.();
    }
  }

  async function generate(sha256: string, source: string, target: string, kind: ThumbKind): Promise<void> {
    const tmp = blobs.tempPath();
    const picture = `${tmp}.png`;
    try {
      if (kind === 'image') {
        const input = await decoderBytes(source);
        await sharp(input).rotate().resize({ width: THUMB_WIDTH }).webp({ quality: 80 }).toFile(tmp);
      } else {
        const { duration_s } = await drawMediaPicture(kind, source, picture, options.signal);
        // Exactly THUMB_WIDTH wide, nothing cropped: a waveform's x axis still spans the whole file.
        await sharp(picture).resize({ width: THUMB_WIDTH }).webp({ quality: 80 }).toFile(tmp);
        if (duration_s !== null && options.onDuration) options.onDuration(sha256, duration_s);
      }
    } catch (err) {
      removeQuietly(tmp);
      if (err instanceof ApiError) throw err;
      throw ApiError.unsupported(`No thumbnail can be made of this ${kind}: ${(err as Error).message}`);
    } finally {
      if (kind !== 'image') removeQuietly(picture);
    }
    // Durable before it gets its name: after a power loss an empty cached file would be served for ever.
    const handle = await open(tmp, 'r');
    try {
      await handle.sync();
    } catch (err) {
      removeQuietly(tmp);
      throw err;
    } finally {
      await handle.close();
    }
    renameSync(tmp, target);
    // A reclaim of these bytes while the thumbnail was made removed no file yet: this one goes
    // now, in the rename's turn, so a run leaves no thumbnail without its row (recover.ts).
    // A job that outlived the service's close finds the database closed: a cache entry it cannot
    // vouch for goes too.
    let live = false;
    try {
      live = isLive(sha256);
    } catch {
      live = false;
    }
    if (!live) {
      removeQuietly(target);
      return;
    }
    console.error(`assets: thumbnail made ${target} (${kind})`);
  }

  return {
    /** The cached thumbnail's path, made first when missing. `source` is the blob. */
    async ensure(sha256: string, source: string, kind: ThumbKind = 'image'): Promise<string> {
      const target = blobs.thumbPath(sha256, THUMB_WIDTH);
      let job = inflight.get(sha256);
      if (!job) {
        if (existsSync(target)) return target;
        job = inSlot(() => generate(sha256, source, target, kind)).finally(() => inflight.delete(sha256));
        inflight.set(sha256, job);
      }
      await job;
      return target;
    },
  };
}

export type Thumbnailer = ReturnType<typeof createThumbnailer>;

