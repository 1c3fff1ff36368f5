import type { JsonObject, JsonValue } from '../../base/json';
import { ID_PATTERN } from '../../trace/format/ids';
import { isJsonObject, outsideNumber } from '../../base/json';
import type { ToolResultContent } from '../../fidelity/responseValue';
import { outsideErrorCode } from '../../protocol/codes';
import { parsePythonJson } from '../../protocol/pythonJsonLoads';
import type { CheckSpec, JudgeCheck } from '../format/taskFile';
import type { ConversationReading } from './conversation';
import {
  RecordError,
  completeTools,
  derivedCallChecks,
  examplePairs,
  loadableImport,
  parseConversation,
  parseTools,
  safeId,
} from './conversation';
import type { ImportResult, ImportedTask } from './types';

/**
 * The EnvACE error code a tool answer carries: the `code` of a `{"error_tool_call": {"code", ...}}`
 * payload (simulate_core/_error.py), verbatim and bounded (codes.ts `outsideErrorCode`); `null` for
 * a flat `{"error_tool_call": "..."}` (an act parse error, tool_parser.py), undefined when the
 * answer is no EnvACE error.
 */
export function envaceAnswerErrorCode(content: string): string | null | undefined {
  const parsed = parsePythonJson(content);
  if (!parsed.ok || !isJsonObject(parsed.value) || !('error_tool_call' in parsed.value))
    return undefined;
  const payload = parsed.value['error_tool_call'];
  return (isJsonObject(payload) ? outsideErrorCode(payload['code']) : undefined) ?? null;
}

/**
 * A tool answer as EnvACE reads it (envs.py, lines 332-335: `json.loads` of the content, an
 * `error_tool_call` key marks a failed call): its text verbatim, flagged as an error when it is one,
 * so that its code survives replay and `export --format envace` byte for byte.
 */
function envaceToolAnswer(content: string): ToolResultContent {
  return envaceAnswerErrorCode(content) === undefined
    ? { text: [content] }
    : { text: [content], isError: true };
}

/** EnvACE's datasets are read by Python's `json.load` (mcp_tool.py, line 207): NaN and Infinity are JSON there. */
const ENVACE_READING: ConversationReading = {
  parseJson: parsePythonJson,
  toolAnswer: envaceToolAnswer,
};

/**
 * Reads an EnvACE checklist dataset file: a JSON list of records (or one record per line), each with
 * `extra_info.tools` (OpenAI function schemas, often as a JSON string), `extra_info.messages` (the
 * reference conversation), `extra_info.interaction_kwargs.checklist_list` (checklists: per user
 * turn, items with `question`, `focus_on`, `pass_condition`, `failure_examples`, `evidence`,
 * `weight`), and `extra_info.original_index`. Bad records are reported and skipped.
 */
export function importEnvaceText(text: string, sourceName: string): ImportResult {
  const records = readRecords(text);
  const result: ImportResult = { tasks: [], skipped: [] };
  if (!records.ok) {
    result.skipped.push({ index: -1, reason: records.error });
    return result;
  }
  const usedIds = new Set<string>();
  records.value.forEach((record, index) => {
    try {
      const imported = loadableImport(importRecord(record, index, sourceName, usedIds));
      // Only a record that is imported takes its id: a skipped one leaves it to the next.
      usedIds.add(imported.task.id);
      result.tasks.push(imported);
    } catch (err) {
      if (!(err instanceof RecordError)) throw err;
      result.skipped.push({ index, reason: err.message });
    }
  });
  return result;
}

function readRecords(text: string): { ok: true; value: unknown[] } | { ok: false; error: string } {
  const whole = parsePythonJson(text.trim());
  if (whole.ok) {
    if (Array.isArray(whole.value)) return { ok: true, value: whole.value };
    if (isJsonObject(whole.value) && Array.isArray(whole.value['data']))
      return { ok: true, value: whole.value['data'] };
    return { ok: true, value: [whole.value] };
  }
  // One record per line (JSONL); a line that is not JSON becomes a skipped record.
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  if (lines.length < 2)
    return { ok: false, error: `the file is neither a JSON list nor JSON lines (${whole.error})` };
  return {
    ok: true,
    value: lines.map((l) => {
      const p = parsePythonJson(l);
      return p.ok ? p.value : { __invalidJson: p.error };
    }),
  };
}

function importRecord(
  raw: unknown,
  index: number,
  sourceName: string,
  usedIds: Set<string>,
): ImportedTask {
  if (!isJsonObject(raw as JsonValue)) throw new RecordError('the record is not a JSON object');
  const record = raw as JsonObject;
  if (typeof record['__invalidJson'] === 'string')
    throw new RecordError(`the line is not valid JSON (${record['__invalidJson']})`);
  const extra = record['extra_info'];
  if (!isJsonObject(extra as JsonValue)) throw new RecordError('"extra_info" is missing');
  const info = extra as JsonObject;
  const tools = parseTools(info['tools'], parsePythonJson);
  const messages = info['messages'] ?? info['all_messages'] ?? record['messages'];
  if (messages === undefined) throw new RecordError('"extra_info.messages" is missing');
  const conversation = parseConversation(messages, ENVACE_READING);
  if (!conversation.system && Array.isArray(record['prompt'])) {
    const sys = (record['prompt'] as JsonValue[]).find(
      (m) => isJsonObject(m) && m['role'] === 'system',
    ) as JsonObject | undefined;
    if (sys && typeof sys['content'] === 'string') conversation.system = sys['content'];
  }
  const judge = judgeChecks(info['interaction_kwargs'], conversation.turns.length);
  // The first id the record gives as text or number (an object's toString is not called: it may throw).
  const rawId = String(
    [info['original_index'], info['index'], record['uuid']].find(
      (v) => typeof v === 'string' || typeof v === 'number',
    ) ?? index,
  );
  let id = safeId(`envace-${rawId}`);
  for (let k = 2; usedIds.has(id); k++) id = safeId(`envace-${rawId}-${k}`);
  const allTools = completeTools(
    tools,
    conversation.calls.map((c) => ({ name: c.tool })),
  );
  const dataSource = typeof record['data_source'] === 'string' ? record['data_source'] : 'recorded';
  const server = safeId(dataSource).replace(/[:]/g, '-').slice(0, 64) || 'recorded';
  // The record's checklist is its reward: calls derived from the conversation stand in only when it
  // has none (both together would count each call twice under --reward envace).
  const checks: CheckSpec[] = judge.length ? judge : derivedCallChecks(conversation.callsByTurn);
  return {
    index,
    task: {
      version: 1,
      id,
      description: `Imported from ${sourceName}, record ${index}.`,
      domain: dataSource,
      tags: ['imported', 'envace'],
      ...(conversation.system ? { system: conversation.system } : {}),
      turns: conversation.turns,
      servers: { [server]: { replay: `../recordings/${id}.replay.json` } },
      tools: allTools.map((t) => t.name),
      checks,
      reference: { turns: conversation.reference },
    },
    recording: {
      version: 1,
      source: `${sourceName}#${index}`,
      tools: allTools,
      calls: conversation.calls,
    },
    pairs: examplePairs(conversation.calls, parsePythonJson),
  };
}

/** Judge items of the first checklist, per user turn, with EnvACE's field names kept. */
function judgeChecks(kwargs: JsonValue | undefined, turnCount: number): JudgeCheck[] {
  if (kwargs === undefined || kwargs === null) return [];
  if (!isJsonObject(kwargs))
    throw new RecordError('"extra_info.interaction_kwargs" is not an object');
  const list = kwargs['checklist_list'];
  if (list === undefined) return [];
  if (!Array.isArray(list) || (list.length && !Array.isArray(list[0])))
    throw new RecordError('"checklist_list" must be a list of checklists, each a list of turns');
  const checklist = (list[0] ?? []) as JsonValue[];
  if (checklist.length > turnCount)
    throw new RecordError(
      `"checklist_list" has ${checklist.length} turns but the conversation has ${turnCount} user turns`,
    );
  const out: JudgeCheck[] = [];
  const ids = new Set<string>();
  checklist.forEach((items, turn) => {
    if (!Array.isArray(items)) throw new RecordError(`checklist turn ${turn} is not a list`);
    items.forEach((item, k) => {
      if (!isJsonObject(item) || typeof item['question'] !== 'string')
        throw new RecordError(`checklist item ${turn}.${k} has no "question"`);
      const weight = outsideNumber(item['weight'] ?? 1);
      if (!Number.isFinite(weight) || weight < 0)
        throw new RecordError(`checklist item ${turn}.${k} has a weight that is not a number ≥ 0`);
      const evidence = Array.isArray(item['evidence'])
        ? item['evidence']
            .map((e) =>
              isJsonObject(e) && typeof e['snippet'] === 'string'
                ? e['snippet']
                : typeof e === 'string'
                  ? e
                  : '',
            )
            .filter(Boolean)
        : [];
      const failures = Array.isArray(item['failure_examples'])
        ? item['failure_examples'].map((f) => (typeof f === 'string' ? f : JSON.stringify(f)))
        : [];
      // An item's own id (the studio's export writes its check's) when it is a usable, unused one.
      const own = typeof item['id'] === 'string' ? item['id'] : '';
      const id = ID_PATTERN.test(own) && !ids.has(own) ? own : `judge-t${turn}-${k + 1}`;
      ids.add(id);
      out.push({
        id,
        kind: 'judge',
        question: item['question'],
        ...(typeof item['focus_on'] === 'string' ? { focus_on: item['focus_on'] } : {}),
        ...(typeof item['pass_condition'] === 'string'
          ? { pass_condition: item['pass_condition'] }
          : {}),
        ...(typeof item['required_for_next_turn'] === 'boolean'
          ? { required_for_next_turn: item['required_for_next_turn'] }
          : {}),
        ...(failures.length ? { failure_examples: failures } : {}),
        ...(evidence.length ? { evidence } : {}),
        turn,
        weight,
      });
    });
  });
  return out;
}

/** How many recorded tool answers of an import carry each EnvACE error code (flat act-parse payloads as `error_tool_call`). */
export function envaceErrorCounts(result: ImportResult): Map<string, number> {
  const counts = new Map<string, number>();
  for (const t of result.tasks) {
    for (const c of t.recording.calls) {
      if (!c.response.isError) continue;
      const code = envaceAnswerErrorCode((c.response.text ?? []).join('\n'));
      if (code === undefined) continue;
      const key = code ?? 'error_tool_call';
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}
