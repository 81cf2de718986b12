import { open } from 'node:fs/promises';
import { ApiError } from '../core/errors';
import { decoderInput, looksLikeSvg, MAX_CHARS } from './svg-sanitise';

/**
 * What the image decoder (sharp) is handed for a stored or uploaded file. A
 * thumbnail's render gets the bytes, never the path, so no loader has a
 * folder to resolve a name in; SVG is rebuilt without external references
 * first (svg-sanitise.ts). The upload probe reads only a size, so a raster
 * keeps its path there. docs/security.md, Inputs: thumbnails.
 */

/** Larger images get no thumbnail. */
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
 * The upload probe's input, which only needs the header of a raster: the path
 * for what cannot be SVG (no `<svg` near the start, not gzip), whose loader
 * reads that one file; SVG as for a thumbnail, from its bytes (at most
 * MAX_CHARS of them). Null: SVG that cannot be read safely, or too large.
 */
export async function probeInput(file: string): Promise<Buffer | string | null> {
  const head = (await readUpTo(file, SNIFF_BYTES, true))!;
  const gzip = head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
  if (!gzip && !looksLikeSvg(head)) return file;
  const bytes = await readUpTo(file, MAX_CHARS);
  return bytes === null ? null : decoderInput(bytes);
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
