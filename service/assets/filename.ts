/**
 * Names of library files (docs/api.md "Assets"): what a studio's `filename` becomes on
 * disk under DIR/library/<studio>/, and the name tried next when one is taken.
 * Pure string functions.
 */

/** Longest name kept, in UTF-8 bytes (ext4 allows 255; room is left for " (NN)"). */
export const MAX_NAME_BYTES = 200;

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
/** Characters Windows refuses in names, and path separators everywhere. */
const RESERVED = /[<>:"/\\|?*]/g;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;
const EXTENSION = /\.[A-Za-z0-9]{1,10}$/;

/**
 * A safe single file name made from what a client gave: the last path segment,
 * control and reserved characters replaced by `_`, leading and trailing dots
 * and spaces removed (no hidden files, no `..`), device names prefixed, cut to
 * MAX_NAME_BYTES keeping the extension. Null when nothing usable is left.
 */
export function sanitizeFilename(raw: string): string | null {
  const segments = raw.split(/[/\\]/);
  let name = segments[segments.length - 1]!.normalize('NFC').replace(CONTROL, '_').replace(RESERVED, '_');
  name = name.replace(/^[\s.]+|[\s.]+$/g, '');
  if (name === '' || /^_+$/.test(name)) return null;
  if (WINDOWS_DEVICE.test(name)) name = `_${name}`;
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) {
    const ext = extensionOf(name);
    name = cutToBytes(name.slice(0, name.length - ext.length), MAX_NAME_BYTES - ext.length).replace(/[\s.]+$/, '') + ext;
  }
  return name;
}

/** `.png` of `photo.PNG` (lower-cased); '' when the name has no short alphanumeric extension. */
export function extensionOf(name: string): string {
  const m = EXTENSION.exec(name);
  return m && m.index > 0 ? m[0].toLowerCase() : '';
}

/** The n-th name to try for a library file: `a.png`, `a (2).png`, `a (3).png` ... */
export function clashName(name: string, n: number): string {
  if (n <= 1) return name;
  const ext = EXTENSION.exec(name) && !name.startsWith('.') ? EXTENSION.exec(name)![0] : '';
  return `${name.slice(0, name.length - ext.length)} (${n})${ext}`;
}

function cutToBytes(text: string, max: number): string {
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    const b = Buffer.byteLength(ch, 'utf8');
    if (bytes + b > max) break;
    out += ch;
    bytes += b;
  }
  return out;
}
