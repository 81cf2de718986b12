import { open } from 'node:fs/promises';
import { ApiError } from '../core/errors';
import { decoderInput, looksLikeSvg } from './svg-sanitise';

/**
 * What the image decoder (sharp) is handed for a stored or uploaded file:
 * its bytes, never its path, so no loader has a folder to resolve a name in,
 * with SVG rebuilt without external references first (svg-sanitise.ts).
 * docs/security.md, Inputs: thumbnails.
 */

/** Larger images are not read whole: no thumbnail, and only a raster is probed, from its path. */
export const MAX_DECODED_BYTES = 256 * 1024 * 1024;
const SNIFF_BYTES = 64 * 1024;

/** The thumbnail's input: 501 `unsupported` past MAX_DECODED_BYTES or for SVG that cannot be read safely. */
export async function decoderBytes(file: string): Promise<Buffer> {
  const bytes = await readUpTo(file, MAX_DECODED_BYTES);
  if (bytes === null) throw ApiError.unsupported(`No thumbnail is made of an image larger than ${MAX_DECODED_BYTES} bytes.`);
  const input = decoderInput(bytes);
  if (input === null) throw ApiError.unsupported('No thumbnail can be made of this image: its SVG could not be read safely.');
  return input;
}

/**
 * The upload probe's input: the bytes as for a thumbnail; past
 * MAX_DECODED_BYTES the path, but only for what cannot be SVG (no `<svg` near
 * the start, not gzip): raster loaders read their one file. Null: SVG that
 * cannot be read safely, or too large to be read whole.
 */
export async function probeInput(file: string): Promise<Buffer | string | null> {
  const bytes = await readUpTo(file, MAX_DECODED_BYTES);
  if (bytes !== null) return decoderInput(bytes);
  const head = (await readUpTo(file, SNIFF_BYTES, true))!;
  const gzip = head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
  return gzip || looksLikeSvg(head) ? null : file;
}

/** The file's bytes, or null when larger than `max` (with `head`, its first `max` bytes). */
async function readUpTo(file: string, max: number, head = false): Promise<Buffer | null> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size > max && !head) return null;
    const buffer = Buffer.alloc(Math.min(size, max));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
