/**
 * Text as EnvACE's Python writes it, for the messages a policy reads in both systems: `json.dumps`
 * with its default separators (`", "`, `": "`) and `ensure_ascii=True`, and `str()` of a parsed
 * JSON value (Python's repr of dicts, lists and strings).
 */
import type { JsonValue } from '../base/json';
import { pythonNumber } from '../base/pythonJsonDumps';
import { pythonStringRepr as pyRepr } from '../protocol/pythonValue';

export { pythonJsonDumps } from '../base/pythonJsonDumps';

/** `str(value)` of a value `json.loads` returned: `None`, `True`, `{'a': 1}`, `['x']`. */
export function pythonStr(value: JsonValue | undefined, top = true): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return pythonNumber(value);
  if (typeof value === 'string') return top ? value : pyRepr(value);
  if (Array.isArray(value)) return `[${value.map((v) => pythonStr(v, false)).join(', ')}]`;
  return `{${Object.entries(value)
    .map(([k, v]) => `${pyRepr(k)}: ${pythonStr(v, false)}`)
    .join(', ')}}`;
}
