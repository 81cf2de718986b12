import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { rawRequest, upload } from './helpers/assets';
import { startService, tempDir, type TestService } from './helpers/service';

/**
 * A thumbnail renders its own bytes and nothing else (docs/security.md,
 * Inputs: thumbnails). Studio beta uploads SVGs that name other files: studio alpha's
 * PNG and SVG in the blob store (by the name they have there, relative,
 * through `../`, absolute), a PNG elsewhere on the disk; through `<image>`,
 * `<use>`, `<feImage>`, CSS `url()` in an attribute and in `<style>`. Each
 * comes in two versions that differ only in whether the name it references
 * exists: their thumbnails must be byte for byte the same. Before, the one
 * naming alpha's PNG showed alpha's picture.
 */

let svc: TestService;
let alpha: string;
let beta: string;
let outside: string;
/** alpha's red PNG and its SVG with a red gradient `#g` and a red rect `#r`. */
let png: { sha256: string };
let svgAsset: { sha256: string };

const RED = { r: 255, g: 0, b: 0 };
const W = 64;

before(async () => {
  svc = await startService();
  alpha = svc.studio('alpha', ['assets']);
  beta = svc.studio('beta', ['assets']);
  const red = await sharp({ create: { width: W, height: W, channels: 3, background: RED } }).png().toBuffer();
  png = await uploadOk(alpha, red, 'kind=image&filename=secret.png', 'image/png');
  const alphaSvg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${W}"><defs><linearGradient id="g"><stop offset="0" stop-color="#f00"/><stop offset="1" stop-color="#f00"/></linearGradient></defs>` +
    `<rect id="r" width="${W}" height="${W}" fill="#f00"/></svg>`;
  svgAsset = await uploadOk(alpha, Buffer.from(alphaSvg), 'kind=image&filename=secret.svg', 'image/svg+xml');
  outside = tempDir('backlot-outside-image-');
  mkdirSync(outside, { recursive: true });
  writeFileSync(join(outside, 'red.png'), red);
});
after(async () => {
  await svc.stop();
  rmSync(outside, { recursive: true, force: true });
});

async function uploadOk(token: string, bytes: Buffer, query: string, type: string): Promise<{ id: string; sha256: string }> {
  const r = await upload(svc.port, token, bytes, query, type);
  assert.ok(r.status === 201 || r.status === 200, `${r.status} ${r.body.toString()}`);
  return r.json;
}

async function thumbOf(token: string, svg: string): Promise<Buffer> {
  const asset = await uploadOk(token, Buffer.from(svg), 'kind=image', 'image/svg+xml');
  const r = await rawRequest(svc.port, { path: `/api/v1/assets/${asset.id}/thumb`, token });
  assert.equal(r.status, 200, r.body.toString());
  assert.equal(r.headers['content-type'], 'image/webp');
  return r.body;
}

/** An SVG of a blue square with `body` on top. `nonce` makes the two versions' other bytes equal and their assets new. */
const page = (body: string, nonce: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="${W}" height="${W}"><!-- ${nonce} -->` +
  `<rect width="${W}" height="${W}" fill="#00f"/>${body}</svg>`;

/** The colour at the thumbnail's centre. */
async function centre(webp: Buffer): Promise<{ r: number; g: number; b: number }> {
  const { data, info } = await sharp(webp).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * 3;
  return { r: data[at]!, g: data[at + 1]!, b: data[at + 2]! };
}

describe("an SVG's thumbnail never shows a file it names", () => {
  /** Rows: what names the file, given the name; the name that exists; one of the same shape that does not. */
  const rows: [string, (name: string) => string, () => string, () => string][] = [
    ['<image href> the blob name beside it', (n) => `<image href="${n}" width="${W}" height="${W}"/>`, () => `${png.sha256}.png`, () => `${'0'.repeat(64)}.png`],
    ['<image xlink:href> through ../blobs/', (n) => `<image xlink:href="${n}" width="${W}" height="${W}"/>`, () => `../blobs/${png.sha256}.png`, () => `../blobs/${'0'.repeat(64)}.png`],
    ['<image href> absolute file:// into the blob store', (n) => `<image href="${n}" width="${W}" height="${W}"/>`, () => `file://${join(svc.dataDir, 'blobs', `${png.sha256}.png`)}`, () => `file://${join(svc.dataDir, 'blobs', `${'0'.repeat(64)}.png`)}`],
    ['<image href> absolute file:// elsewhere on the disk', (n) => `<image href="${n}" width="${W}" height="${W}"/>`, () => `file://${join(outside, 'red.png')}`, () => `file://${join(outside, 'rex.png')}`],
    ['<image href> file:///etc/', (n) => `<image href="${n}" width="${W}" height="${W}"/>`, () => 'file:///etc/hostname', () => 'file:///etc/hostnamx'],
    ['<use> of an element of alpha\'s SVG', (n) => `<use href="${n}#r"/>`, () => `${svgAsset.sha256}.svg`, () => `${'0'.repeat(64)}.svg`],
    ['<feImage> in a filter', (n) => `<filter id="f"><feImage href="${n}"/></filter><rect width="${W}" height="${W}" filter="url(#f)"/>`, () => `${png.sha256}.png`, () => `${'0'.repeat(64)}.png`],
    ['CSS url() in a fill attribute', (n) => `<rect width="${W}" height="${W}" fill="url(${n}#g)"/>`, () => `${svgAsset.sha256}.svg`, () => `${'0'.repeat(64)}.svg`],
    ['CSS url() in <style>', (n) => `<style>.x { fill: url(${n}#g) }</style><rect class="x" width="${W}" height="${W}"/>`, () => `${svgAsset.sha256}.svg`, () => `${'0'.repeat(64)}.svg`],
  ];
  for (const [name, body, exists, missing] of rows) {
    test(name, async () => {
      const nonce = `${name} ${Math.random()}`;
      const [a, b] = [await thumbOf(beta, page(body(exists()), nonce)), await thumbOf(beta, page(body(missing()), nonce))];
      assert.ok(a.equals(b), 'the thumbnails are the same whether the named file exists or not');
      assert.notDeepEqual(await centre(a), RED, "alpha's red never shows");
    });
  }
});

describe('what an SVG holds itself still renders', () => {
  test('a fragment (<use href="#...">) and an inline data: image', async () => {
    const red = await sharp({ create: { width: 4, height: 4, channels: 3, background: RED } }).png().toBuffer();
    const viaUse = await thumbOf(beta, page(`<defs><rect id="own" width="${W}" height="${W}" fill="#0f0"/></defs><use href="#own"/>`, 'use'));
    const green = await centre(viaUse); // WebP is lossy: near, not exact
    assert.ok(green.r < 50 && green.g > 200 && green.b < 50, JSON.stringify(green));
    const viaData = await thumbOf(beta, page(`<image href="data:image/png;base64,${red.toString('base64')}" width="${W}" height="${W}" preserveAspectRatio="none" style="image-rendering:pixelated"/>`, 'data'));
    const c = await centre(viaData);
    assert.ok(c.r > 200 && c.g < 50 && c.b < 50, JSON.stringify(c));
  });
});
