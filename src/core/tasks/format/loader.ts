import { readFile, readdir, stat } from 'node:fs/promises';
import * as path from 'node:path';
import type { ErrorObject } from '../../base/jsonSchema';
import { schemaCheck } from '../../base/jsonSchema';
import taskSchema from '../../../../schemas/task.schema.json';
import { StudioError } from '../../base/errors';
import { describeOutsideValue, MAX_JSON_DEPTH, nestsDeeperThan } from '../../base/json';
import { valuesAtNumberName } from '../../base/numberPlaces';
import { readNumber } from '../../base/numbers';
import type { OutsideNumberSpec } from '../../base/numbers';
import { OUTSIDE_NUMBERS } from '../../base/outsideNumbers';
import type { PathSegment } from '../../fidelity/jsonPath';
import { formatJsonPath, parseJsonPath } from '../../fidelity/jsonPath';
import type { CheckSpec, LoadedTask, Matcher, TaskFile } from './taskFile';

/** File name ending of task files that {@link loadTasks} picks up in folders. */
export const TASK_FILE_SUFFIX = '.task.json';

const checkTask = schemaCheck(taskSchema, { discriminator: true });

/** A fault in a task: where (a JSONPath such as `$.checks[2].weight`) and what. */
export interface TaskFault {
  path: string;
  message: string;
}

type Fault = { at: PathSegment[]; message: string };

/**
 * Checks a parsed value against schemas/task.schema.json and the rules a schema cannot say (unique
 * check ids, one matcher per state check, turn indexes in range, reference turns matching user
 * turns, tools inside the allow-list, valid regular expressions). Returns the first fault, or none.
 */
export function findTaskFault(value: unknown): TaskFault | undefined {
  // Numbers first: the schema's own message for 3000000000 would not say the range nor why.
  const numbers = numberFault(value);
  if (numbers) return formatted(numbers);
  const checked = checkTask(value);
  if (!checked.ok) return formatted(schemaFault(checked.errors));
  // Its own structure holds tool values (arguments, examples) about a dozen levels down.
  if (nestsDeeperThan(value, MAX_JSON_DEPTH + 12))
    return { path: '$', message: `nests deeper than ${MAX_JSON_DEPTH} levels in its tool values` };
  return formatted(semanticFault(value as TaskFile));
}

/**
 * Every number of a task file with its documented range (docs/reliability.md, "Numbers from
 * outside"): the `TASK_INVALID` rows of {@link OUTSIDE_NUMBERS}, found by their names
 * (`$.checks[i].weight`). schemas/task.schema.json states the same bounds (a unit test holds it).
 */
export const TASK_FILE_NUMBERS: readonly OutsideNumberSpec[] = Object.values(
  OUTSIDE_NUMBERS,
).filter((spec) => spec.code === 'TASK_INVALID');

/** The first number of a task (limits, seed, check weights and counts) outside its range. */
function numberFault(value: unknown): Fault | undefined {
  for (const spec of TASK_FILE_NUMBERS)
    for (const place of valuesAtNumberName(value, spec.name)) {
      const read = readNumber(place.value, spec);
      if (!read.ok)
        return { at: place.at, message: `must be ${read.error.range}, not ${read.error.found}` };
    }
  return undefined;
}

function formatted(fault: ReturnType<typeof semanticFault>): TaskFault | undefined {
  return fault ? { path: formatJsonPath(fault.at), message: fault.message } : undefined;
}

/**
 * Parses and checks a task. A malformed task is a StudioError TASK_INVALID whose message names the
 * JSONPath of the fault (also in `details.path`); nothing is run.
 */
export function parseTask(value: unknown, where: string): TaskFile {
  const fault = findTaskFault(value);
  if (fault) {
    throw new StudioError(
      'TASK_INVALID',
      `${where}: ${fault.path} ${fault.message}. Fix the task file (see docs/task-format.md).`,
      { path: fault.path, file: where },
    );
  }
  return value as TaskFile;
}

/** Reads, parses and checks one task file. */
export async function loadTaskFile(file: string): Promise<LoadedTask> {
  const abs = path.resolve(file);
  let text: string;
  try {
    text = await readFile(abs, 'utf8');
  } catch (err) {
    throw new StudioError(
      'TASK_UNREADABLE',
      `Cannot read the task file ${abs}: ${(err as Error).message}.`,
    );
  }
  // Editors on Windows save UTF-8 with a byte-order mark; JSON.parse refuses it, the trace reader skips it too.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new StudioError(
      'TASK_INVALID',
      `${abs}: $ is not valid JSON (${jsonErrorPlace(text, err as Error)}). Fix the task file.`,
      { path: '$', file: abs },
    );
  }
  return { task: parseTask(value, abs), file: abs, baseDir: path.dirname(abs) };
}

/**
 * Loads task files: files as given, folders searched recursively for `*.task.json`. Stops at the
 * first malformed task (nothing is run); duplicate ids are a TASK_INVALID error too.
 */
export async function loadTasks(paths: readonly string[]): Promise<LoadedTask[]> {
  const files: string[] = [];
  for (const p of paths) {
    const s = await stat(p).catch(() => undefined);
    if (!s) throw new StudioError('TASK_UNREADABLE', `${p} does not exist.`);
    if (s.isDirectory()) files.push(...(await findTaskFiles(p)));
    else files.push(p);
  }
  const out: LoadedTask[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    const loaded = await loadTaskFile(f);
    const other = seen.get(loaded.task.id);
    if (other)
      throw new StudioError(
        'TASK_INVALID',
        `${loaded.file}: $.id "${loaded.task.id}" is also the id of ${other}. Task ids must be unique.`,
        { path: '$.id', file: loaded.file },
      );
    seen.set(loaded.task.id, loaded.file);
    out.push(loaded);
  }
  return out;
}

async function findTaskFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return (
    entries
      .filter((e) => e.isFile() && e.name.endsWith(TASK_FILE_SUFFIX))
      // Dirent.parentPath is new in Node 20.12 and 18.20; older runtimes (and editors' Electron) have only .path.
      .map((e) => path.join(e.parentPath ?? e.path, e.name))
      .sort()
  );
}

function jsonErrorPlace(text: string, err: Error): string {
  const m = /position (\d+)/.exec(err.message);
  if (!m) return err.message;
  const pos = Number(m[1]);
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `${err.message.replace(/\s*\(line \d+ column \d+\)$/, '')}; line ${line}, column ${column}`;
}

function pointerSegments(pointer: string): PathSegment[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s));
}

function schemaFault(errors: ErrorObject[] | null | undefined): Fault {
  const e = errors?.[0];
  if (!e) return { at: [], message: 'is invalid' };
  if (e.keyword === 'discriminator') {
    const { tag, tagValue } = e.params as { tag: string; tagValue: unknown };
    return {
      at: [...pointerSegments(e.instancePath), tag],
      message: `is ${describeOutsideValue(tagValue)}; it must be one of ${CHECK_KINDS.map((k) => JSON.stringify(k)).join(', ')}`,
    };
  }
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'additionalProperties')
    message = `has an unknown property "${(e.params as { additionalProperty: string }).additionalProperty}"`;
  else if (e.keyword === 'enum')
    message += `: ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  else if (e.keyword === 'const')
    message += ` ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
  else if (e.keyword === 'required')
    message = `needs the property "${(e.params as { missingProperty: string }).missingProperty}"`;
  return { at: pointerSegments(e.instancePath), message };
}

/** The check kinds the schema knows, in its order. */
const CHECK_KINDS: string[] = (
  taskSchema.definitions.check.oneOf as { properties: { kind: { const: string } } }[]
).map((o) => o.properties.kind.const);

const MATCHER_KEYS: (keyof Matcher)[] = ['equals', 'oneOf', 'contains', 'matches', 'exists'];

function semanticFault(task: TaskFile): Fault | undefined {
  const ids = new Set<string>();
  const allow = task.tools ? new Set(task.tools) : undefined;
  const turnCount = task.turns.length;
  for (let i = 0; i < task.checks.length; i++) {
    const check = task.checks[i];
    const at: PathSegment[] = ['checks', i];
    const id = check.id ?? `check-${i}`;
    if (ids.has(id)) return { at: [...at, 'id'], message: `repeats the check id "${id}"` };
    ids.add(id);
    const fault = checkFault(check, at, task, allow, turnCount);
    if (fault) return fault;
  }
  if (task.reference) {
    const refTurns = task.reference.turns;
    if (refTurns.length !== turnCount)
      return {
        at: ['reference', 'turns'],
        message: `has ${refTurns.length} turn(s) but the task has ${turnCount} user turn(s)`,
      };
    for (let t = 0; t < refTurns.length; t++) {
      for (let c = 0; c < refTurns[t].calls.length; c++) {
        const { name, by } = refTurns[t].calls[c];
        // The allow-list is the agent's: the user's own calls use tools of its own.
        if (allow && by !== 'user' && !allow.has(name))
          return {
            at: ['reference', 'turns', t, 'calls', c, 'name'],
            message: `"${name}" is not in the task's tool allow-list`,
          };
      }
    }
  }
  for (const [t, turn] of task.turns.entries())
    for (const [i, name] of (turn.addTools ?? []).entries())
      if (allow && !allow.has(name))
        return {
          at: ['turns', t, 'addTools', i],
          message: `"${name}" is not in the task's tool allow-list`,
        };
  return undefined;
}

function checkFault(
  check: CheckSpec,
  at: PathSegment[],
  task: TaskFile,
  allow: Set<string> | undefined,
  turnCount: number,
): Fault | undefined {
  if ('turn' in check && check.turn !== undefined && check.turn >= turnCount) {
    return {
      at: [...at, 'turn'],
      message: `is ${check.turn} but the task has ${turnCount} user turn(s) (turns count from 0)`,
    };
  }
  switch (check.kind) {
    case 'state': {
      if (!(check.server in task.servers))
        return {
          at: [...at, 'server'],
          message: `"${check.server}" is not one of the task's servers`,
        };
      const ops = MATCHER_KEYS.filter((k) => k in check);
      if (ops.length !== 1)
        return {
          at,
          message: `needs exactly one matcher (${MATCHER_KEYS.join(', ')}), found ${ops.length}`,
        };
      if (!parseJsonPath(check.path))
        return { at: [...at, 'path'], message: `is not a JSONPath like $.orders["#W1"].status` };
      return regexFault(check, at);
    }
    case 'call':
    case 'no_call': {
      if (check.kind === 'call' && allow && !allow.has(check.tool))
        return {
          at: [...at, 'tool'],
          message: `"${check.tool}" is not in the task's tool allow-list`,
        };
      if (check.kind === 'call' && check.max !== undefined && check.max < (check.min ?? 1))
        return { at: [...at, 'max'], message: `is below min (${check.min ?? 1})` };
      for (const [key, m] of Object.entries(check.args ?? {})) {
        if (key.startsWith('$') && !parseJsonPath(key))
          return { at: [...at, 'args', key], message: 'is not a JSONPath like $.address.zip' };
        const fault = regexFault(m, [...at, 'args', key]);
        if (fault) return fault;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function regexFault(m: Matcher, at: PathSegment[]): Fault | undefined {
  if (m.matches === undefined) return undefined;
  try {
    new RegExp(m.matches);
    return undefined;
  } catch (err) {
    return {
      at: [...at, 'matches'],
      message: `is not a valid regular expression (${(err as Error).message})`,
    };
  }
}
