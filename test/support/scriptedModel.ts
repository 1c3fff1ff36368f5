import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import { OnnxEngine } from '../../src/core/policy/onnx/engine';
import { GREEDY } from '../../src/core/policy/sampling/sampling';
import { parseTask } from '../../src/core/tasks/format/loader';
import type { LoadedTask, TaskLimits } from '../../src/core/tasks/format/taskFile';
import { formatToolCalls } from '../../src/core/protocol/actParser';
import type { ActParseErrorCode, REHEARSAL_PARSE_ERROR_CODES } from '../../src/core/protocol/codes';
import { parseRehearsalOutput } from '../../src/core/protocol/rehearsalParser';
import { buildRehearsePrompt } from '../../src/core/protocol/rehearsePrompt';
import type { ChatMessage, ToolDefinition } from '../../src/core/protocol/types';
import { toFunctionSchema } from '../../src/core/protocol/types';
import {
  actualToolText,
  PARSE_ERROR_TOOL_NAME,
  parseErrorToolText,
  rehearsedToolResult,
  simulatorErrorText,
} from '../../src/core/runner/toolMessages';
import { parseActOutput } from '../../src/core/protocol/actParser';
import { fixtureServer } from './servers';
import { cachedModel, runTrainer, testModelSeed } from './testModels';

// The scripted test model: a tiny policy trained by the project's own trainer until greedy decoding
// reproduces a script exactly. Each probe task's user message names a case; the model answers it with
// the case's scripted act text, rehearses `probe {"case": ...}` with the case's scripted rehearsal,
// and ends with "Done." once the tool (or the feedback on a parse error) has answered. That makes
// every parse-error path reachable end to end with real inference.

/** The final answer the model gives after a tool message. */
export const FINAL_ANSWER = 'Done.';

/** Act texts that fail to parse, by code. */
export const ACT_ERROR_CASES: Record<ActParseErrorCode, { case: string; text: string }> = {
  NO_TOOL_CALL_FOUND: { case: 'nocall', text: 'I could use <tool_call> here but I will not.' },
  JSON_DECODE_ERROR: {
    case: 'badjson',
    text: '\n<tool_call>\n{"name": "probe", "arguments": {"case": }}\n</tool_call>',
  },
  NO_ARGUMENTS: { case: 'noargs', text: '\n<tool_call>\n{"name": "probe"}\n</tool_call>' },
  NON_SERIALIZABLE_ARGUMENTS: {
    case: 'hugenum',
    text: '\n<tool_call>\n{"name": "probe", "arguments": {"n": 1e999}}\n</tool_call>',
  },
  INVALID_TOOL_NAME: {
    case: 'noname',
    text: '\n<tool_call>\n{"name": "", "arguments": {}}\n</tool_call>',
  },
};

/** Rehearsal texts that fail to parse, by code (the act itself is a valid `probe` call). */
export const REHEARSAL_ERROR_CASES: Record<
  (typeof REHEARSAL_PARSE_ERROR_CODES)[number],
  { case: string; text: string }
> = {
  EMPTY_SIMULATOR_OUTPUT: { case: 'empty', text: '' },
  NO_EXECUTION_RESULT_TAG_FOUND: { case: 'notag', text: 'The probe answers ok.' },
  EXECUTION_RESULT_TAG_MALFORMED: { case: 'unclosed', text: '\n<execution_result>\n{"ok": true}' },
  SIMULATOR_JSON_DECODE_ERROR: {
    case: 'badresult',
    text: '\n<execution_result>\n{ok: true}\n</execution_result>',
  },
  INVALID_EXECUTION_RESULT_TYPE: {
    case: 'string',
    text: '\n<execution_result>\n"ok"\n</execution_result>',
  },
};

/** The case whose act and rehearsal both parse, and whose rehearsal equals the actual response. */
export const OK_CASE = {
  case: 'ok',
  text: '\n<execution_result>\n{"case": "ok", "ok": true}\n</execution_result>',
};
/** A rehearsal that predicts an error where the real tool succeeds: grading must follow the actual response. */
export const REFUSED_CASE = {
  case: 'refused',
  text: '\n<execution_result>\n{"error": "probe refused"}\n</execution_result>',
};
/** The probe tool answers this case after 30 s (episode timeouts, cancellation). */
export const SLOW_CASE = {
  case: 'slow',
  text: '\n<execution_result>\n{"case": "slow", "ok": true}\n</execution_result>',
};
/** One act with two calls (`first`, `second`): the calls-per-turn limit. */
export const TWO_CALLS_CASE = 'two';

/** The act text of a valid call of `probe`. */
export function probeCall(probeCase: string): string {
  return formatToolCalls([{ name: 'probe', arguments: { case: probeCase } }]);
}

/** The act text the script gives for a case's user message. */
export function scriptedActText(probeCase: string): string {
  const error = Object.values(ACT_ERROR_CASES).find((c) => c.case === probeCase);
  if (error) return error.text;
  if (probeCase === TWO_CALLS_CASE)
    return formatToolCalls([
      { name: 'probe', arguments: { case: 'first' } },
      { name: 'probe', arguments: { case: 'second' } },
    ]);
  return probeCall(probeCase);
}

/** How often the user message repeats its case: a tiny model trained for seconds reads a word that fills a good part of its prompt far sooner than one it must find. */
export const CASE_REPEATS = 24;

/** The user message of a case. */
export function caseMessage(probeCase: string): string {
  return `case: ${probeCase}.${` ${probeCase}`.repeat(CASE_REPEATS)}`;
}

/** A task that plays one case against the real probe server (checks: a state check, a call check, an answer check). */
export function probeTask(
  probeCase: string,
  limits?: TaskLimits,
  id = `probe-${probeCase.replace(/_/g, '-')}`,
): LoadedTask {
  const task = parseTask(
    {
      version: 1,
      id,
      seed: 3,
      turns: [{ user: caseMessage(probeCase) }],
      servers: { probe: fixtureServer('probe.mjs') },
      checks: [
        { id: 'probed', kind: 'state', server: 'probe', path: '$.calls[0]', equals: probeCase },
        {
          id: 'called',
          kind: 'call',
          tool: 'probe',
          args: { case: { equals: probeCase } },
          ok: true,
        },
        { id: 'answered', kind: 'answer', contains: ['done'] },
      ],
      ...(limits ? { limits } : {}),
    },
    id,
  );
  return {
    task,
    file: path.join(path.dirname(fixtureServer('probe.mjs').args![0]), `${id}.task.json`),
    baseDir: process.cwd(),
  };
}

/** Writes probe task files (for the CLI); returns their paths. */
export async function writeProbeTasks(
  dir: string,
  cases: string[],
  limits?: TaskLimits,
): Promise<string[]> {
  await fs.mkdir(dir, { recursive: true });
  return Promise.all(
    cases.map(async (c) => {
      const { task } = probeTask(c, limits);
      const file = path.join(dir, `${task.id}.task.json`);
      await fs.writeFile(file, JSON.stringify(task, null, 2));
      return file;
    }),
  );
}

/** One dataset row (docs/dataset-format.md). */
export interface ScriptRow {
  id: string;
  role: 'act' | 'rehearse';
  source: 'demonstration';
  messages: ChatMessage[];
  tools?: ReturnType<typeof toFunctionSchema>[];
  target: string;
}

/** The probe server's tools and its actual response text per case, read from the real server. */
async function probeWorld(
  cases: string[],
): Promise<{ tools: ToolDefinition[]; actual: Map<string, string> }> {
  const env = await openEnvironment(
    { probe: fixtureServer('probe.mjs') },
    { baseDir: process.cwd() },
  );
  try {
    await env.startEpisode(0);
    const actual = new Map<string, string>();
    for (const c of cases) {
      const outcome = await env.call('probe', { case: c });
      actual.set(c, actualToolText(outcome.response, outcome.error));
    }
    return { tools: env.tools(), actual };
  } finally {
    await env.close();
  }
}

/**
 * The script as dataset rows, built with the runner's own prompt code from the real probe server's
 * tools and answers: exactly the prompts a run will show the model.
 */
export async function scriptRows(): Promise<ScriptRow[]> {
  const rehearsed = [...Object.values(REHEARSAL_ERROR_CASES), OK_CASE, REFUSED_CASE, SLOW_CASE];
  const { tools, actual } = await probeWorld([
    ...rehearsed.filter((c) => c !== SLOW_CASE).map((c) => c.case),
    'first',
  ]);
  const schemas = tools.map(toFunctionSchema);
  const rows: ScriptRow[] = [];
  const act = (id: string, messages: ChatMessage[], target: string) =>
    rows.push({ id, role: 'act', source: 'demonstration', messages, tools: schemas, target });
  const rehearse = (
    id: string,
    history: ChatMessage[],
    latestText: string,
    args: { case: string },
    target: string,
  ) =>
    rows.push({
      id,
      role: 'rehearse',
      source: 'demonstration',
      messages: buildRehearsePrompt({
        tools,
        history,
        latestText,
        call: { name: 'probe', arguments: args },
      }),
      target,
    });

  for (const { case: c, text } of Object.values(ACT_ERROR_CASES)) {
    const user: ChatMessage = { role: 'user', content: caseMessage(c) };
    act(`${c}/act`, [user], text);
    const parse = parseActOutput(text);
    if (parse.kind !== 'error') throw new Error(`script: ${c} parses as ${parse.kind}`);
    act(
      `${c}/after-feedback`,
      [
        user,
        { role: 'assistant', content: text },
        {
          role: 'tool',
          name: PARSE_ERROR_TOOL_NAME,
          content: parseErrorToolText(parse.error.code, parse.error.message, text),
        },
      ],
      FINAL_ANSWER,
    );
  }
  for (const { case: c, text } of rehearsed) {
    const user: ChatMessage = { role: 'user', content: caseMessage(c) };
    const call = probeCall(c);
    act(`${c}/act`, [user], call);
    rehearse(`${c}/rehearse`, [user], call, { case: c }, text);
    if (c === SLOW_CASE.case) continue; // its tool never answers in time
    const assistant: ChatMessage = { role: 'assistant', content: call };
    // Shadow: the episode goes on with the actual response.
    act(
      `${c}/after-actual`,
      [user, assistant, { role: 'tool', name: 'probe', content: actual.get(c)! }],
      FINAL_ANSWER,
    );
    // Imagine: with the rehearsal (or, in feedback mode, the parse error of the rehearsal).
    const parsed = parseRehearsalOutput(text);
    const imagined = parsed.ok
      ? rehearsedToolResult(parsed.value).text![0]
      : simulatorErrorText(parsed.error.code, parsed.error.message);
    if (imagined !== actual.get(c))
      act(
        `${c}/after-rehearsal`,
        [user, assistant, { role: 'tool', name: 'probe', content: imagined }],
        FINAL_ANSWER,
      );
  }
  const user: ChatMessage = { role: 'user', content: caseMessage(TWO_CALLS_CASE) };
  const twoCalls = scriptedActText(TWO_CALLS_CASE);
  act(`${TWO_CALLS_CASE}/act`, [user], twoCalls);
  rehearse(
    `${TWO_CALLS_CASE}/rehearse-first`,
    [user],
    twoCalls,
    { case: 'first' },
    '\n<execution_result>\n{"case": "first", "ok": true}\n</execution_result>',
  );
  return rows;
}

/**
 * How the scripted model is made (part of its cache key). One layer is enough to read a repeated
 * case word, and trains about twice as fast as two; these settings reproduce the whole script after
 * 200-260 steps (30-40 s on 2 idle cores).
 */
export const SCRIPT_TRAINING = {
  tokenizer: { vocab_size: 1024 },
  architecture: {
    hidden_size: 64,
    intermediate_size: 128,
    num_hidden_layers: 1,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    max_position_embeddings: 4096,
  },
  optim: { lr: 0.015, schedule: 'cosine', warmup_steps: 10, min_lr_ratio: 0.1 },
  train: { batch_size: 8, micro_batch_size: 4 },
  /** Steps of the first round of training; each later round adds `moreSteps`, until greedy decoding reproduces every row. */
  firstSteps: 260,
  moreSteps: 100,
  maxRounds: 5,
  /** `$REHEARSAL_TEST_MODEL_SEED`, 0 when unset: each seed is cached as a model of its own. */
  seed: testModelSeed(),
};

/** What the self-check asks (part of the cache key: a model cached under a weaker check is made again). */
const SELF_CHECK = 'greedy, every row: its target, then the end token';

/** Greedy outputs of a model folder for every row that differ from their target, then the end token. */
export async function scriptMismatches(
  dir: string,
  rows: readonly ScriptRow[],
): Promise<{ id: string; expected: string; got: string }[]> {
  const engine = await OnnxEngine.load(dir, 'cpu');
  try {
    const out: { id: string; expected: string; got: string }[] = [];
    for (const row of rows) {
      const prompt = engine.encode(
        engine.renderChat(
          row.messages,
          row.role === 'act'
            ? row.tools!.map((t) => ({
                name: t.function.name,
                description: t.function.description,
                parameters: t.function.parameters,
              }))
            : [],
        ),
      );
      // No stop string: the row's text must end with the end token, as training taught it, so that
      // every caller sees the script, with or without `</execution_result>` as a stop string (an
      // endpoint's request has none; issue 39).
      const result = await engine.generate({
        promptIds: prompt,
        n: 1,
        maxTokens: 64,
        sampling: GREEDY,
      });
      const { text, finish } = result.samples[0];
      const got = finish === 'eos' ? text : `${text} [${finish}: no end token]`;
      if (got !== row.target) out.push({ id: row.id, expected: row.target, got });
    }
    return out;
  } finally {
    await engine.dispose();
  }
}

/**
 * The scripted model's folder, trained once per machine (cached by the hash of its rows, its training
 * settings and the trainer's sources). Training continues in rounds until greedy decoding through the
 * studio's own decoder reproduces every row; a script it cannot learn is an error naming the rows.
 */
export async function scriptedModel(
  log: (line: string) => void = () => undefined,
): Promise<string> {
  const rows = await scriptRows();
  return cachedModel(
    'scripted',
    { rows, training: SCRIPT_TRAINING, selfCheck: SELF_CHECK },
    async (dir) => {
      const work = path.join(dir, 'work');
      await fs.mkdir(work, { recursive: true });
      const rowsFile = path.join(work, 'rows.jsonl');
      await fs.writeFile(rowsFile, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const t = SCRIPT_TRAINING;
      const set = (key: string, value: unknown) => ['--set', `${key}=${JSON.stringify(value)}`];
      await runTrainer([
        'tokenizer',
        ...set('out_dir', path.join(work, 'tokenizer')),
        ...set('tokenizer.row_files', [rowsFile]),
        ...set('tokenizer.vocab_size', t.tokenizer.vocab_size),
      ]);
      await runTrainer([
        'init',
        ...set('out_dir', path.join(work, 'init')),
        ...set('model.tokenizer', path.join(work, 'tokenizer')),
        ...set('model.architecture', t.architecture),
        ...set('seed', t.seed),
      ]);
      let mismatches: { id: string; expected: string; got: string }[] = [];
      for (
        let round = 1, steps = t.firstSteps;
        round <= t.maxRounds;
        round++, steps += t.moreSteps
      ) {
        const started = Date.now();
        await runTrainer([
          'sft',
          ...set('model.path', path.join(work, 'init')),
          ...set('out_dir', path.join(work, 'sft')),
          ...set('data.train', [rowsFile]),
          ...set('seed', t.seed),
          ...set('threads', 1),
          ...set('optim', t.optim),
          ...set('train.batch_size', t.train.batch_size),
          ...set('train.micro_batch_size', t.train.micro_batch_size),
          ...set('train.steps', steps),
          ...set('train.checkpoint_every', steps),
          ...set('train.keep_checkpoints', 1),
          ...set('train.log_every', 50),
        ]);
        mismatches = await scriptMismatches(path.join(work, 'sft', 'final'), rows);
        log(
          `scripted model: round ${round} (${steps} steps, ${((Date.now() - started) / 1000).toFixed(1)} s): ${rows.length - mismatches.length}/${rows.length} rows reproduced`,
        );
        if (mismatches.length === 0) break;
      }
      if (mismatches.length) {
        throw new Error(
          `The scripted test model did not learn its script in ${t.maxRounds} rounds; rows still wrong:\n${mismatches.map((m) => `${m.id}: expected ${JSON.stringify(m.expected)}, got ${JSON.stringify(m.got)}`).join('\n')}`,
        );
      }
      const final = path.join(work, 'sft', 'final');
      for (const entry of await fs.readdir(final))
        await fs.rename(path.join(final, entry), path.join(dir, entry));
      await fs.rm(work, { recursive: true, force: true });
    },
  );
}
