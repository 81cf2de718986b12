import { existsSync } from 'node:fs';
import sharp from 'sharp';
import { ApiError } from '../core/errors';
import { newId } from '../core/ids';
import { nowIso } from '../core/time';
import type { BlobStore, Received } from './blobs';
import { probeInput } from './decoder-input';
import { extensionOf } from './filename';
import { DEFAULT_MIME, extensionForMime, mimeForExtension, mimeForImageFormat } from './mime';
import { clearReclaimedLibrary } from './recover';
import type { AssetKind } from './schema';
import type { AssetRow, AssetsStore, AssetView } from './store';

/**
 * What upload and adopt share once the bytes sit in a temp file of the blob
 * store: probing, then the commit. The commit is synchronous on purpose: the
 * lookup by sha256, the rename into place and the row insert happen in one
 * turn of the event loop, so two requests with the same bytes cannot both
 * create, and a reclaim cannot run between the rename and the insert.
 */

export interface Hints {
  width?: number | undefined;
  height?: number | undefined;
  duration_s?: number | undefined;
  fps?: number | undefined;
}

export interface IngestRequest {
  kind: AssetKind;
  /** From Content-Type (upload) or null. */
  contentType: string | null;
  /** Already sanitised; null means the default (asset id + extension of the mime type). */
  filename: string | null;
  pinned: boolean;
  hints: Hints;
}

export interface Probed {
  mime: string;
  width: number | null;
  height: number | null;
  duration_s: number | null;
  fps: number | null;
}

export interface Ingested {
  view: AssetView;
  /** A new asset (201), or bytes already stored (200). */
  created: boolean;
}

/** Images are probed for their size (400 when sharp cannot read them); video and audio keep the hints. */
export async function probe(tmp: string, req: IngestRequest): Promise<Probed> {
  const byName = req.filename ? mimeForExtension(extensionOf(req.filename)) : null;
  if (req.kind !== 'image') {
    return {
      mime: req.contentType ?? byName ?? DEFAULT_MIME,
      width: req.hints.width ?? null,
      height: req.hints.height ?? null,
      duration_s: req.hints.duration_s ?? null,
      fps: req.hints.fps ?? null,
    };
  }
  // Bytes, not the path, and SVG without its external references (decoder-input.ts).
  const input = await probeInput(tmp);
  if (input === null) throw ApiError.badRequest('The bytes are not an image this service can decode safely (kind=image).');
  let meta: sharp.Metadata;
  try {
    meta = await sharp(input).metadata();
  } catch {
    throw ApiError.badRequest('The bytes are not an image this service can decode (kind=image).');
  }
  const size = meta.autoOrient ?? meta;
  if (!size.width || !size.height) throw ApiError.badRequest('The image has no width or height.');
  return {
    mime: mimeForImageFormat(meta.format) ?? req.contentType ?? byName ?? DEFAULT_MIME,
    width: size.width,
    height: size.height,
    duration_s: null,
    fps: null,
  };
}

export function createIngest(store: AssetsStore, blobs: BlobStore) {
  /** Hardlinks the library file for a studio that just gained access. */
  function linkLibrary(id: string, studioId: string, blob: string, filename: string): void {
    store.setLibraryPath(id, studioId, blobs.linkLibrary(blob, studioId, filename));
  }

  return {
    /** Whether `commit` would reuse stored bytes (a live asset whose blob is on disk) rather than install these. */
    stored(sha256: string): boolean {
      const row = store.bySha(sha256);
      return row !== undefined && row !== null && row.reclaimed_at === null && existsSync(blobs.blobPath(row.sha256, row.ext));
    },

    commit(studioId: string, got: Received, req: IngestRequest, probed: Probed): Ingested {
      const at = nowIso();
      const existing = store.bySha(got.sha256);
      if (existing && existing.reclaimed_at === null) return reuse(existing);

      // New bytes, or reclaimed bytes uploaded again (the same asset, its id and name, lives again).
      const id = existing?.id ?? newId();
      const ext = existing?.ext ?? ((req.filename && extensionOf(req.filename)) || extensionForMime(probed.mime));
      const filename = req.filename ?? defaultName(id, existing?.mime ?? probed.mime);
      // Library files a crash left to a reclaimed row go first (recover.ts: the start-up
      // recovery may not have reached this row yet); the new link may then take its name.
      if (existing) clearReclaimedLibrary(store, blobs, [id]);
      const blob = blobs.install(got.tmp, got.sha256, ext);
      try {
        if (existing) {
          store.revive(id, req.pinned, studioId, filename, at);
        } else {
          const row = { id, sha256: got.sha256, kind: req.kind, size: got.size, ext, pinned: req.pinned ? 1 : 0, created_at: at, ...probed };
          store.create(row, studioId, filename);
        }
      } catch (err) {
        blobs.leftover(); // a blob without its (live) row: the next start removes it
        throw err;
      }
      linkLibrary(id, studioId, blob, filename);
      return { view: store.view(studioId, id)!, created: true };

      function reuse(row: AssetRow): Ingested {
        // Nothing is stored; the caller gains read access (bytes already stored: docs/api.md "Assets").
        const blob = blobs.blobPath(row.sha256, row.ext);
        if (!existsSync(blob)) {
          // The file was removed behind the service's back: these bytes restore it.
          blobs.install(got.tmp, row.sha256, row.ext);
        } else {
          blobs.remove(got.tmp);
        }
        if (req.pinned && row.pinned === 0) store.pin(row.id);
        const filename = req.filename ?? defaultName(row.id, row.mime);
        if (store.grant(row.id, studioId, filename, at)) linkLibrary(row.id, studioId, blob, filename);
        return { view: store.view(studioId, row.id)!, created: false };
      }
    },
  };
}

export type Ingest = ReturnType<typeof createIngest>;

function defaultName(id: string, mime: string): string {
  return id + extensionForMime(mime);
}
