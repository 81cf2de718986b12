import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { makePng, upload } from './assets';
import type { client, HttpResponse } from './http';
import { tempDir } from './service';

/** Shared pieces of the timeline black-box tests (docs/api.md "Timeline"). */

export type Client = ReturnType<typeof client>;

export const UNKNOWN_ID = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
export const MERGE = 'application/merge-patch+json';
export const DEFAULT_TARGET = { sample_rate: 48000, fps: 30, width: 1920, height: 1080 };
export const TIMELINE_KEYS = ['created_at', 'description', 'duration', 'id', 'name', 'revision', 'studio_id', 'target', 'tracks', 'updated_at'];
export const REVISION_KEYS = ['created_at', 'description', 'name', 'revision', 'target', 'tracks'];
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let seed = 0;

/**
 * A fresh asset (new bytes every call). Video and audio are random bytes with
 * the hints given (`duration_s`), so their length needs no ffprobe.
 */
export async function newAsset(
  port: number,
  token: string,
  kind: 'image' | 'video' | 'audio' | 'other',
  hints: { duration_s?: number; fps?: number } = {},
): Promise<any> {
  const query = new URLSearchParams({ kind });
  for (const [k, v] of Object.entries(hints)) query.set(k, String(v));
  const res =
    kind === 'image'
      ? await upload(port, token, await makePng(8, 8, ++seed + Math.floor(Math.random() * 1e6)), query.toString(), 'image/png')
      : await upload(port, token, randomBytes(64 + (++seed % 50)), query.toString());
  assert.equal(res.status, 201, res.body.toString());
  return res.json;
}

/** A real media file made by ffmpeg (lavfi sources), uploaded without hints: its length comes from a probe. */
export async function realAsset(port: number, token: string, kind: 'video' | 'audio', seconds: number): Promise<any> {
  const dir = tempDir('backlot-tl-media-');
  try {
    const file = join(dir, kind === 'video' ? 'v.mp4' : 'a.wav');
    const input =
      kind === 'video'
        ? ['-f', 'lavfi', '-i', `testsrc=size=64x48:rate=25:duration=${seconds}`, '-c:v', 'libx264', '-pix_fmt', 'yuv420p']
        : ['-f', 'lavfi', '-i', `sine=frequency=440:sample_rate=48000:duration=${seconds}`, '-c:a', 'pcm_s16le'];
    const r = spawnSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...input, file], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const res = await upload(port, token, readFileSync(file), `kind=${kind}`);
    assert.equal(res.status, 201, res.body.toString());
    assert.equal(res.json.duration_s, null);
    return res.json;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Asserts a Timeline answer: exactly the members of a Timeline (docs/api.md "The document"), ETag = "<revision>". */
export function assertTimeline(res: HttpResponse, status: number): any {
  assert.equal(res.status, status, res.text);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const t = res.json;
  assert.deepEqual(Object.keys(t).sort(), TIMELINE_KEYS);
  assert.equal(res.headers.etag, `"${t.revision}"`);
  assert.ok(Number.isInteger(t.revision) && t.revision >= 1);
  assert.deepEqual(Object.keys(t.target).sort(), ['fps', 'height', 'sample_rate', 'width']);
  assert.equal(typeof t.duration, 'number');
  assert.match(t.created_at, INSTANT);
  assert.match(t.updated_at, INSTANT);
  for (const [track, clips] of Object.entries(t.tracks)) {
    assert.match(track, /^[VA][1-9]$/);
    for (const c of clips as any[]) {
      const keys = Object.keys(c).sort();
      assert.ok(
        JSON.stringify(keys) === JSON.stringify(['asset_id', 'duration', 'in', 'start']) ||
          JSON.stringify(keys) === JSON.stringify(['asset_id', 'duration', 'in', 'start', 'transition']),
        `clip members ${keys.join(',')}`,
      );
    }
  }
  return t;
}

export async function createTimeline(c: Client, body: Record<string, unknown>): Promise<any> {
  return assertTimeline(await c.post('/timeline', body), 201);
}

/** A clip as the API shows it (transition only when given). */
export function clip(asset_id: string, start: number, duration: number, extra: { in?: number; transition?: number } = {}) {
  const c: Record<string, unknown> = { asset_id, start, in: extra.in ?? 0, duration };
  if (extra.transition !== undefined) c.transition = { kind: 'crossfade', duration: extra.transition };
  return c;
}

/** Walks every page of a list path (no cursor in it). */
export async function walk(c: Client, path: string, limit: number): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  const sep = path.includes('?') ? '&' : '?';
  for (let pages = 0; pages < 1000; pages++) {
    const res = await c.get(`${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.json).sort(), ['items', 'next_cursor']);
    assert.ok(res.json.items.length <= limit);
    out.push(...res.json.items);
    cursor = res.json.next_cursor;
    if (cursor === null) return out;
  }
  throw new Error('too many pages');
}

/** The `details.clips` of a 422 `invalid_timeline`, checked for shape. */
export function problems(res: HttpResponse): { track: string | null; index: number; reason: string }[] {
  assert.equal(res.status, 422, res.text);
  assert.equal(res.json.code, 'invalid_timeline', res.text);
  assert.equal(typeof res.json.message, 'string');
  const list = res.json.details.clips;
  assert.ok(Array.isArray(list), res.text);
  for (const p of list) {
    assert.deepEqual(Object.keys(p).sort(), ['index', 'reason', 'track']);
    assert.equal(typeof p.reason, 'string');
    assert.ok(p.reason.length > 0);
  }
  return list;
}

/** Where each problem is: `track:index`, in the order listed. */
export function where(res: HttpResponse): string[] {
  return problems(res).map((p) => `${p.track}:${p.index}`);
}
