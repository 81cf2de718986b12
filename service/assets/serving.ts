/**
 * The headers of every stored file the service serves (asset bytes and
 * thumbnails, on the service's origin and through a studio's `/_backlot`):
 * stored bytes are untrusted, so none of them may run as a page where the
 * launcher's and editor's pages run (docs/security.md "Files served on the service's
 * origin"). Pure.
 *
 * - `X-Content-Type-Options: nosniff`: the browser takes the stored type as it
 *   stands and never guesses HTML out of the bytes.
 * - `Content-Security-Policy: default-src 'none'; sandbox`: a file opened as a
 *   page is a unique opaque origin with no script, no forms, no pop-ups and no
 *   loads of its own (it cannot read the launcher's cookie or call its API).
 * - `Content-Disposition: attachment` for every type that is not on a short
 *   list of types a browser only ever shows (raster images, video, sound,
 *   plain text, JSON): SVG, HTML, XHTML, any XML (XSLT can make a page of it),
 *   PDF, `application/octet-stream` and every unknown type are downloads when
 *   opened, never documents. `<img>`, `<video>` and `fetch` ignore the header,
 *   so thumbnails, players and studio pages work as before.
 */

/** Raster image subtypes a browser shows as a picture and nothing else. */
const RASTER = new Set(['png', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'tiff', 'heic', 'heif', 'jxl', 'x-icon', 'vnd.microsoft.icon']);
/** A media subtype with no suffix: `mp4`, `x-matroska`, `quicktime`; never `…+xml`. */
const PLAIN_SUBTYPE = /^[a-z0-9][a-z0-9.-]*$/;

export const STORED_FILE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; sandbox",
});

/** Whether a file of this media type may be shown inline when opened: it cannot run script in any browser. */
export function isInlineSafe(mime: string): boolean {
  const slash = mime.indexOf('/');
  if (slash < 0) return false;
  const type = mime.slice(0, slash);
  const subtype = mime.slice(slash + 1);
  if (/xml|html|svg/.test(subtype)) return false;
  switch (type) {
    case 'image':
      return RASTER.has(subtype);
    case 'video':
    case 'audio':
      return PLAIN_SUBTYPE.test(subtype);
    case 'text':
      return subtype === 'plain';
    case 'application':
      return subtype === 'json';
    default:
      return false;
  }
}

/**
 * `attachment; filename="<ASCII fallback>"; filename*=UTF-8''<percent-encoded>`
 * (RFC 6266): the fallback replaces anything but printable ASCII, `"` and `\` with `_`.
 */
export function attachmentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** The headers of one stored file of this type and name. */
export function storedFileHeaders(mime: string, filename: string): Record<string, string> {
  return isInlineSafe(mime) ? { ...STORED_FILE_HEADERS } : { ...STORED_FILE_HEADERS, 'Content-Disposition': attachmentDisposition(filename) };
}
