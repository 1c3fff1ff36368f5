import { canonicalJson } from '../base/canonicalJson';
import type { JsonObject } from '../base/json';
import { isJsonObject } from '../base/json';
import type { ToolDefinition } from './types';
import { toFunctionSchema } from './types';

/** A property's JSON type as one string: verl takes `type: str` only. */
function propertyType(p: JsonObject): string {
  const t = p['type'];
  if (typeof t === 'string') return t;
  if (Array.isArray(t))
    return (t.find((x) => typeof x === 'string' && x !== 'null') as string | undefined) ?? 'string';
  for (const key of ['anyOf', 'oneOf']) {
    const branches = p[key];
    if (Array.isArray(branches)) {
      for (const b of branches)
        if (isJsonObject(b) && typeof b['type'] === 'string' && b['type'] !== 'null')
          return b['type'];
    }
  }
  if (Array.isArray(p['enum'])) return 'string';
  if (isJsonObject(p['properties'])) return 'object';
  if (p['items'] !== undefined) return 'array';
  return 'string';
}

/**
 * A tool as EnvACE's verl takes it (verl/tools/schemas.py, `OpenAIFunctionToolSchema`): a
 * `description` string, `parameters` with a string `type`, `properties` each with a string `type`
 * and string `enum` values, and a `required` list. A record whose tools fail that model is dropped
 * without a word by `ChecklistDataset._filter_invalid_tool_schemas`, so an MCP schema is written in
 * that shape: a list or union type becomes its first non-null type, enum values become strings, a
 * missing `required` an empty list. Other keys of a property (`items`, `properties`) are kept.
 */
export function envaceToolSchema(tool: ToolDefinition): {
  type: 'function';
  function: { name: string; description: string; parameters: JsonObject };
} {
  const base = toFunctionSchema(tool).function;
  const params = isJsonObject(base.parameters) ? base.parameters : {};
  const properties: JsonObject = {};
  for (const [name, value] of Object.entries(
    isJsonObject(params['properties']) ? params['properties'] : {},
  )) {
    const p = isJsonObject(value) ? value : {};
    const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = p;
    const out: JsonObject = { ...rest, type: propertyType(p) };
    if (typeof p['description'] !== 'string') delete out['description'];
    if (Array.isArray(p['enum']))
      out['enum'] = p['enum'].map((e) => (typeof e === 'string' ? e : canonicalJson(e)));
    properties[name] = out;
  }
  const required = Array.isArray(params['required'])
    ? params['required'].filter((r): r is string => typeof r === 'string')
    : [];
  return {
    type: 'function',
    function: {
      name: base.name,
      description: base.description,
      parameters: { ...params, type: 'object', properties, required },
    },
  };
}
