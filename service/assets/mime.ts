/**
 * Media types and file extensions of assets. A closed table: the extension a
 * blob and a default library file get from a media type, and the media type a
 * file name or a decoded image format implies when the client sent none.
 */

const TABLE: [ext: string, mime: string][] = [
  ['.jpg', 'image/jpeg'],
  ['.jpeg', 'image/jpeg'],
  ['.png', 'image/png'],
  ['.gif', 'image/gif'],
  ['.webp', 'image/webp'],
  ['.avif', 'image/avif'],
  ['.heic', 'image/heic'],
  ['.heif', 'image/heif'],
  ['.tif', 'image/tiff'],
  ['.tiff', 'image/tiff'],
  ['.bmp', 'image/bmp'],
  ['.svg', 'image/svg+xml'],
  ['.jxl', 'image/jxl'],
  ['.mp4', 'video/mp4'],
  ['.m4v', 'video/x-m4v'],
  ['.mov', 'video/quicktime'],
  ['.webm', 'video/webm'],
  ['.mkv', 'video/x-matroska'],
  ['.avi', 'video/x-msvideo'],
  ['.mp3', 'audio/mpeg'],
  ['.wav', 'audio/wav'],
  ['.ogg', 'audio/ogg'],
  ['.opus', 'audio/opus'],
  ['.flac', 'audio/flac'],
  ['.m4a', 'audio/mp4'],
  ['.aac', 'audio/aac'],
  ['.json', 'application/json'],
  ['.txt', 'text/plain'],
  ['.pdf', 'application/pdf'],
  ['.zip', 'application/zip'],
  ['.glb', 'model/gltf-binary'],
  ['.bin', 'application/octet-stream'],
];

/** The first extension listed for a type wins (`.jpg` for image/jpeg). */
const EXT_BY_MIME = new Map<string, string>();
for (const [ext, mime] of TABLE) if (!EXT_BY_MIME.has(mime)) EXT_BY_MIME.set(mime, ext);
const MIME_BY_EXT = new Map(TABLE);
EXT_BY_MIME.set('audio/x-wav', '.wav');
EXT_BY_MIME.set('audio/wave', '.wav');

export const DEFAULT_MIME = 'application/octet-stream';

/** `.jpg` for image/jpeg; `.bin` for a type the table does not know. */
export function extensionForMime(mime: string): string {
  return EXT_BY_MIME.get(mime) ?? '.bin';
}

/** image/png for `.png` (any case); null for an unknown or missing extension. */
export function mimeForExtension(ext: string): string | null {
  return MIME_BY_EXT.get(ext.toLowerCase()) ?? null;
}

/** The media type of a format sharp decoded (`jpeg`, `png`, `heif` ...), or null. */
export function mimeForImageFormat(format: string | undefined): string | null {
  switch (format) {
    case 'jpeg':
    case 'png':
    case 'gif':
    case 'webp':
    case 'avif':
    case 'tiff':
    case 'jxl':
    case 'bmp':
      return `image/${format}`;
    case 'heif':
      return 'image/heif';
    case 'svg':
      return 'image/svg+xml';
    default:
      return null;
  }
}

const TOKEN = "[a-z0-9!#$&^_.+-]+";
const MEDIA_TYPE = new RegExp(`^${TOKEN}/${TOKEN}$`);

/**
 * The media type of a Content-Type header: lower-cased, parameters dropped;
 * null when absent, malformed or the generic application/octet-stream.
 */
export function parseContentType(header: string | undefined): string | null {
  if (header === undefined) return null;
  const type = header.split(';')[0]!.trim().toLowerCase();
  if (type.length > 127 || !MEDIA_TYPE.test(type) || type === DEFAULT_MIME) return null;
  return type;
}
