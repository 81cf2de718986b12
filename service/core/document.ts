import { ApiError } from './errors';
import { isJsonObject, type JsonObject } from './merge-patch';

/**
 * Stored JSON documents (KV values, session state, later records): always a
 * JSON object, nested at most MAX_DEPTH levels so that every later walk over
 * them (merge patch, serialisation) stays far from the stack limit.
 */
export const MAX_DEPTH = 100;

export function requireDocument(value: unknown, what: string): JsonObject {
  if (!isJsonObject(value)) {
    throw ApiError.invalidDocument(`${what} must be a JSON object, not ${describe(value)}.`);
  }
  if (depthExceeds(value, MAX_DEPTH)) {
    throw ApiError.invalidDocument(`${what} is nested deeper than ${MAX_DEPTH} levels.`);
  }
  return value;
}

/** The stored text of a document and its size in bytes (what quotas count). */
export function documentText(doc: JsonObject): { text: string; size: number } {
  const text = JSON.stringify(doc);
  return { text, size: Buffer.byteLength(text, 'utf8') };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** Iterative, so a hostile document cannot overflow the stack while being checked. */
function depthExceeds(root: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > max) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}
