import type { JsonValue } from '../../core/base/json';
import type { ParsedToolCall } from '../../core/protocol/actParser';
import { matchArguments } from '../../core/tasks/checks/matchers';
import type { ArgumentMatchers, CheckSpec, Matcher } from '../../core/tasks/format/taskFile';

/**
 * A tool of a domain that changes the state (it has a `target`, logged in the snapshot's `writes`),
 * as the trajectory items of generated tasks need it.
 */
export interface WriteToolSpec {
  tool: string;
  /** The argument that names what the tool changes (the `target` of its `writes` entry). */
  target: string;
  /** The snapshot's collection (`$.orders`, `$.accounts`...) whose keys the target argument names. */
  collection: string;
  /** Arguments that no state check depends on (free text, a payment method nothing reads back). */
  free?: string[];
  /** Array arguments whose order does not matter (the server sorts them). */
  unordered?: string[];
}

/** Weight of the `call` item that stands for one write of the reference solution. */
export const WRITE_CALL_WEIGHT = 2;

/** Weight of each `no_call` item that forbids a write the reference solution does not make. */
export const FORBIDDEN_WRITE_WEIGHT = 0.5;

/** Orders of an array of at most four values; longer arrays keep the one order given. */
function orders(values: JsonValue[]): JsonValue[][] {
  if (values.length <= 1 || values.length > 4) return [values];
  return values.flatMap((v, i) =>
    orders([...values.slice(0, i), ...values.slice(i + 1)]).map((rest) => [v, ...rest]),
  );
}

function argumentMatchers(call: ParsedToolCall, spec: WriteToolSpec): ArgumentMatchers {
  const args = call.arguments as { [key: string]: JsonValue };
  const matchers: ArgumentMatchers = {};
  for (const key of Object.keys(args).sort()) {
    if (spec.free?.includes(key)) continue;
    const value = args[key];
    const m: Matcher =
      spec.unordered?.includes(key) && Array.isArray(value) && value.length > 1
        ? { oneOf: orders(value) }
        : { equals: value };
    matchers[key] = m;
  }
  return matchers;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The trajectory items of a generated task: checks over what the episode did (its calls) that stand
 * for its state checks, so that an imagined episode, which has no real state, is graded on the same
 * grounds. For every write of the reference solution, a `call` item (`ok: true`, the arguments the
 * state checks depend on, at most as many matching calls as the reference makes); for every write
 * tool, a `no_call` item forbidding the writes the reference does not make (any call of a tool it
 * never writes with; a call of a tool it writes with on another target). Together they say what
 * `"$.writes" equals [...]` says, but for writes that changed nothing: an attempt that the server
 * refused still fails a `no_call` item.
 */
export function trajectoryItems(
  steps: readonly { calls: readonly ParsedToolCall[] }[],
  writeTools: readonly WriteToolSpec[],
): CheckSpec[] {
  const items: CheckSpec[] = [];
  const targets = new Map<string, string[]>();
  const seen = new Map<string, number>();
  const calls = steps.flatMap((s) => s.calls);
  for (const call of calls) {
    const spec = writeTools.find((w) => w.tool === call.name);
    if (!spec) continue;
    const target = String((call.arguments as { [key: string]: JsonValue })[spec.target]);
    targets.set(spec.tool, [...(targets.get(spec.tool) ?? []), target]);
    const n = (seen.get(spec.tool) ?? 0) + 1;
    seen.set(spec.tool, n);
    const args = argumentMatchers(call, spec);
    items.push({
      id: `write-${spec.tool}${n > 1 ? `-${n}` : ''}`,
      kind: 'call',
      tool: spec.tool,
      args,
      ok: true,
      // A write made twice changes twice (a second transfer, a second payment).
      max: calls.filter((c) => c.name === call.name && matchArguments(args, c.arguments).ok).length,
      weight: WRITE_CALL_WEIGHT,
      description: `${spec.tool} on ${target} succeeded (stands for the state checks)`,
    });
  }
  for (const spec of writeTools) {
    const written = targets.get(spec.tool);
    if (!written) {
      items.push({
        id: `no-${spec.tool}`,
        kind: 'no_call',
        tool: spec.tool,
        weight: FORBIDDEN_WRITE_WEIGHT,
        description: `no call of ${spec.tool} (stands for the writes check)`,
      });
      continue;
    }
    const alternatives = [...new Set(written)].map(escapeRegExp).join('|');
    items.push({
      id: `no-other-${spec.tool}`,
      kind: 'no_call',
      tool: spec.tool,
      args: { [spec.target]: { matches: `^(?!(?:${alternatives})$)` } },
      weight: FORBIDDEN_WRITE_WEIGHT,
      description: `no call of ${spec.tool} on another ${spec.target} than ${[...new Set(written)].join(', ')} (stands for the writes check)`,
    });
  }
  return items;
}
