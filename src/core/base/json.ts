/** Any value that JSON can carry. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/** True for plain JSON objects (not arrays, not null). */
export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The JSON type name of a value, as a fidelity score compares it. */
export type JsonType = 'null' | 'boolean' | 'number' | 'string' | 'array' | 'object';

/** JSON type of a value. */
export function jsonType(v: JsonValue): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v as 'boolean' | 'number' | 'string' | 'object';
}

/** Result of parsing outside input: parsers of outside input return this, they never throw. */
export type ParseResult<T, E> = { ok: true; value: T } | { ok: false; error: E };
