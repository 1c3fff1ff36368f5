import * as assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { serializeAnnotationEvent, readAnnotations } from '../../../src/core/annotations/store';
import type { AnnotationEvent } from '../../../src/core/annotations/schema';
import { StudioError } from '../../../src/core/base/errors';
import type { JsonValue } from '../../../src/core/base/json';
import {
  ACT_PARSE_ERROR_CODES,
  ENVACE_REHEARSAL_PARSE_ERROR_CODES,
  REHEARSAL_PARSE_ERROR_CODES,
} from '../../../src/core/protocol/codes';
import { formatToolCalls, parseActOutput } from '../../../src/core/protocol/actParser';
import { formatRehearsal, parseRehearsalOutput } from '../../../src/core/protocol/rehearsalParser';
import { isFiniteJson } from '../../../src/core/protocol/strictJson';
import { importChatText } from '../../../src/core/tasks/import/chat';
import { importEnvaceText } from '../../../src/core/tasks/import/envace';
import type { ImportResult } from '../../../src/core/tasks/import/types';
import { writeImport } from '../../../src/core/tasks/import/writeImport';
import { findTaskFault, loadTaskFile, parseTask } from '../../../src/core/tasks/format/loader';
import { loadCallView } from '../../../src/core/trace/index/callView';
import { saveIndexSnapshot, snapshotFileOf } from '../../../src/core/trace/index/indexSnapshot';
import { decodeLine, readTrace } from '../../../src/core/trace/format/reader';
import { loadIndexSnapshot, TraceIndex } from '../../../src/core/trace/index/traceIndex';
import { validateTraceEvent } from '../../../src/core/trace/format/validate';
import { serializeTraceEvent } from '../../../src/core/trace/format/writer';
import { sampleImagineRun, sampleShadowRun } from '../../builders/samples';
import { cliTarget } from './cliTarget';
import { serveTarget } from './serveTarget';
import { mcpTarget } from './mcpTarget';
import { modelFolderTarget } from './modelFolderTarget';
import { numbersTarget } from './numbersTarget';
import { writePathTarget } from './writePathTarget';
import { terminalTextTarget } from './terminalTextTarget';
import { codeUnits, insertion, mutatedJson, mutatedText, mutatedTexts } from './mutate';

/**
 * The fuzz targets of the reliability suite: every parser of outside input, fed generated and
 * mutated inputs. The promise each checks: no exception escapes, and every failure is either data
 * (a parse error with its protocol code, a skipped line or record with its reason) or a coded
 * {@link StudioError}. The same targets run with a few hundred inputs in mocha and 100,000 in the
 * bench (`npm run bench -- reliability`).
 */
export interface FuzzTarget {
  name: string;
  /** The property; `scratch` is a folder the target may write files into. */
  property(scratch: string): fc.IRawProperty<unknown[]>;
  /** Share of the suite's inputs this target runs (default 1): a target that starts processes runs fewer. */
  share?: number;
  /**
   * Starts a process (an MCP server, the policy host, the trainer, a program a command runs): the
   * end-to-end tier fuzzes it (test/e2e/reliability-fuzz-processes.test.ts), the unit tier the rest.
   */
  startsProcesses?: boolean;
  /** Starts what the property needs (a server, a policy host), before `property` is called. */
  setup?(scratch: string): Promise<void>;
  /** Stops it, and checks what must hold after all the inputs. */
  teardown?(): Promise<void>;
}

/** Inputs a target runs when the suite runs `runs` per parser. */
export function runsFor(target: FuzzTarget, runs: number): number {
  return Math.max(Math.min(runs, 5), Math.round(runs * (target.share ?? 1)));
}

/** A thrown value as a coded StudioError; anything else fails the property, with what was thrown. */
function asCoded(err: unknown): StudioError {
  if (err instanceof StudioError && /^[A-Z][A-Z0-9_]+$/.test(err.code)) return err;
  throw new Error(
    `an uncoded exception escaped: ${err instanceof Error ? `${err.name}: ${err.message}\n${err.stack}` : String(err)}`,
  );
}

/** Runs `fn`: its result, or the coded error it threw; any other exception fails the property. */
export async function codedOrNothing<T>(fn: () => T | Promise<T>): Promise<T | StudioError> {
  try {
    return await fn();
  } catch (err) {
    return asCoded(err);
  }
}

/** {@link codedOrNothing} for code that does not wait. */
function syncCodedOrNothing<T>(fn: () => T): T | StudioError {
  try {
    return fn();
  } catch (err) {
    return asCoded(err);
  }
}

const REPO = path.resolve(__dirname, '..', '..', '..', '..');
const fixture = (...p: string[]) => readFileSync(path.join(REPO, ...p), 'utf8');

// Valid inputs the mutations start from.
const ACTS = [
  formatToolCalls([{ name: 'get_order_details', arguments: { order_id: '#W2611340' } }]),
  'Let me look.' +
    formatToolCalls([
      { name: 'find_user_id_by_email', arguments: { email: 'mia@example.com' } },
      { name: 'get_weather', arguments: { city: 'Oslo', unit: 'C' } },
    ]),
  '<think>The user wants a refund.</think>' +
    formatToolCalls([
      { name: 'refund', arguments: { amount: 12.5, items: ['a', 'b'], note: null } },
    ]),
  'Your order is on its way.',
];
const REHEARSALS = [
  formatRehearsal('{"order_id": "#W1", "status": "pending", "items": [{"id": 1, "price": 4.5}]}'),
  formatRehearsal('[1, 2, {"a": null}]', 'The tool lists ids.'),
  formatRehearsal('{"error": "USER_NOT_FOUND"}'),
];
const TRACE_EVENTS = [...sampleShadowRun().events, ...sampleImagineRun().events];
const TRACE_LINES = TRACE_EVENTS.map((e) => serializeTraceEvent(e));
const ANNOTATION_EVENTS: AnnotationEvent[] = [
  {
    v: 1,
    type: 'mark',
    ts: '2026-11-29T12:00:00.000Z',
    id: 'a1',
    author: 'ana',
    callId: 'e1.t2.c1',
    episodeId: 'e1',
    tool: 'get_order_details',
    kind: 'hallucinated_value',
    severity: 'major',
    path: '$.status',
    note: 'guessed pending',
  },
  {
    v: 1,
    type: 'accept',
    ts: '2026-11-29T12:00:01.000Z',
    id: 'a2',
    author: 'ana',
    callId: 'e1.t1.c1',
    note: 'close enough',
  },
  {
    v: 1,
    type: 'edit',
    ts: '2026-11-29T12:00:02.000Z',
    id: 'a1',
    author: 'bo',
    changes: { severity: 'critical', path: null },
  },
  { v: 1, type: 'delete', ts: '2026-11-29T12:00:03.000Z', id: 'a2', author: 'bo' },
];
const ANNOTATION_LINES = ANNOTATION_EVENTS.map((e) => serializeAnnotationEvent(e));
const TASKS_DIR = path.join(REPO, 'examples', 'tasks');
const TASK_TEXTS = readdirSync(TASKS_DIR)
  .filter((f) => f.endsWith('.task.json'))
  .map((f) => readFileSync(path.join(TASKS_DIR, f), 'utf8'));
const TASKS = TASK_TEXTS.map((t) => JSON.parse(t) as JsonValue);
const ENVACE_TEXT = fixture('test', 'fixtures', 'import', 'envace-sample.json');
const ENVACE = JSON.parse(ENVACE_TEXT) as JsonValue[];
const CHAT_LINES = fixture('test', 'fixtures', 'import', 'chat-sample.jsonl')
  .split('\n')
  .filter((l) => l.trim() !== '');
const CHAT = CHAT_LINES.flatMap((l) => {
  try {
    return [JSON.parse(l) as JsonValue];
  } catch {
    return [];
  }
});

const actCodes: readonly string[] = ACT_PARSE_ERROR_CODES;
/** Valid outputs with what only Python's JSON and strip take: literals, 1e999, Unicode whitespace. */
const ACTS_ENVACE = [
  ...ACTS,
  '\n<tool_call>\n\u3000{"name": "a\u0085", "arguments": {"x": NaN, "y": [Infinity, -Infinity, 1e999]}}\u2028\n</tool_call>',
];
const REHEARSALS_ENVACE = [
  ...REHEARSALS,
  '\n<execution_result>\n\u00a0{"mean": NaN, "max": -1e999, "s": "\\ud800"}\n</execution_result>',
];
const rehearsalCodes: readonly string[] = REHEARSAL_PARSE_ERROR_CODES;

/** Text soup and mutated valid outputs: what a policy might write. */
const policyText = (valid: readonly string[]) =>
  fc.oneof(
    { weight: 3, arbitrary: mutatedTexts(valid) },
    {
      weight: 1,
      arbitrary: fc.array(fc.oneof(insertion, codeUnits), { maxLength: 30 }).map((p) => p.join('')),
    },
  );

/** A line of a trace or annotations file: valid, mutated as text, or mutated as JSON. */
function fileLine(valid: readonly string[], values: readonly JsonValue[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...valid) },
    { weight: 2, arbitrary: mutatedTexts(valid, 2) },
    {
      weight: 2,
      arbitrary: mutatedJson(values, 2).map((v) => {
        try {
          return JSON.stringify(v) ?? 'null';
        } catch {
          return '[[[';
        }
      }),
    },
  );
}

/** A whole file of such lines, with or without its last newline. */
const fileOf = (line: fc.Arbitrary<string>) =>
  fc
    .tuple(fc.array(line, { maxLength: 10 }), fc.boolean())
    .map(([lines, endNewline]) => lines.join('\n') + (endNewline && lines.length ? '\n' : ''));

/** Every task an importer produced must itself be a valid task. */
function assertImportValid(result: ImportResult | StudioError): void {
  if (result instanceof StudioError) return;
  for (const t of result.tasks) {
    const fault = findTaskFault(t.task);
    assert.equal(fault, undefined, `an imported task is invalid: ${JSON.stringify(fault)}`);
  }
  for (const s of result.skipped) assert.equal(typeof s.reason, 'string');
}

/** An import is then written as `rehearse import` writes it: no exception there either (a value 5,000 deep once overflowed the stack). */
async function importedAndWritten(
  result: ImportResult | StudioError,
  scratch: string,
): Promise<void> {
  assertImportValid(result);
  if (result instanceof StudioError) return;
  const out = path.join(scratch, 'import');
  await fs.rm(out, { recursive: true, force: true });
  await writeImport(result, out);
}

/** The fuzz targets, one per parser of outside input. */
export function fuzzTargets(): FuzzTarget[] {
  return [
    {
      name: 'act parser',
      property: () =>
        fc.property(policyText(ACTS), (text) => {
          const r = parseActOutput(text);
          if (r.kind === 'error') assert.ok(actCodes.includes(r.error.code), r.error.code);
          else if (r.kind === 'calls')
            for (const c of r.calls)
              assert.ok(
                typeof c.name === 'string' &&
                  c.name !== '' &&
                  typeof c.arguments === 'object' &&
                  c.arguments !== null,
              );
          else assert.equal(r.kind, 'final');
        }),
    },
    {
      name: 'rehearsal parser',
      property: () =>
        fc.property(policyText(REHEARSALS), (text) => {
          const r = parseRehearsalOutput(text);
          if (!r.ok) assert.ok(rehearsalCodes.includes(r.error.code), r.error.code);
          else
            assert.ok(Array.isArray(r.value) || (typeof r.value === 'object' && r.value !== null));
        }),
    },
    {
      name: 'act parser (envace dialect)',
      property: () =>
        fc.property(policyText(ACTS_ENVACE), (text) => {
          const r = parseActOutput(text, { dialect: 'envace' });
          if (r.kind === 'error') assert.ok(actCodes.includes(r.error.code), r.error.code);
          // Whatever EnvACE's Python accepts must survive a JSON trace unchanged.
          else if (r.kind === 'calls')
            for (const c of r.calls)
              assert.ok(
                isFiniteJson(c.arguments) && typeof JSON.stringify(c.arguments) === 'string',
                JSON.stringify(c.arguments),
              );
        }),
    },
    {
      name: 'rehearsal parser (envace dialect)',
      property: () =>
        fc.property(policyText(REHEARSALS_ENVACE), (text) => {
          const r = parseRehearsalOutput(text, { dialect: 'envace' });
          if (!r.ok)
            assert.ok(
              [...rehearsalCodes, ...ENVACE_REHEARSAL_PARSE_ERROR_CODES].includes(r.error.code),
              r.error.code,
            );
          else
            assert.ok(
              isFiniteJson(r.value) && typeof JSON.stringify(r.value) === 'string',
              JSON.stringify(r.value),
            );
        }),
    },
    {
      name: 'trace line decoder',
      property: () =>
        fc.property(
          fileLine(TRACE_LINES, TRACE_EVENTS as unknown as JsonValue[]),
          fc.boolean(),
          (line, terminated) => {
            const bytes = Buffer.from(line, 'utf8');
            const d = decodeLine({
              line: 1,
              offset: 0,
              bytes,
              length: bytes.length,
              terminated,
              oversized: false,
            });
            if (d.ok === true) assert.ok(validateTraceEvent(d.event).ok);
            else if (d.ok === false) assert.equal(typeof d.reason, 'string');
          },
        ),
    },
    {
      name: 'trace reader and explorer index (files)',
      property: (scratch) =>
        fc.asyncProperty(
          fileOf(fileLine(TRACE_LINES, TRACE_EVENTS as unknown as JsonValue[])),
          async (text) => {
            const file = path.join(scratch, 'trace.jsonl');
            await fs.writeFile(file, text);
            const read = await codedOrNothing(() => readTrace(file));
            const index = await codedOrNothing(() => TraceIndex.build(file));
            if (read instanceof StudioError || index instanceof StudioError)
              assert.fail(
                `a file that exists must be readable: ${String(read instanceof StudioError ? read.message : (index as StudioError).message)}`,
              );
            // The explorer's index sees what the reader sees: the same events, the same skipped lines.
            assert.equal(index.eventCount, read.events);
            assert.equal(index.skipped.length + (index.tornLastLine ? 1 : 0), read.skipped.length);
            for (const call of index.calls())
              await codedOrNothing(() => loadCallView(index, call.callId));
          },
        ),
    },
    {
      name: 'saved trace index (files)',
      property: (scratch) => {
        // One valid saved index of a sample trace, made on first use; inputs are changes to its bytes.
        const file = path.join(scratch, '.rehearsal', 'runs', 'fuzz', 'trace.jsonl');
        let saved: Promise<Buffer> | undefined;
        const valid = () =>
          (saved ??= (async () => {
            await fs.mkdir(path.dirname(file), { recursive: true });
            await fs.writeFile(file, sampleShadowRun().text());
            return fs.readFile(await saveIndexSnapshot(await TraceIndex.build(file)));
          })());
        const change = fc.oneof(
          fc
            .array(
              fc.tuple(
                fc.double({ min: 0, max: 1, noNaN: true }),
                fc.integer({ min: 0, max: 255 }),
              ),
              { minLength: 1, maxLength: 8 },
            )
            .map((edits) => (b: Buffer) => {
              const out = Buffer.from(b);
              for (const [at, value] of edits)
                out[Math.min(out.length - 1, Math.floor(at * out.length))] = value;
              return out;
            }),
          fc
            .double({ min: 0, max: 1, noNaN: true })
            .map((at) => (b: Buffer) => b.subarray(0, Math.floor(at * b.length))),
          fc
            .tuple(
              fc.double({ min: 0, max: 1, noNaN: true }),
              fc.uint8Array({ minLength: 1, maxLength: 64 }),
            )
            .map(([at, bytes]) => (b: Buffer) => {
              const cut = Math.floor(at * b.length);
              return Buffer.concat([b.subarray(0, cut), bytes, b.subarray(cut)]);
            }),
        );
        return fc.asyncProperty(change, async (mutate) => {
          await fs.writeFile(snapshotFileOf(file), mutate(await valid()));
          // Never an exception: a saved index that does not check out is ignored.
          const loaded = await codedOrNothing(() => loadIndexSnapshot(file));
          if (loaded instanceof StudioError)
            assert.fail(`the loader threw ${loaded.code}: it must ignore what it cannot use`);
          const index = loaded?.index ?? (await TraceIndex.build(file));
          // A saved index that still loads only points inside the trace: every call opens or fails with a code.
          for (const call of index.calls())
            await codedOrNothing(() => loadCallView(index, call.callId));
          for (const e of index.episodes) index.turnsOf(e).forEach((t) => index.callsOf(t));
          await codedOrNothing(() => index.refresh());
        });
      },
    },
    {
      name: 'task loader',
      property: (scratch) =>
        fc.asyncProperty(
          fc.oneof(
            mutatedJson(TASKS, 3).map((v) => ({ value: v })),
            mutatedTexts(TASK_TEXTS, 3).map((text) => ({ text })),
          ),
          async (input) => {
            if ('value' in input) {
              const r = syncCodedOrNothing(() => parseTask(input.value, 'fuzz.task.json'));
              if (r instanceof StudioError) assert.equal(r.code, 'TASK_INVALID');
              return;
            }
            const file = path.join(scratch, 'fuzz.task.json');
            await fs.writeFile(file, input.text);
            const r = await codedOrNothing(() => loadTaskFile(file));
            if (r instanceof StudioError) assert.equal(r.code, 'TASK_INVALID');
          },
        ),
    },
    {
      name: 'envace importer',
      property: (scratch) =>
        fc.asyncProperty(
          fc.oneof(
            mutatedJson([ENVACE.slice(0, 2) as JsonValue], 3).map((v) => {
              try {
                return JSON.stringify(v) ?? '';
              } catch {
                return '[[';
              }
            }),
            mutatedJson(ENVACE, 3).map((v) => {
              try {
                return `${JSON.stringify(v)}\n${JSON.stringify(ENVACE[0])}`;
              } catch {
                return '[[';
              }
            }),
            mutatedText(ENVACE_TEXT, 3),
          ),
          (text) =>
            importedAndWritten(
              syncCodedOrNothing(() => importEnvaceText(text, 'fuzz.json')),
              scratch,
            ),
        ),
    },
    {
      name: 'chat importer',
      property: (scratch) =>
        fc.asyncProperty(
          fc.array(
            fc.oneof(
              fc.constantFrom(...CHAT_LINES),
              mutatedTexts(CHAT_LINES, 3),
              mutatedJson(CHAT, 3).map((v) => {
                try {
                  return JSON.stringify(v) ?? '';
                } catch {
                  return '[[';
                }
              }),
            ),
            { minLength: 1, maxLength: 4 },
          ),
          (lines) =>
            importedAndWritten(
              syncCodedOrNothing(() => importChatText(lines.join('\n'), 'fuzz.jsonl')),
              scratch,
            ),
        ),
    },
    {
      name: 'annotation reader (files)',
      property: (scratch) =>
        fc.asyncProperty(
          fileOf(fileLine(ANNOTATION_LINES, ANNOTATION_EVENTS as unknown as JsonValue[])),
          async (text) => {
            const file = path.join(scratch, 'annotations.jsonl');
            await fs.writeFile(file, text);
            const set = await codedOrNothing(() => readAnnotations(file));
            if (set instanceof StudioError)
              assert.fail(`a file that exists must be readable: ${set.message}`);
            for (const a of set.all())
              assert.ok(a.verdict === 'error' || a.verdict === 'acceptable');
            for (const s of set.skipped) assert.equal(typeof s.reason, 'string');
          },
        ),
    },
    cliTarget,
    serveTarget,
    mcpTarget,
    modelFolderTarget,
    numbersTarget,
    writePathTarget,
    terminalTextTarget,
  ];
}

/** What running one target found. */
export interface FuzzOutcome {
  name: string;
  runs: number;
  failed: boolean;
  /** fast-check's report: the seed, the shrunk counterexample and the error. */
  report?: string;
  ms: number;
}

/** Runs one target for `numRuns` inputs; reports instead of throwing. */
export async function runFuzzTarget(
  target: FuzzTarget,
  scratch: string,
  numRuns: number,
  seed?: number,
): Promise<FuzzOutcome> {
  const t0 = performance.now();
  await target.setup?.(scratch);
  let details: fc.RunDetails<unknown[]>;
  try {
    details = await fc.check(target.property(scratch), {
      numRuns,
      ...(seed !== undefined ? { seed } : {}),
      endOnFailure: false,
    });
  } catch (err) {
    await target.teardown?.().catch(() => undefined);
    throw err;
  }
  // A failure's report comes first; what must hold after the inputs is checked only after a pass.
  if (details.failed) await target.teardown?.().catch(() => undefined);
  else await target.teardown?.();
  const out: FuzzOutcome = {
    name: target.name,
    runs: details.numRuns,
    failed: details.failed,
    ms: performance.now() - t0,
  };
  if (details.failed) out.report = failureReport(details);
  return out;
}

const REPORT_CHARS = 2000;

/** A short report of a failure: seed and path to replay it, the input (cut), the error (cut). */
function failureReport(details: fc.RunDetails<unknown[]>): string {
  let input: string;
  try {
    input = fc.stringify(details.counterexample);
  } catch {
    input = '(too deeply nested to print)';
  }
  const error =
    details.errorInstance instanceof Error
      ? details.errorInstance.message
      : String(details.errorInstance);
  const cut = (s: string) =>
    s.length > REPORT_CHARS ? `${s.slice(0, REPORT_CHARS)}… (${s.length} chars)` : s;
  return `failed after ${details.numRuns} inputs (seed ${details.seed}, path ${JSON.stringify(details.counterexamplePath)})\ninput: ${cut(input)}\nerror: ${cut(error)}`;
}
