import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { client, HttpResponse } from './http';
import { makePng, upload } from './assets';

/** Shared pieces of the gallery black-box tests (docs/api.md "Gallery"). */

export type Client = ReturnType<typeof client>;

export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
export const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UNKNOWN_ID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
export const ITEM_KEYS = [
  'asset_id',
  'created_at',
  'id',
  'inputs',
  'kind',
  'params',
  'session_id',
  'starred',
  'studio_id',
  'tags',
  'timeline_id',
  'title',
  'updated_at',
];

let seed = 0;

/** A fresh asset (new bytes every call) readable by the token's studio. */
export async function newAsset(port: number, token: string, kind: 'image' | 'video' | 'audio' | 'other' = 'other'): Promise<any> {
  const res =
    kind === 'image'
      ? await upload(port, token, await makePng(8, 8, ++seed + Math.floor(Math.random() * 1e6)), 'kind=image', 'image/png')
      : await upload(port, token, randomBytes(64 + (++seed % 50)), `kind=${kind}`);
  assert.equal(res.status, 201, res.body.toString());
  return res.json;
}

/** Asserts an Item answer: exactly the members of an Item (docs/api.md "Gallery"), with their types. */
export function assertItem(res: HttpResponse, status: number): any {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const it = res.json;
  assert.deepEqual(Object.keys(it).sort(), ITEM_KEYS);
  assert.match(it.id, ULID);
  assert.equal(typeof it.studio_id, 'string');
  assert.equal(typeof it.asset_id, 'string');
  assert.ok(['image', 'video', 'audio', 'other'].includes(it.kind), it.kind);
  assert.ok(it.title === null || typeof it.title === 'string');
  assert.ok(Array.isArray(it.tags) && it.tags.every((t: unknown) => typeof t === 'string'));
  assert.equal(typeof it.starred, 'boolean');
  assert.ok(it.session_id === null || typeof it.session_id === 'string');
  assert.ok(it.params && typeof it.params === 'object' && !Array.isArray(it.params));
  assert.ok(Array.isArray(it.inputs));
  for (const n of it.inputs) assert.deepEqual(Object.keys(n).sort(), ['asset_id', 'role']);
  assert.ok(it.timeline_id === null || typeof it.timeline_id === 'string');
  assert.match(it.created_at, INSTANT);
  assert.match(it.updated_at, INSTANT);
  return it;
}

export async function createItem(c: Client, body: Record<string, unknown>): Promise<any> {
  return assertItem(await c.post('/gallery/items', body), 201);
}

/** Newest first: created_at desc, id desc. */
export function newestFirst<T extends { created_at: string; id: string }>(items: T[]): T[] {
  return [...items].sort((a, b) => (a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a.id < b.id ? 1 : -1));
}

/**
 * Walks every page of a list (path with its query, no cursor), asserting each
 * answer is a page; `between` runs after each page (to insert rows meanwhile).
 */
export async function walk(c: Client, path: string, limit: number, between?: () => Promise<void>): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  const sep = path.includes('?') ? '&' : '?';
  for (let pages = 0; ; pages++) {
    assert.ok(pages < 1000, 'too many pages');
    const res = await c.get(`${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    assert.deepEqual(Object.keys(res.json).sort(), ['items', 'next_cursor']);
    assert.ok(res.json.items.length <= limit);
    out.push(...res.json.items);
    cursor = res.json.next_cursor;
    if (cursor === null) return out;
    assert.equal(typeof cursor, 'string');
    assert.equal(res.json.items.length, limit, 'only a full page has a next page');
    await between?.();
  }
}

export const ids = (items: { id: string }[]) => items.map((i) => i.id);
