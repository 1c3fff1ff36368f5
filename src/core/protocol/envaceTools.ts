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

/**
 * What in a tool's input schema makes verl's `OpenAIFunctionToolSchema` (verl/tools/schemas.py)
 * refuse it after {@link envaceToolSchema}, with its JSON path in the input schema; undefined when
 * it passes. The one fault left is a property's `enum` that is neither a list nor null (`"abc"`):
 * `enum: list[str] | None` fails, and `ChecklistDataset._filter_invalid_tool_schemas` drops the whole
 * record without a word. No list stands for it faithfully (JSON Schema wants a list; mcp_tool.py
 * would test `value in "abc"`, a substring), so the export refuses it rather than guess.
 */
export function envaceToolSchemaFault(
  tool: ToolDefinition,
): { path: string; problem: string } | undefined {
  const params = isJsonObject(tool.parameters) ? tool.parameters : {};
  const properties = isJsonObject(params['properties']) ? params['properties'] : {};
  for (const [name, value] of Object.entries(properties)) {
    if (!isJsonObject(value) || !('enum' in value)) continue;
    const e = value['enum'];
    if (e === null || Array.isArray(e)) continue;
    const key = /^[A-Za-z_$][\w$]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
    return {
      path: `$.properties${key}.enum`,
      problem: `is ${canonicalJson(e)}, not a list`,
    };
  }
  return undefined;
}
