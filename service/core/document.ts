import { ApiError } from './errors';
import { isJsonObject, type JsonObject } from './merge-patch';

/**
 * Stored JSON documents (KV values, session state, later records): always a
 * JSON object, nested at most MAX_DEPTH levels so that every later walk over
 * them (merge patch, serialisation) stays far from the stack limit, and with
 * every number a finite double so the document reads back as it was sent.
 */
export const MAX_DEPTH = 100;

export function requireDocument(value: unknown, what: string): JsonObject {
  if (!isJsonObject(value)) {
    throw ApiError.invalidDocument(`${what} must be a JSON object, not ${describe(value)}.`);
  }
  const problem = inspect(value, MAX_DEPTH);
  if (problem === 'too_deep') throw ApiError.invalidDocument(`${what} is nested deeper than ${MAX_DEPTH} levels.`);
  if (problem === 'not_finite') {
    throw ApiError.invalidDocument(`${what} holds a number outside the range of a double; it would not be stored as sent.`);
  }
  return value;
}

/** Whether a JSON value nests deeper than `max` levels (checked without recursion). */
export function nestedDeeperThan(value: unknown, max = MAX_DEPTH): boolean {
  return inspect(value, max) === 'too_deep';
}

/**
 * Whether JSON text nests deeper than `max` levels, in one pass over the raw text
 * and before any parse (a 4 MiB body of brackets held JSON.parse for seconds).
 * Counts as inspect() does: the outermost array or object is level 1, scalars add
 * none; brackets inside strings (escapes included) do not count. Text that is not
 * JSON gets some answer and is then refused by the parser.
 */
export function textNestedDeeperThan(text: string, max = MAX_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped, whatever it is
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** The stored text of a document and its size in bytes (what quotas count). */
export function documentText(doc: JsonObject): { text: string; size: number } {
  const text = JSON.stringify(doc);
  return { text, size: Buffer.byteLength(text, 'utf8') };
}

/**
 * A valid document (requireDocument: 400 `invalid_document`) whose stored
 * text is at most `limit` bytes, else 413 `too_large` with `details.limit`:
 * job `data` (also after a merge) and gallery `params`, as records are bounded.
 */
export function boundedDocument(value: unknown, what: string, limit: number): { doc: JsonObject; text: string; size: number } {
  const doc = requireDocument(value, what);
  const { text, size } = documentText(doc);
  if (size > limit) throw ApiError.tooLarge(limit, `${what} (${size} bytes as compact JSON)`);
  return { doc, text, size };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/**
 * Too deep, or a number JSON.parse turned into Infinity (1e400), which would be
 * written back as null. Iterative, so a hostile document cannot overflow the
 * stack while being checked.
 */
function inspect(root: unknown, max: number): 'too_deep' | 'not_finite' | null {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return 'not_finite';
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > max) return 'too_deep';
    for (const child of Array.isArray(value) ? value : Object.values(value)) {
      if (typeof child === 'number' || (typeof child === 'object' && child !== null)) stack.push([child, depth + 1]);
    }
  }
  return null;
}
