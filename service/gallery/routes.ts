import type { Principal } from '../core/auth';
import { ApiError } from '../core/errors';
import { integerPosition, pageReply, pageStart, type CursorCodec, type PageQuery, type UnsignedPage } from '../core/pagination';
import { actingPrincipal, findRoute, launcherMirror, route, type LauncherMirror, type Route } from '../core/route';
import type { AssetsStore } from '../assets';
import type { ItemFilter } from './query';
import { idParams, itemCreate, itemPage, item, itemUpdate, lineageQuery, listQuery, type ListQuery } from './schema';
import { itemJson } from './page';
import type { GalleryReads } from './reads';
import type { GalleryStore, Viewer } from './store';

/**
 *   GET    /gallery/items                 list: scope, studio, kind, tag*, session_id, starred, asset_id, since, until, q
 *   POST   /gallery/items                 record one generation (item, inputs, tags, search entry at once)
 *   GET    /gallery/items/{id}            one item (own, or any with gallery.read_all)
 *   PATCH  /gallery/items/{id}            closed merge patch: title, tags, starred (own items only)
 *   DELETE /gallery/items/{id}            soft delete (own items only)
 *   GET    /gallery/items/{id}/lineage    upstream: the items that made its inputs, recursively
 *   GET    /assets/{id}/lineage           downstream: the items made from the asset, recursively
 *
 * The launcher's side (docs/api.md "Launcher-side reads and edits"), the same handlers as a reader of every studio's items:
 *   GET    /launcher/gallery/items        every studio's items (`studio` narrows; no `scope`)
 *   GET    /launcher/gallery/items/{id}, /launcher/gallery/items/{id}/lineage
 *   GET    /launcher/assets/{id}/lineage  as the asset's first reader, seeing every studio's items
 * and the user's changes to any studio's item, acting as the studio that owns it:
 *   PATCH  /launcher/gallery/items/{id}   title, tags, starred (the studio route's ItemUpdate)
 *   DELETE /launcher/gallery/items/{id}   soft delete
 */
export function galleryRoutes(deps: { gallery: GalleryStore; reads: GalleryReads; assets: AssetsStore; cursors: CursorCodec }): Route[] {
  const { gallery, reads, assets, cursors } = deps;
  const viewerOf = (principal: Principal): Viewer => ({
    studioId: principal.studioId,
    readAll: principal.capabilities.has('gallery.read_all'),
  });
  const own = ({ params, principal }: { params: { id: string }; principal: Principal }) => {
    gallery.requireOwn(principal.studioId, params.id);
  };
  // Pages come from a read worker as JSON text with the last row's position; the cursor is signed here.
  const start = (binding: string, query: PageQuery) => pageStart(cursors, binding, query, integerPosition);
  /** A lineage page; its cursors are bound to the direction, the start and the viewer. */
  const lineage = (
    direction: 'up' | 'down',
    startId: string,
    query: PageQuery,
    principal: Principal,
    walk: (viewer: Viewer, after: number | null, limit: number) => Promise<UnsignedPage<string>>,
  ) => {
    const viewer = viewerOf(principal);
    const binding = `gallery-lineage-${direction}\n${startId}\n${viewer.studioId}\n${viewer.readAll}`;
    const { limit, after } = start(binding, query);
    return walk(viewer, after, limit).then((unsigned) => pageReply(unsigned, cursors, binding));
  };

  const routes: Route[] = [
    route({
      method: 'GET',
      path: '/gallery/items',
      summary: 'List and search gallery items',
      description:
        'Newest first (created_at desc, id desc), with or without `q`. Filters combine with AND. Deleted items never appear.',
      capability: 'gallery',
      extraCapabilities: (_params, query) => (query.scope === 'all' ? ['gallery.read_all'] : []),
      query: listQuery,
      success: { status: 200, description: 'ItemPage', schema: itemPage },
      errors: [400, 403],
      async handle({ query, principal }) {
        const filter = toFilter(query, principal.studioId);
        const binding = `gallery-items\n${principal.studioId}\n${JSON.stringify(filter)}\n${query.q ?? ''}`;
        const { limit, after } = start(binding, query);
        // The search's completions, the page and its tag counts: on a read worker (docs/api.md §Where reads run).
        return pageReply(await reads.search(principal.studioId, filter, query.q ?? '', after, limit), cursors, binding);
      },
    }),
    route({
      method: 'POST',
      path: '/gallery/items',
      documentBody: true,
      summary: 'Record a generation',
      description:
        'The item, its inputs, tags and search entry are written atomically. The asset and every input asset must be readable by the caller (else 404).',
      capability: 'gallery',
      body: itemCreate,
      success: { status: 201, description: 'Item', schema: item },
      errors: [400, 404, 413, 422],
      handle({ body, principal }) {
        return { status: 201, rawJson: itemJson(gallery.create(principal.studioId, body)) };
      },
    }),
    route({
      method: 'GET',
      path: '/gallery/items/{id}',
      summary: 'Read an item',
      capability: 'gallery',
      params: idParams,
      success: { status: 200, description: 'Item', schema: item },
      errors: [404],
      handle({ params, principal }) {
        return { status: 200, rawJson: itemJson(gallery.get(viewerOf(principal), params.id)) };
      },
    }),
    route({
      method: 'PATCH',
      path: '/gallery/items/{id}',
      summary: 'Change an item\'s title, tags or star',
      description: 'Closed merge patch: any other member is 400. Only the caller\'s own items (404 otherwise, even with `gallery.read_all`).',
      capability: 'gallery',
      params: idParams,
      visible: own,
      body: itemUpdate,
      bodyType: 'application/merge-patch+json',
      success: { status: 200, description: 'Item', schema: item },
      errors: [400, 404, 413],
      handle({ params, body, principal }) {
        return { status: 200, rawJson: itemJson(gallery.update(principal.studioId, params.id, body)) };
      },
    }),
    route({
      method: 'DELETE',
      path: '/gallery/items/{id}',
      summary: 'Delete an item (soft)',
      description: 'It leaves every list, search and lineage page; its assets stop counting as referenced by it.',
      capability: 'gallery',
      params: idParams,
      visible: own,
      success: { status: 204, description: 'Deleted' },
      errors: [404],
      handle({ params, principal }) {
        gallery.delete(principal.studioId, params.id);
        return { status: 204 };
      },
    }),
    route({
      method: 'GET',
      path: '/gallery/items/{id}/lineage',
      summary: 'Upstream lineage: the items that made this item\'s inputs, recursively',
      description:
        'Newest first. The walk passes through other studios\' items (shown only with `gallery.read_all`) and deleted items (never shown); each item once; the item itself never.',
      capability: 'gallery',
      params: idParams,
      query: lineageQuery,
      visible: ({ params, principal }) => gallery.get(viewerOf(principal), params.id),
      success: { status: 200, description: 'ItemPage', schema: itemPage },
      errors: [400, 404],
      // The start row visible() read is the walk's start: not read again.
      handle: ({ params, query, principal, seen }) =>
        lineage('up', params.id, query, principal, (viewer, after, limit) => reads.lineageUp(viewer, seen.seq, after, limit)),
    }),
    route({
      method: 'GET',
      path: '/assets/{id}/lineage',
      summary: 'Downstream lineage: every item made from the asset, recursively',
      description:
        'Needs `gallery` (not `assets`) and read access to the asset. Newest first; other studios\' items only with `gallery.read_all`; deleted items never; items whose own asset is this one never.',
      capability: 'gallery',
      params: idParams,
      query: lineageQuery,
      visible: ({ params, principal }) => {
        if (!assets.view(principal.studioId, params.id)) throw ApiError.notFound('The asset');
      },
      success: { status: 200, description: 'ItemPage', schema: itemPage },
      errors: [400, 404],
      handle: ({ params, query, principal }) =>
        lineage('down', params.id, query, principal, (viewer, after, limit) => reads.lineageDown(viewer, params.id, after, limit)),
    }),
  ];

  const mirror = (path: string, m: LauncherMirror<any, any>, method: 'GET' | 'PATCH' | 'DELETE' = 'GET') =>
    launcherMirror(findRoute(routes, method, path), m);
  const everyStudio = () => EVERY_STUDIO_READER;
  // The user may change any studio's item: the change is made as the studio that owns it (404 when none does).
  const itemOwner = ({ id }: { id: string }) => actingPrincipal(gallery.ownerOf(id), ['gallery']);
  return [
    ...routes,
    mirror('/gallery/items', {
      actingAs: everyStudio,
      query: launcherListQuery,
      summary: "List and search every studio's gallery items (the launcher)",
      description:
        'As `GET /gallery/items` with `scope=all` (every studio\'s items, `studio` narrows to one; there is no `scope`): the same filters, `q`, order and pages.',
    }),
    mirror('/gallery/items/{id}', { actingAs: everyStudio, summary: "Read any studio's item (the launcher)" }),
    mirror('/gallery/items/{id}/lineage', {
      actingAs: everyStudio,
      summary: "Upstream lineage of any studio's item (the launcher)",
      description: 'As `GET /gallery/items/{id}/lineage` for a reader of every studio: every live item of the walk is shown.',
    }),
    mirror(
      '/gallery/items/{id}',
      {
        actingAs: itemOwner,
        summary: "Change any studio's item: title, tags or star (the launcher)",
        description:
          "As `PATCH /gallery/items/{id}`, acting as the studio that owns the item: the same closed merge patch (any other member is 400), the same limits. An unknown or deleted item is 404. Announced as an `item` event (`updated`) on `/launcher/events`.",
      },
      'PATCH',
    ),
    mirror(
      '/gallery/items/{id}',
      {
        actingAs: itemOwner,
        summary: "Delete any studio's item (soft; the launcher)",
        description:
          "As `DELETE /gallery/items/{id}`, acting as the studio that owns the item: it leaves every list, search and lineage page. An unknown or already deleted item is 404. Announced as an `item` event (`deleted`) on `/launcher/events`.",
      },
      'DELETE',
    ),
    mirror('/assets/{id}/lineage', {
      // The asset as its first reader sees it; the items as a reader of every studio.
      actingAs: ({ id }: { id: string }) => {
        const studioId = assets.firstReader(id);
        if (studioId === null) throw ApiError.notFound('The asset');
        return actingPrincipal(studioId, ['gallery', 'gallery.read_all']);
      },
      summary: 'Downstream lineage of any asset (the launcher)',
      description: 'As `GET /assets/{id}/lineage` for a reader of every studio: every live item made from the asset, recursively.',
    }),
  ];
}

/** Who the launcher's gallery reads act as: no studio (''), reading every studio's items. */
const EVERY_STUDIO_READER = actingPrincipal('', ['gallery', 'gallery.read_all']);

/** The launcher's list query: the studio route's without `scope` (always every studio's). */
const launcherListQuery = listQuery.omit({ scope: true }).transform((q): ListQuery => ({ ...q, scope: 'all' }));

/** The list query as a filter (without its search); 400 for `studio` without `scope=all`. */
function toFilter(query: ListQuery, studioId: string): ItemFilter {
  if (query.studio !== undefined && query.scope !== 'all') {
    throw ApiError.badRequest('`studio` narrows `scope=all`; add scope=all (needs gallery.read_all).');
  }
  // A set: sorted, so that a cursor is bound to the tags, not to the order they were given in.
  const tags = query.tag === undefined ? [] : [...new Set(Array.isArray(query.tag) ? query.tag : [query.tag])].sort();
  const filter: ItemFilter = {
    studioId: query.scope === 'all' ? (query.studio ?? null) : studioId,
    kind: query.kind,
    tags,
    sessionId: query.session_id,
    starred: query.starred,
    assetId: query.asset_id,
    since: query.since,
    until: query.until,
  };
  return filter;
}

