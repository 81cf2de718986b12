import { createHash, randomUUID } from 'node:crypto';
import { chmodSync, createWriteStream, linkSync, readdirSync, renameSync, statfsSync, unlinkSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { join } from 'node:path';
import { ApiError } from '../core/errors';
import { ensureDir, syncDir } from '../core/files';
import { clashName } from './filename';

/**
 * The blob store on disk (docs/api.md "Assets"):
 *
 *   DIR/blobs/<sha256><ext>          content-addressed, mode 0444
 *   DIR/blobs/.tmp/<uuid>            uploads and adopt links in progress; emptied at start
 *   DIR/thumbs/<sha256>-320.webp     thumbnail cache
 *   DIR/library/<studio>/<name>      each studio's hardlink to the blob
 *
 * Temp files live in the blob store's own folder so the final rename never
 * crosses a volume. A blob is renamed into place before its row is inserted,
 * so a crash leaves at worst an orphan blob (removed at the next start), never
 * a row without its file.
 */

export interface Received {
  tmp: string;
  sha256: string;
  size: number;
}

export interface ReceiveOptions {
  /** Upload limit in bytes: over it, 413 `too_large` while streaming. */
  limit: number;
  /** Free space that must stay on the volume: checked every CHECK_EVERY bytes. */
  headroom: number;
}

/** How often the free space is checked while a body of unknown length streams in. */
const CHECK_EVERY = 64 * 1024 * 1024;
const WRITE_CHUNK = 1024 * 1024;

export function createBlobStore(dataDir: string) {
  const blobsDir = join(dataDir, 'blobs');
  const tmpDir = join(blobsDir, '.tmp');
  const thumbsDir = join(dataDir, 'thumbs');
  const libraryDir = join(dataDir, 'library');
  for (const dir of [blobsDir, tmpDir, thumbsDir, libraryDir]) ensureDir(dir);
  let leftovers = 0;

  const store = {
    blobsDir,
    tmpDir,
    thumbsDir,
    libraryDir,

    blobPath(sha256: string, ext: string): string {
      return join(blobsDir, sha256 + ext);
    },
    thumbPath(sha256: string, width: number): string {
      return join(thumbsDir, `${sha256}-${width}.webp`);
    },
    tempPath(): string {
      return join(tmpDir, randomUUID());
    },

    /** Bytes an unprivileged writer may still use on the blob store's volume. */
    freeBytes(): number {
      const s = statfsSync(blobsDir);
      return s.bavail * s.bsize;
    },

    /** 507 `disk_space` unless `size` bytes fit with the headroom left over (docs/api.md "Limits and defaults"). */
    checkSpace(size: number, headroom: number): void {
      const free = store.freeBytes();
      if (free < size + headroom) throw ApiError.diskSpace(size + headroom, free);
    },

    /**
     * Streams a request body into a new temp file while hashing it; fsyncs and
     * closes it. Never holds more than the stream's buffers in memory. On any
     * failure the temp file is gone and the body is left unread (the caller's
     * error answer closes the connection).
     */
    async receive(body: Readable, options: ReceiveOptions): Promise<Received> {
      const tmp = store.tempPath();
      const hash = createHash('sha256');
      let size = 0;
      // The stream owns its fd (opens, fsyncs before closing, closes, also when
      // destroyed); a stream over an fd also closed elsewhere would close it
      // twice (bench/README.md, assets). Created read-only; install() makes sure.
      const out = createWriteStream(tmp, { flags: 'wx', mode: 0o444, flush: true, highWaterMark: WRITE_CHUNK });
      try {
        await new Promise<void>((resolve, reject) => {
          let nextCheck = CHECK_EVERY;
          let failure: unknown = null;
          const fail = (err: unknown) => {
            if (failure !== null) return;
            failure = err;
            body.off('data', onData);
            body.pause();
            out.destroy();
          };
          const onData = (chunk: Buffer) => {
            size += chunk.length;
            if (size > options.limit) return fail(ApiError.tooLarge(options.limit, 'The upload'));
            if (size >= nextCheck) {
              nextCheck += CHECK_EVERY;
              const free = store.freeBytes();
              if (free < options.headroom + chunk.length) return fail(ApiError.diskSpace(size + options.headroom, free));
            }
            hash.update(chunk);
            if (!out.write(chunk)) {
              body.pause();
              out.once('drain', () => failure === null && body.resume());
            }
          };
          const cutShort = () => fail(ApiError.badRequest('The upload was cut short.'));
          out.once('error', fail);
          out.once('close', () => (failure === null ? resolve() : reject(failure)));
          body.on('data', onData);
          body.once('end', () => failure === null && out.end());
          body.once('error', fail);
          body.once('aborted', cutShort);
          body.once('close', () => {
            if (!body.readableEnded) cutShort();
          });
        });
      } catch (err) {
        removeQuietly(tmp);
        throw err;
      }
      return { tmp, sha256: hash.digest('hex'), size };
    },

    /**
     * Puts a finished temp file at its content address (synchronous on
     * purpose: the caller inserts the row in the same turn of the event loop,
     * so no other request can see the blob without its row or the reverse).
     */
    install(tmp: string, sha256: string, ext: string): string {
      const path = store.blobPath(sha256, ext);
      chmodSync(tmp, 0o444); // an adopted file's every link becomes read-only too
      renameSync(tmp, path);
      syncDir(blobsDir);
      return path;
    },

    /**
     * Hardlinks a blob into the studio's library under `name`, or `name (2)`
     * ... when taken. Null (and a logged warning) when the library is on
     * another volume; other failures are logged the same way.
     */
    linkLibrary(blob: string, studioId: string, name: string): string | null {
      const dir = join(libraryDir, studioId);
      try {
        ensureDir(dir);
        for (let n = 1; n < 10_000; n++) {
          const path = join(dir, clashName(name, n));
          try {
            linkSync(blob, path);
            return path;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
          }
        }
        throw new Error('no free name');
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        const why = code === 'EXDEV' ? 'the library is on another volume than the blob store' : (err as Error).message;
        console.warn(`assets: no library file for ${name} in ${dir}: ${why}; library_path stays null`);
        return null;
      }
    },

    /**
     * A file step failed after its row write (or before its row write it was
     * meant to follow) and may have left a file that only start-up recovery
     * removes: this run must not record a clean stop (service/clean-stop.ts).
     */
    leftover(): void {
      leftovers++;
    },
    leftovers: () => leftovers,

    remove(path: string | null): boolean {
      return path === null ? false : removeQuietly(path);
    },

    /** The folders whose entries start-up recovery checks: blobs, thumbnails, each studio's library. */
    folders(): string[] {
      let studios: string[] = [];
      try {
        studios = readdirSync(libraryDir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      return [blobsDir, thumbsDir, libraryDir, ...studios.map((id) => join(libraryDir, id))];
    },

    /** Temp files of a previous run (killed mid-upload or mid-adopt) go. */
    clearTemp(): void {
      for (const name of readdirSync(tmpDir)) removeQuietly(join(tmpDir, name));
    },
  };
  return store;
}

export type BlobStore = ReturnType<typeof createBlobStore>;

export function removeQuietly(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
