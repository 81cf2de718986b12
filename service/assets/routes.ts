import { close, createReadStream, fstat, open } from 'node:fs';
import { promisify } from 'node:util';
import type { Context } from 'koa';
import type { Principal } from '../core/auth';
import { ApiError } from '../core/errors';
import { actingPrincipal, findRoute, launcherMirror, route, type Reply, type Route } from '../core/route';
import { adoptFile } from './adopt';
import type { AssetsDomain } from './domain';
import { sanitizeFilename } from './filename';
import { probe } from './ingest';
import { parseContentType } from './mime';
import { ifRangeHolds, noneMatch, parseRange } from './range';
import { STORED_FILE_HEADERS, storedFileHeaders } from './serving';
import {
  adoptBody, asset, diskUsage, idParams, reclaimBody, reclaimPreview, reclaimResult, thumbQuery, THUMB_WIDTH, uploadQuery,
} from './schema';
import { assetJson, type AssetView } from './store';
import { mediaUrlRoutes, type MediaUrlOptions } from './media-urls';

/**
 *   POST /assets                upload (streamed body; 201 new, 200 bytes already stored)
 *   GET  /assets/{id}           the bytes; one Range -> 206; If-None-Match -> 304; HEAD
 *   GET  /assets/{id}/thumb     320 px WebP of an image, a video's poster frame or a sound's waveform, cached
 *   POST /assets:adopt          hardlink a file of the stage or data folder
 *   POST /assets:reclaim        preview, then confirm
 *   POST /launcher/assets:reclaim  the same over every studio's assets (launcher credential)
 *   GET  /launcher/assets/{id}, /launcher/assets/{id}/thumb   the two reads above as the asset's first reader
 *   GET  /launcher/assets/{id}/info   the Asset record as its first reader sees it (length, file name) for the gallery
 *   GET  /launcher/disk         what the stored assets take, in all and per studio (the Disk panel)
 *   POST /launcher/media-urls, GET /media/{token}   short-lived URLs for the pages' <img> and <video> (media-urls.ts)
 *
 * Every file answer carries serving.ts's headers (nosniff, CSP sandbox, and
 * `Content-Disposition: attachment` for any type that could run as a page).
 */
export function assetRoutes(domain: AssetsDomain, media?: MediaUrlOptions): Route[] {
  const { store, blobs, ingest, thumbs, reclaimer } = domain;
  const readable = (principal: Principal, id: string): AssetView => {
    const view = store.view(principal.studioId, id);
    if (!view) throw ApiError.notFound('The asset');
    return view;
  };
  const visible = ({ params, principal }: { params: { id: string }; principal: Principal }) => readable(principal, params.id);

  const routes: Route[] = [
    route({
      method: 'POST',
      path: '/assets',
      summary: 'Upload an asset',
      description:
        'The body is streamed to disk while hashed. Bytes already stored: nothing is stored, 200 with the existing asset; either way the caller gains read access.',
      capability: 'assets',
      query: uploadQuery,
      rawBody: { description: 'The raw bytes; Content-Type gives the media type (images: as decoded).' },
      success: { status: 201, description: 'Asset (new); 200 when the bytes were already stored', schema: asset },
      errors: [400, 413, 507],
      async handle({ query, principal, ctx }) {
        const declared = contentLength(ctx);
        if (declared !== null && declared > domain.uploadLimit) throw ApiError.tooLarge(domain.uploadLimit, 'The upload');
        blobs.checkSpace(declared ?? 0, domain.diskHeadroom);
        const request = {
          kind: query.kind,
          contentType: parseContentType(ctx.get('Content-Type') || undefined),
          filename: query.filename === undefined ? null : sanitizeFilename(query.filename),
          pinned: query.pinned ?? false,
          hints: query,
        };
        const got = await blobs.receive(ctx.req, { limit: domain.uploadLimit, headroom: domain.diskHeadroom });
        try {
          const { view, created } = ingest.commit(principal.studioId, got, request, await probe(got.tmp, request));
          return { status: created ? 201 : 200, body: assetJson(view) };
        } catch (err) {
          blobs.remove(got.tmp);
          throw err;
        }
      },
    }),
    route({
      method: 'GET',
      path: '/assets/{id}',
      summary: 'Read an asset\'s bytes',
      description:
        'ETag is the sha256. One byte range answers 206 (suffix and open-ended ranges too); several ranges answer 200 with the whole file.',
      capability: 'assets',
      params: idParams,
      visible,
      headers: [
        { name: 'Range', description: 'One byte range, e.g. `bytes=0-1023`, `bytes=1024-`, `bytes=-500`.' },
        { name: 'If-None-Match', description: '`"<sha256>"`: 304 when it matches.' },
        { name: 'If-Range', description: '`"<sha256>"`: the Range applies only while it matches.' },
      ],
      successType: 'application/octet-stream',
      success: { status: 200, description: 'The whole file (206 for a range; Content-Type is the stored media type)' },
      errors: [400, 404, 410, 416],
      async handle({ seen: view, ctx }) {
        const fd = await openBlob(domain, view);
        const size = (await fstatAsync(fd)).size;
        const headers: Record<string, string> = { 'Accept-Ranges': 'bytes', ...storedFileHeaders(view.mime, view.filename) };
        if (noneMatch(ctx.get('If-None-Match') || undefined, view.sha256)) {
          await closeAsync(fd);
          return { status: 304, etag: view.sha256, headers };
        }
        const range = ifRangeHolds(ctx.get('If-Range') || undefined, view.sha256)
          ? parseRange(ctx.get('Range') || undefined, size)
          : ({ kind: 'whole' } as const);
        if (range.kind === 'unsatisfiable') {
          await closeAsync(fd);
          ctx.set('Content-Range', `bytes */${size}`); // the error answer keeps it (RFC 9110 §15.5.17)
          throw ApiError.rangeNotSatisfiable(size);
        }
        const [start, end] = range.kind === 'partial' ? [range.start, range.end] : [0, size - 1];
        if (range.kind === 'partial') headers['Content-Range'] = `bytes ${start}-${end}/${size}`;
        return fileReply(ctx, fd, range.kind === 'partial' ? 206 : 200, view.mime, view.sha256, headers, start, end);
      },
    }),
    route({
      method: 'GET',
      path: '/assets/{id}/thumb',
      summary: 'A 320 px wide WebP thumbnail: the picture, a video\'s poster frame, or a sound\'s waveform',
      description:
        'Generated once per sha256 and cached. A video gets one frame a quarter in (at most 5 s); a sound gets its whole waveform, ' +
        'whose x axis spans exactly 0..duration with no margin (crop it to show a range). Video and sound need ffmpeg: without it, ' +
        'or for a file it cannot read, 501 `unsupported`; `other` assets: 501.',
      capability: 'assets',
      params: idParams,
      query: thumbQuery,
      visible,
      successType: 'image/webp',
      success: { status: 200, description: 'image/webp, 320 px wide, aspect kept' },
      errors: [400, 404, 410, 501],
      async handle({ seen: view, ctx }) {
        if (view.reclaimed_at !== null) throw ApiError.assetMissing();
        if (view.kind === 'other') throw ApiError.unsupported('Thumbnails exist for images, video and sound; this asset is other.');
        const source = blobs.blobPath(view.sha256, view.ext);
        await closeAsync(await openBlob(domain, view));
        const path = await thumbs.ensure(view.sha256, source, view.kind);
        const etag = `${view.sha256}-${THUMB_WIDTH}`;
        let fd: number;
        try {
          fd = await openAsync(path, 'r');
        } catch {
          throw ApiError.assetMissing(); // reclaimed while it was being made
        }
        if (noneMatch(ctx.get('If-None-Match') || undefined, etag)) {
          await closeAsync(fd);
          return { status: 304, etag, headers: { ...STORED_FILE_HEADERS } };
        }
        const size = (await fstatAsync(fd)).size;
        return fileReply(ctx, fd, 200, 'image/webp', etag, { ...STORED_FILE_HEADERS }, 0, size - 1);
      },
    }),
    route({
      method: 'POST',
      path: '/assets:adopt',
      summary: 'Adopt a file of the stage or data folder by hardlink',
      description:
        'No copy and no HTTP body. The path must be absolute, inside the caller\'s stage or data folder, with no symlink below it. A stage entry is unlinked afterwards; a data file stays (read-only).',
      capability: 'assets',
      body: adoptBody,
      success: { status: 201, description: 'Asset (new); 200 when the bytes were already stored', schema: asset },
      errors: [400, 404, 409, 422],
      async handle({ body, principal }) {
        const done = await adoptFile(domain, principal.studioId, domain.roots(principal.studioId), body);
        return {
          status: done.created ? 201 : 200,
          body: assetJson(done.view),
          headers: { 'Server-Timing': `hash;dur=${done.hashMs.toFixed(1)}, rest;dur=${done.restMs.toFixed(1)}` },
        };
      },
    }),
    route({
      method: 'POST',
      path: '/assets:reclaim',
      summary: 'Reclaim the disk space of assets nothing uses any more',
      description:
        'Without `confirm`: the preview, nothing changes. With `confirm` = a preview whose set is unchanged: blobs, library files and thumbnails go, dependent soft-deleted items are hard-deleted; the rows stay and then answer 410.',
      capability: 'assets',
      body: reclaimBody,
      success: { status: 200, description: 'The preview, or (with confirm) what was reclaimed', schema: reclaimPreview.or(reclaimResult) },
      errors: [400, 409],
      async handle({ body, principal }) {
        // The preview reads every candidate: on a read worker. The reclaim is a write: here.
        if (body.confirm === undefined) return { status: 200, body: await reclaimer.preview(principal.studioId, body.asset_ids) };
        return { status: 200, body: reclaimer.reclaim(principal.studioId, body.confirm, body.asset_ids) };
      },
    }),
    route({
      method: 'POST',
      path: '/launcher/assets:reclaim',
      summary: "Reclaim the disk space of every studio's unused assets (the launcher)",
      description:
        'As `POST /assets:reclaim`, over every asset, including those no studio can read any more (an uninstall with purge ' +
        'removes the studio\'s grants). Preview without `confirm`; with it, the reclaim of exactly the previewed set.',
      capability: 'launcher',
      body: reclaimBody,
      success: { status: 200, description: 'The preview, or (with confirm) what was reclaimed', schema: reclaimPreview.or(reclaimResult) },
      errors: [400, 409],
      async handle({ body }) {
        if (body.confirm === undefined) return { status: 200, body: await reclaimer.preview(null, body.asset_ids) };
        return { status: 200, body: reclaimer.reclaim(null, body.confirm, body.asset_ids) };
      },
    }),
    route({
      method: 'GET',
      path: '/launcher/disk',
      summary: 'What the stored assets take, in all and per studio (the launcher)',
      description:
        'Assets not reclaimed: their count and bytes, those pinned, those no studio can read any more, and per studio the ' +
        'assets it can read (an asset two studios read counts in both). Sizes from the database, read on a read worker; ' +
        'what can be reclaimed is `POST /launcher/assets:reclaim` without `confirm`.',
      capability: 'launcher',
      success: { status: 200, description: 'The usage', schema: diskUsage },
      errors: [],
      async handle() {
        return { status: 200, body: { assets: await domain.usage() } };
      },
    }),
  ];

  // The launcher reads an asset as the first studio granted it (its name, its 404 and 410): the same handlers.
  const asFirstReader = ({ id }: { id: string }) => {
    const studioId = store.firstReader(id);
    if (studioId === null) throw ApiError.notFound('The asset');
    return actingPrincipal(studioId, ['assets']);
  };
  const launcherSide = (path: string, summary: string) =>
    launcherMirror(findRoute(routes, 'GET', path), {
      actingAs: asFirstReader,
      summary,
      description: `As \`GET ${path}\`, for any asset a studio can read, read as the first studio granted it (its file name). Read only.`,
    });
  return [
    ...routes,
    route({
      method: 'GET',
      path: '/launcher/assets/{id}/info',
      summary: "Any asset's record: kind, size, file name, length (the launcher)",
      description:
        'The Asset as the first studio granted it sees it (its file name and library path), for the launcher\'s gallery: the length of a video or sound ' +
        '(`duration_s`: the studio\'s hint, else what ffprobe measured once its thumbnail was made) and the name a download keeps. ' +
        'A reclaimed asset still has its record. An asset no studio can read: 404.',
      capability: 'launcher',
      params: idParams,
      visible: ({ params }) => readable(asFirstReader(params), params.id),
      success: { status: 200, description: 'Asset', schema: asset },
      errors: [404],
      handle: ({ seen }) => ({ status: 200, body: assetJson(seen) }),
    }),
    launcherSide('/assets/{id}', "Read any asset's bytes (the launcher)"),
    launcherSide('/assets/{id}/thumb', "Any asset's thumbnail: picture, poster frame or waveform (the launcher)"),
    ...(media ? mediaUrlRoutes(routes, store, media) : []),
  ];
}

/*
 * Plain numeric fds, not FileHandles: the read stream owns its fd and closes it
 * exactly once (Koa destroys it when the answer ends); a FileHandle closed as
 * well would close the fd number twice, by then perhaps another file's. And a
 * stream over a FileHandle reads through promises, at 2-3x the CPU per byte.
 */
const openAsync = promisify(open);
const fstatAsync = promisify(fstat);
const closeAsync = promisify(close);

async function openBlob(domain: AssetsDomain, view: AssetView): Promise<number> {
  if (view.reclaimed_at !== null) throw ApiError.assetMissing();
  try {
    return await openAsync(domain.blobs.blobPath(view.sha256, view.ext), 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw ApiError.assetMissing();
    throw err;
  }
}

/** Streams bytes start..end of an open file (nothing for HEAD); the stream closes the fd. */
async function fileReply(
  ctx: Context, fd: number, status: number, type: string, etag: string, headers: Record<string, string>, start: number, end: number,
): Promise<Reply> {
  const length = Math.max(0, end - start + 1);
  const all = { ...headers, 'Content-Length': String(length) };
  if (ctx.method === 'HEAD' || length === 0) {
    await closeAsync(fd);
    // An empty Buffer, not no body: Koa would otherwise answer its status text.
    return { status, etag, headers: { ...all, 'Content-Type': type }, body: ctx.method === 'HEAD' ? undefined : Buffer.alloc(0), type };
  }
  const stream = createReadStream('', { fd, start, end, highWaterMark: 1024 * 1024 });
  return { status, etag, stream, type, headers: all };
}

function contentLength(ctx: Context): number | null {
  const header = ctx.get('Content-Length');
  if (header === '') return null;
  if (!/^[0-9]{1,16}$/.test(header)) throw ApiError.badRequest('Content-Length is not a number.');
  return Number(header);
}
