import { createHash } from 'node:crypto';
import { fstatSync, linkSync, lstatSync, unlinkSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename } from 'node:path';
import { ApiError } from '../core/errors';
import { checkAdoptPath, openChecked, sameFile, type AdoptRoot } from './adopt-path';
import type { BlobStore } from './blobs';
import { sanitizeFilename } from './filename';
import { probe, type Ingest, type Ingested } from './ingest';
import type { AdoptBody } from './schema';

/**
 * POST /assets:adopt (docs/api.md "Adopt `POST /assets:adopt`"): a file of the studio's
 * stage or data folder becomes an asset by hardlink, never by copy.
 *
 *   check the path (adopt-path.ts) -> open O_NOFOLLOW, same dev/ino as lstat saw
 *   -> link it to a temp name in the blob store (EXDEV: 422 cross_device, nothing changed)
 *   -> the link must be the opened file (else 409 conflict) -> hash through the open file
 *   -> a file with other hard links: 422 outside_roots unless its bytes are already stored
 *   -> unchanged size and mtime (else 409 conflict) -> commit (0444, rename, row)
 *   -> a stage entry is unlinked; a data file stays.
 */

export interface Adopted extends Ingested {
  /** Milliseconds spent hashing, and on everything else (for Server-Timing). */
  hashMs: number;
  restMs: number;
}

const READ_CHUNK = 4 * 1024 * 1024;

export async function adoptFile(
  deps: { blobs: BlobStore; ingest: Ingest },
  studioId: string,
  roots: AdoptRoot[],
  body: AdoptBody,
): Promise<Adopted> {
  const started = performance.now();
  const checked = checkAdoptPath(body.path, roots);
  const { handle, stat } = await openChecked(checked);
  const tmp = deps.blobs.tempPath();
  let hashMs = 0;
  let result: Ingested;
  try {
    try {
      linkSync(checked.path, tmp);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EXDEV') {
        throw ApiError.crossDevice('The file is on another volume than the blob store; it was left in place. Move it to the same volume, or upload it.');
      }
      if (code === 'ENOENT') throw ApiError.notFound('The file');
      throw err;
    }
    try {
      // The link changed the inode's ctime: this is the baseline a later write would move.
      const linked = lstatSync(tmp);
      if (!sameFile(linked, stat)) throw replaced();
      const hashStart = performance.now();
      const sha256 = await hashHandle(handle);
      hashMs = performance.now() - hashStart;
      // A file with another name besides this one (a hard link, perhaps outside the roots: the user's
      // own file linked into the stage) would become the blob, all its names made read-only and tied
      // to the store. Only its bytes already being stored (nothing installed, the file left alone) lets it pass.
      if (stat.nlink > 1 && !deps.ingest.stored(sha256)) {
        throw ApiError.outsideRoots('The file has other hard links (names that may lie outside the studio\'s folders); adopt takes a file with one name only.');
      }
      const request = {
        kind: body.kind,
        contentType: null,
        filename: sanitizeFilename(body.filename ?? basename(checked.path)),
        pinned: body.pinned ?? false,
        hints: body,
      };
      const probed = await probe(tmp, request);
      // The studio's bytes become the blob: make them durable before the row names them.
      await handle.sync();
      // Unchanged since it was hashed, checked in the same turn as the commit that makes it 0444
      // (probe and sync above yield, and a write meanwhile would leave a blob unlike its address).
      const now = fstatSync(handle.fd);
      if (now.size !== linked.size || now.mtimeMs !== linked.mtimeMs || now.ctimeMs !== linked.ctimeMs) {
        throw ApiError.conflict('The file changed while it was being adopted; nothing was adopted.');
      }
      result = deps.ingest.commit(studioId, { tmp, sha256, size: stat.size }, request, probed);
    } catch (err) {
      deps.blobs.remove(tmp);
      throw err;
    }
  } finally {
    await handle.close();
  }
  if (checked.root === 'stage') unlinkIfSame(checked.path, stat);
  return { ...result, hashMs, restMs: performance.now() - started - hashMs };
}

/** SHA-256 of an open file, read from its start in 4 MiB chunks (adopt, and export's output). */
export async function hashHandle(handle: FileHandle): Promise<string> {
  const hash = createHash('sha256');
  const buffer = Buffer.allocUnsafe(READ_CHUNK);
  for (let position = 0; ; ) {
    const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK, position);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return hash.digest('hex');
}

/** The stage entry goes once adopted, unless something else was put at its name meanwhile. */
function unlinkIfSame(path: string, stat: { dev: number; ino: number }): void {
  try {
    if (sameFile(lstatSync(path), stat)) unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

function replaced(): ApiError {
  return ApiError.conflict('The file was replaced while it was being adopted; nothing was adopted.');
}
