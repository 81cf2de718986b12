import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { MAX_DEPTH, textNestedDeeperThan } from './document';
import { ApiError } from './errors';

/**
 * Reads a JSON request body with a byte limit (docs/api.md "Limits and defaults"): 413 `too_large`
 * with `details.limit` from Content-Length before reading, or while streaming;
 * 400 `bad_request` for malformed JSON or a content type that is not JSON;
 * a body nested deeper than documents may be is found in one pass over the
 * text before it is parsed: 400 `invalid_document` where the body holds a
 * document (`deepCode`), 400 `bad_request` elsewhere.
 */

/**
 * Bodies wrap a document in at most one object (`{"state": {...}}`, `{"params": ...}`):
 * a body deeper than this holds no valid document. The documents' own limit (100)
 * is checked after the parse, as before.
 */
export const MAX_BODY_DEPTH = MAX_DEPTH + 8;

const JSON_TYPES = /^application\/(?:[a-z0-9.+-]*\+)?json$/;

export async function readJsonBody(
  req: IncomingMessage,
  limit: number,
  deepCode: 'invalid_document' | 'bad_request' = 'invalid_document',
  /** No body at all reads as `{}` (a route whose members are all optional). */
  emptyIsObject = false,
): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== '' && !JSON_TYPES.test(type)) {
    throw ApiError.badRequest(`The body must be JSON (Content-Type application/json), not "${type}".`);
  }
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw ApiError.tooLarge(limit);
  }
  const text = await readText(req, limit);
  if (text.trim() === '') {
    if (emptyIsObject) return {};
    throw ApiError.badRequest('A JSON body is required.');
  }
  if (textNestedDeeperThan(text, MAX_BODY_DEPTH)) {
    const message = `The body is nested deeper than ${MAX_DEPTH} levels.`;
    throw deepCode === 'invalid_document' ? ApiError.invalidDocument(message) : ApiError.badRequest(message);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw ApiError.badRequest(`The body is not valid JSON: ${(err as Error).message}`);
  }
}

function readText(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const fail = (err: unknown) => {
      cleanup();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume(); // discard what follows, so the client is not stuck writing before it reads the 413; the app then closes the connection
        reject(ApiError.tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      // Checked, then decoded: the same verdict as a fatal TextDecoder, without one per request.
      // A leading byte-order mark is dropped, as TextDecoder drops it.
      if (isUtf8(bytes)) resolve(bytes.toString('utf8', bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0));
      else reject(ApiError.badRequest('The body is not valid UTF-8.'));
    };
    const onAborted = () => fail(ApiError.badRequest('The request body was cut short.'));
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', fail);
      req.off('aborted', onAborted);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', fail);
    req.on('aborted', onAborted);
  });
}
