import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ApiError } from '../core/errors';
import { actingPrincipal, findRoute, route, type Route } from '../core/route';
import type { AssetsStore } from './store';

/**
 * Short-lived media URLs (docs/api.md §Media URLs, docs/security.md "The
 * launcher credential"): how the launcher and editor pages show stored files
 * in `<img>` and `<video>`, which cannot send an `Authorization` header.
 *
 *   POST /launcher/media-urls   mint URLs for up to 200 (asset, variant) pairs (launcher credential)
 *   GET  /media/{token}         the asset's bytes (`file`, byte ranges) or its thumbnail (`thumb`)
 *
 * A token is `<asset id>.<f|t>.<expiry, unix s in base 36>.<credential id>.<HMAC-SHA256>`,
 * the MAC keyed by a key derived from the database's secret. It opens that one
 * asset in that one variant for reading, until its expiry (MEDIA_URL_TTL_MS,
 * at most 10 minutes), while the launcher credential it was minted for is
 * live (so `launcher-token --revoke-all` ends it too). Served by the very
 * handlers of `GET /assets/{id}` and `/thumb`, as the asset's first reader
 * (its headers: nosniff, CSP sandbox, attachment for SVG, HTML, XML).
 */

export type MediaVariant = 'file' | 'thumb';

/** The longest a media URL lives; BACKLOT_MEDIA_URL_TTL_MS may shorten it (tests), never lengthen it. */
export const MEDIA_URL_MAX_TTL_MS = 10 * 60 * 1000;
export const MEDIA_PREFIX = '/media';
const MAX_MINT = 200;

export interface MediaUrlOptions {
  /** The database's secret (the cursor secret); a key for media URLs alone is derived from it. */
  secret: Buffer;
  /** Whether the launcher credential with this public id is still live. */
  credentialLive(id: string): boolean;
  /** The public id of the launcher credential calling a launcher route (set by the app when it checked it). */
  callerCredentialId(ctx: import('koa').Context): string | null;
  ttlMs?: number;
  clock?: () => number;
}

export function mediaUrlTtl(env: NodeJS.ProcessEnv = process.env): number {
  const given = Number(env.BACKLOT_MEDIA_URL_TTL_MS);
  return Number.isSafeInteger(given) && given > 0 ? Math.min(given, MEDIA_URL_MAX_TTL_MS) : MEDIA_URL_MAX_TTL_MS;
}

/** Signs and checks media tokens. Pure, apart from the clock. */
export function createMediaSigner(secret: Buffer, ttlMs: number, clock: () => number = Date.now) {
  const key = createHmac('sha256', secret).update('backlot media urls').digest();
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest();
  const TOKEN = /^([0-9A-Za-z_-]{1,64})\.([ft])\.([0-9a-z]{1,10})\.([0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;
  return {
    sign(id: string, variant: MediaVariant, credentialId: string): { token: string; expires_at: string } {
      const expires = Math.floor((clock() + Math.min(ttlMs, MEDIA_URL_MAX_TTL_MS)) / 1000);
      const payload = `${id}.${variant === 'file' ? 'f' : 't'}.${expires.toString(36)}.${credentialId}`;
      return { token: `${payload}.${mac(payload).toString('base64url')}`, expires_at: new Date(expires * 1000).toISOString() };
    },
    /** What a token opens, or null: malformed, forged, altered or expired. */
    verify(token: string): { id: string; variant: MediaVariant; credentialId: string } | null {
      const m = TOKEN.exec(token);
      if (!m) return null;
      const payload = `${m[1]}.${m[2]}.${m[3]}.${m[4]}`;
      const given = Buffer.from(m[5]!, 'base64url');
      const want = mac(payload);
      if (given.length !== want.length || !timingSafeEqual(given, want)) return null;
      if (parseInt(m[3]!, 36) * 1000 <= clock()) return null;
      return { id: m[1]!, variant: m[2] === 'f' ? 'file' : 'thumb', credentialId: m[4]! };
    },
  };
}

const mintBody = z.strictObject({
  assets: z
    .array(z.strictObject({ id: z.string().min(1).max(64), variant: z.enum(['file', 'thumb']) }))
    .min(1)
    .max(MAX_MINT),
});
const minted = z.object({
  items: z.array(
    z.object({
      id: z.string(),
      variant: z.enum(['file', 'thumb']),
      url: z.string().nullable().meta({ description: 'Absolute path `/api/v1/media/...`; null when no studio can read the asset.' }),
      expires_at: z.string(),
    }),
  ),
});
const tokenParams = z.object({ token: z.string().max(200) });

/** The two media routes, built on the asset routes' own `GET /assets/{id}` and `/thumb`. */
export function mediaUrlRoutes(assetTable: readonly Route[], store: AssetsStore, o: MediaUrlOptions): Route[] {
  const signer = createMediaSigner(o.secret, o.ttlMs ?? mediaUrlTtl(), o.clock);
  const served = { file: findRoute(assetTable, 'GET', '/assets/{id}'), thumb: findRoute(assetTable, 'GET', '/assets/{id}/thumb') };
  const refused = () => ApiError.unauthenticated('The media URL is not valid or has expired: ask for a new one.');

  return [
    route({
      method: 'POST',
      path: '/launcher/media-urls',
      summary: 'Short-lived URLs that open stored files in the launcher and editor pages (the launcher)',
      description:
        'For `<img>` and `<video>`, which send no Authorization header. Each URL opens one asset (`file`: its bytes, with byte ranges; ' +
        '`thumb`: its thumbnail) for reading, for at most 10 minutes and while the calling credential is live; never on a studio origin.',
      capability: 'launcher',
      body: mintBody,
      success: { status: 200, description: 'One entry per asked pair, in order', schema: minted },
      errors: [400],
      handle({ body, ctx }) {
        const credentialId = o.callerCredentialId(ctx);
        if (credentialId === null) throw ApiError.unauthenticated();
        const items = body.assets.map(({ id, variant }) => {
          if (!/^[0-9A-Za-z_-]{1,64}$/.test(id) || store.firstReader(id) === null) return { id, variant, url: null, expires_at: new Date(0).toISOString() };
          const { token, expires_at } = signer.sign(id, variant, credentialId);
          return { id, variant, url: `/api/v1${MEDIA_PREFIX}/${token}`, expires_at };
        });
        return { status: 200, body: { items } };
      },
    }),
    route({
      method: 'GET',
      path: `${MEDIA_PREFIX}/{token}`,
      summary: 'A stored file through a short-lived media URL',
      description:
        'As `GET /assets/{id}` (byte ranges, ETag, HEAD) or `/assets/{id}/thumb`, for the one asset and variant the URL was minted for. ' +
        'A URL that is malformed, altered, expired, or whose launcher credential was revoked: 401 `unauthenticated`.',
      capability: 'media_url',
      params: tokenParams,
      headers: served.file.headers,
      successType: 'application/octet-stream',
      success: { status: 200, description: 'The bytes (206 for a range), or the thumbnail' },
      errors: [400, 401, 404, 410, 416, 501],
      visible({ params }) {
        const opened = signer.verify(params.token);
        if (!opened || !o.credentialLive(opened.credentialId)) throw refused();
        const studioId = store.firstReader(opened.id);
        if (studioId === null) throw ApiError.notFound('The asset');
        const acting = actingPrincipal(studioId, ['assets']);
        const target = served[opened.variant];
        return { target, params: { id: opened.id }, acting, seen: target.visible?.({ params: { id: opened.id }, principal: acting }) };
      },
      handle(input) {
        const { target, params, acting, seen } = input.seen;
        return target.handle({ ...input, params, query: {}, principal: acting, seen });
      },
    }),
  ];
}
