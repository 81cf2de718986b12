/**
 * RFC 7396 JSON Merge Patch as a pure function. The target is never mutated.
 * Members are defined with defineProperty so a key such as "__proto__" is an
 * ordinary member and never reaches an object's prototype.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function applyMergePatch(target: Json | undefined, patch: Json): Json {
  if (!isJsonObject(patch)) return patch;
  const result: JsonObject = {};
  if (isJsonObject(target)) {
    for (const key of Object.keys(target)) setMember(result, key, target[key]!);
  }
  for (const key of Object.keys(patch)) {
    const value = patch[key]!;
    if (value === null) {
      delete result[key];
    } else {
      const current = Object.prototype.hasOwnProperty.call(result, key) ? result[key] : undefined;
      setMember(result, key, applyMergePatch(current, value));
    }
  }
  return result;
}

function setMember(object: JsonObject, key: string, value: Json): void {
  Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
}
