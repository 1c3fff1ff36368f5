// `rehearse import otlp` on fixtures written by real instrumentation (test/fixtures/otlp/README.md):
// the exact calls, ids, arguments, results, error flags and answers of each producer, what is
// recovered from execute_tool spans, and bad input, coded, with the rest imported.
import * as assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { JsonObject } from '../../src/core/base/json';
import { OTLP_FAULT_CODES } from '../../src/core/otlp/codes';
import { importOtlpData } from '../../src/core/otlp/otlpImport';
import { emptyOtlpData, MAX_ATTRIBUTE_CHARS, readOtlpJson } from '../../src/core/otlp/otlpJson';
import { studioRoot } from '../../src/core/base/studioRoot';
import { readReplayRecording } from '../../src/core/env/replayRecording';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import type { CallActualEvent, TraceEvent, TurnEvent } from '../../src/core/trace/format/schema';
import { replayTrace } from '../../src/core/runner/replay';
import { rehearseResult, resultText, ScriptedPolicy } from '../builders/scriptedPolicy';
import { FIXTURES } from '../support/servers';
import { cliWrites } from '../support/cli';

const OTLP = path.join(FIXTURES, 'otlp');
const fixture = (name: string) => path.join(OTLP, name);

const USER = 'What is the weather in Paris, and can you book a table for 4 at Chez Lu?';
const ANSWER = 'It is 18 °C and cloudy in Paris. Chez Lu is fully booked, so no table was booked.';
const CALLS = [
  { callId: 'call_W3ath3rPar1s', name: 'get_weather', arguments: { city: 'Paris' } },
  {
    callId: 'call_B00kChezLu',
    name: 'book_table',
    arguments: { restaurant: 'Chez Lu', people: 4 },
  },
];

const cli = cliWrites;

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'otlp-import-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Imports files through the CLI; returns the written run's events and the command's output. */
async function importFiles(files: string[]) {
  const out = path.join(tmp, 'out');
  const result = await cli(['import', 'otlp', ...files, '--out', out]);
  const runs = await readdir(path.join(out, 'runs')).catch(() => []);
  const events: TraceEvent[] = runs.length
    ? (await readTraceEvents(path.join(out, 'runs', runs[0], 'trace.jsonl'))).events
    : [];
  return { ...result, out, events };
}

const turns = (events: TraceEvent[]) => events.filter((e): e is TurnEvent => e.type === 'turn');
const actuals = (events: TraceEvent[]) =>
  events.filter((e): e is CallActualEvent => e.type === 'call.actual');

describe('import otlp: fixtures of real instrumentation', () => {
  const cases = [
    {
      name: 'openai-v2 2.4b0, current conventions (gen_ai.input/output.messages, execute_tool spans)',
      files: ['openai-v2-latest.json'],
      policy: 'fixture-openai-v2-latest',
      results: [
        { text: ['{"city":"Paris","temp_c":18,"sky":"cloudy"}'], isError: false },
        { text: ['{"error": "Chez Lu is fully booked for 4"}'], isError: true },
      ],
      tools: ['get_weather', 'book_table'],
    },
    {
      name: 'openai-v2 2.1b0, older event form (gen_ai.*.message and gen_ai.choice as log records)',
      files: ['openai-v2-events.json', 'openai-v2-events.logs.json'],
      policy: 'fixture-openai-v2-events',
      // Nothing in this trace says which call failed: no execute_tool span, no error flag.
      results: [
        { text: ['{"city": "Paris", "temp_c": 18, "sky": "cloudy"}'] },
        { text: ['{"error": "Chez Lu is fully booked for 4"}'] },
      ],
      tools: ['get_weather', 'book_table'],
      note: /no tool span in the trace: error flags not recorded/,
    },
    {
      name: 'Pydantic AI 2.68.0 (instrumentation version 5): the error flag only on the span',
      files: ['pydantic-ai.json'],
      policy: 'fixture-pydantic-ai',
      results: [
        { text: ['{"city":"Paris","temp_c":18,"sky":"cloudy"}'], isError: false },
        { text: ['Chez Lu is fully booked for 4'], isError: true },
      ],
      tools: ['get_weather', 'book_table'],
      descriptions: ['Current weather in a city.', 'Book a restaurant table.'],
    },
    {
      name: 'OpenLLMetry (opentelemetry-instrumentation-openai 0.62.4): current conventions on openai.chat spans',
      files: ['openllmetry.json'],
      policy: 'fixture-openllmetry',
      results: [
        { text: ['{"city": "Paris", "temp_c": 18, "sky": "cloudy"}'] },
        { text: ['{"error": "Chez Lu is fully booked for 4"}'] },
      ],
      tools: ['get_weather', 'book_table'],
      descriptions: ['Current weather in a city.', 'Book a restaurant table.'],
      note: /no tool span in the trace: error flags not recorded/,
    },
    {
      name: 'OpenAI Agents SDK 0.24.0 through OpenInference 2.6.0: tool spans without call ids, the error redacted',
      files: ['openai-agents.json'],
      policy: 'fixture-openai-agents',
      results: [
        // The tool span's own output, not the Python repr the conversation shows the model.
        { text: ['{"city": "Paris", "temp_c": 18, "sky": "cloudy"}'], isError: false },
        { text: ['An error occurred while running the tool. Please try again.'], isError: true },
      ],
      tools: ['get_weather', 'book_table'],
      descriptions: ['Current weather in a city.', 'Book a restaurant table.'],
      notes: [
        /tool span \w+ \(get_weather\) has no call id; joined to call call_W3ath3rPar1s by name and arguments/,
        /tool span \w+ \(book_table\) has no call id; joined to call call_B00kChezLu by name and arguments/,
        /book_table \(call_B00kChezLu\): failed, but the trace holds no more of the error than its result and the span status "Error running tool \(non-fatal\)/,
      ],
    },
    {
      name: 'Vercel AI SDK 6.0.333 telemetry: ai.prompt.messages, ai.response.*, ai.toolCall spans',
      files: ['vercel-ai.json'],
      policy: 'fixture-vercel-ai',
      results: [
        { text: ['{"city":"Paris","temp_c":18,"sky":"cloudy"}'], isError: false },
        // The tool's own words: the SDK shows the model the error text, the span fails.
        { text: ['Chez Lu is fully booked for 4'], isError: true },
      ],
      tools: ['get_weather', 'book_table'],
      descriptions: ['Current weather in a city.', 'Book a restaurant table.'],
    },
  ];
  for (const c of cases)
    it(`${c.name}: the exact calls, ids, arguments, results, error flags and answer`, async () => {
      const r = await importFiles(c.files.map(fixture));
      assert.equal(r.code, 0, r.err.join('\n'));
      const run = r.events[0];
      assert.ok(run.type === 'run');
      assert.deepEqual(run.policy, { kind: 'recorded', id: c.policy });
      const episode = r.events.find((e) => e.type === 'episode');
      assert.ok(episode?.type === 'episode');
      assert.equal(episode.instruction, USER);
      assert.equal(episode.system, 'You are a concierge.');
      assert.deepEqual(
        episode.tools?.map((t) => t.name),
        c.tools,
      );
      if (c.descriptions)
        assert.deepEqual(
          episode.tools?.map((t) => t.description),
          c.descriptions,
        );
      const [act, final] = turns(r.events);
      assert.equal(turns(r.events).length, 2);
      assert.equal(act.user, USER);
      assert.deepEqual(act.parse, { kind: 'calls', calls: CALLS });
      assert.deepEqual(final.parse, { kind: 'final', answer: ANSWER });
      assert.deepEqual(
        actuals(r.events).map((a) => [a.callId, a.tool, a.response]),
        CALLS.map((call, k) => [call.callId, call.name, c.results[k]]),
      );
      const end = r.events.find((e) => e.type === 'episode.end');
      assert.ok(end?.type === 'episode.end');
      assert.equal(end.answer, ANSWER);
      assert.equal(end.status, 'completed');
      const notes = c.notes ?? (c.note ? [c.note] : []);
      assert.equal(r.err.length, notes.length, r.err.join('\n'));
      notes.forEach((note, k) => assert.match(r.err[k], note));
      // The task and its replay recording, as `import chat` writes them.
      const taskId = episode.taskId;
      const recording = await readReplayRecording(
        path.join(r.out, 'recordings', `${taskId}.replay.json`),
      );
      assert.deepEqual(
        recording.calls.map((k) => [k.tool, k.arguments, k.response]),
        CALLS.map((call, k) => [call.name, call.arguments, c.results[k]]),
      );
      const task = JSON.parse(
        await readFile(path.join(r.out, 'tasks', `${taskId}.task.json`), 'utf8'),
      ) as JsonObject;
      assert.deepEqual(task['turns'], [{ user: USER }]);
      assert.deepEqual(task['tags'], ['imported', 'otlp']);
    });

  it('the logs of the event form alone, without their spans, still hold the conversation', async () => {
    const r = await importFiles([fixture('openai-v2-events.logs.json')]);
    assert.equal(r.code, 0, r.err.join('\n'));
    assert.deepEqual(
      turns(r.events).map((t) => t.parse),
      [
        { kind: 'calls', calls: CALLS },
        { kind: 'final', answer: ANSWER },
      ],
    );
    const episode = r.events.find((e) => e.type === 'episode');
    assert.ok(episode?.type === 'episode');
    assert.match(episode.taskId, /^otlp-[0-9a-f]{32}$/);
  });

  it('the spans of the event form alone, without their logs file, hold no conversation', async () => {
    const r = await importFiles([fixture('openai-v2-events.json')]);
    assert.equal(r.code, 1);
    const traceId = spansOf(await fixtureRequest('openai-v2-events.json'))[0]['traceId'] as string;
    assert.ok(
      r.err.some((l) => l.includes(`OTLP_NO_CONVERSATION: trace ${traceId} holds no GenAI`)),
    );
    assert.deepEqual(await readdir(r.out).catch(() => []), [
      'examples.jsonl',
      'recordings',
      'tasks',
    ]);
  });
});

describe('import otlp: an imported episode replays with a policy', () => {
  it('each call is rehearsed on the recorded conversation and scored against its recorded actual', async () => {
    const r = await importFiles([fixture('pydantic-ai.json')]);
    assert.equal(r.code, 0, r.err.join('\n'));
    const [runId] = await readdir(path.join(r.out, 'runs'));
    // A policy that predicts the weather exactly and a booking that succeeds.
    const policy = new ScriptedPolicy({
      kind: 'endpoint',
      act: () => {
        throw new Error('replay never acts');
      },
      rehearse: (_request, n) =>
        rehearseResult(
          resultText(n === 1 ? { city: 'Paris', temp_c: 18, sky: 'cloudy' } : { booked: true }),
        ),
    });
    const summary = await replayTrace({
      source: path.join(r.out, 'runs', runId, 'trace.jsonl'),
      runsDir: path.join(tmp, 'replays'),
      policy,
    });
    assert.equal(summary.status, 'completed');
    const { events } = await readTraceEvents(summary.traceFile);
    const fidelity = events.flatMap((e) =>
      e.type === 'fidelity'
        ? [[e.callId, e.scores?.exactMatch, e.scores?.errorAgreement] as const]
        : [],
    );
    assert.deepEqual(fidelity, [
      ['call_W3ath3rPar1s', true, true],
      ['call_B00kChezLu', false, false],
    ]);
    // The rehearse prompt of the second call holds the recorded conversation up to it.
    const prompt = policy.rehearsals[1].messages.map((m) => m.content).join('\n');
    assert.ok(prompt.includes(USER));
    assert.ok(prompt.includes('book_table'));
  });
});

/** A fixture's one request line, parsed, to change as a test needs. */
async function fixtureRequest(name: string): Promise<JsonObject> {
  return JSON.parse((await readFile(fixture(name), 'utf8')).trim()) as JsonObject;
}

function spansOf(request: JsonObject): JsonObject[] {
  const out: JsonObject[] = [];
  for (const rs of request['resourceSpans'] as JsonObject[])
    for (const ss of rs['scopeSpans'] as JsonObject[]) out.push(...(ss['spans'] as JsonObject[]));
  return out;
}

function attribute(span: JsonObject, key: string): JsonObject | undefined {
  return (span['attributes'] as JsonObject[]).find((a) => a['key'] === key);
}

function importText(text: string, file = 'input.json') {
  const data = emptyOtlpData();
  readOtlpJson(text, file, data);
  return importOtlpData(data);
}

describe('import otlp: what the trace holds elsewhere', () => {
  it('a tool span without its call id is joined to its call by name and arguments, and says so', async () => {
    const request = await fixtureRequest('pydantic-ai.json');
    for (const span of spansOf(request))
      span['attributes'] = (span['attributes'] as JsonObject[]).filter(
        (a) => a['key'] !== 'gen_ai.tool.call.id',
      );
    const imported = importText(JSON.stringify(request));
    const [{ episode }] = imported.episodes;
    assert.deepEqual(
      episode.turns[0].calls.map((c) => [c.id, c.result, c.isError]),
      [
        ['call_W3ath3rPar1s', '{"city":"Paris","temp_c":18,"sky":"cloudy"}', false],
        ['call_B00kChezLu', 'Chez Lu is fully booked for 4', true],
      ],
    );
    assert.equal(
      episode.notes.filter((n) =>
        /has no call id; joined to call call_\w+ by name and arguments/.test(n),
      ).length,
      2,
    );
  });

  it('a failure the conversation shows as generic text gets the span’s own error message', async () => {
    const request = await fixtureRequest('openai-v2-latest.json');
    for (const span of spansOf(request)) {
      const input = attribute(span, 'gen_ai.input.messages');
      if (!input) continue;
      const value = input['value'] as JsonObject;
      value['stringValue'] = (value['stringValue'] as string).replace(
        '{\\"error\\": \\"Chez Lu is fully booked for 4\\"}',
        'An error occurred while running the tool. Please try again.',
      );
    }
    const [{ episode }] = importText(JSON.stringify(request)).episodes;
    const book = episode.turns[0].calls[1];
    assert.deepEqual([book.result, book.isError], ['Chez Lu is fully booked for 4', true]);
    assert.ok(
      episode.notes.some((n) =>
        n.includes('the conversation shows "An error occurred while running the tool.'),
      ),
      episode.notes.join('\n'),
    );
  });

  it('reads a whole pretty-printed document as well as one request per line', async () => {
    const request = await fixtureRequest('pydantic-ai.json');
    const imported = importText(JSON.stringify(request, null, 2));
    assert.deepEqual(imported.faults, []);
    assert.deepEqual(
      imported.episodes[0].episode.turns[0].calls.map((c) => c.id),
      ['call_W3ath3rPar1s', 'call_B00kChezLu'],
    );
  });
});

describe('import otlp: bad input is coded, with its line and span, and the rest imported', () => {
  it('a line that is not JSON, a span with no trace, a duplicate span', async () => {
    const line = (await readFile(fixture('pydantic-ai.json'), 'utf8')).trim();
    const orphan = await fixtureRequest('openai-v2-latest.json');
    const orphanSpan = spansOf(orphan)[0];
    orphanSpan['traceId'] = '';
    const text = [line, '{"resourceSpans": [', JSON.stringify(orphan), line].join('\n');
    const imported = importText(text);
    const faults = imported.faults.map((f) => [f.code, f.line, f.spanId]);
    assert.deepEqual(faults.slice(0, 2), [
      ['OTLP_LINE_NOT_JSON', 2, undefined],
      ['OTLP_SPAN_NO_TRACE', 3, orphanSpan['spanId']],
    ]);
    // Every span of line 1 comes again on line 4: each copy is named, the first kept.
    const duplicates = imported.faults.filter((f) => f.code === 'OTLP_SPAN_DUPLICATE');
    assert.deepEqual(
      duplicates.map((f) => f.spanId).sort(),
      spansOf(JSON.parse(line) as JsonObject)
        .map((s) => s['spanId'])
        .sort(),
    );
    assert.ok(duplicates.every((f) => f.line === 4));
    // The pydantic trace, once; the openai-v2 trace, less its first span.
    assert.deepEqual(
      imported.episodes.map((e) => e.episode.turns[0].calls.map((c) => c.id)),
      [CALLS.map((c) => c.callId), CALLS.map((c) => c.callId)],
    );
  });

  it('a cycle in parent ids names each span on it; the episode is still imported', async () => {
    const request = await fixtureRequest('pydantic-ai.json');
    const [a, b] = spansOf(request);
    a['parentSpanId'] = b['spanId'];
    b['parentSpanId'] = a['spanId'];
    const imported = importText(JSON.stringify(request));
    assert.deepEqual(
      imported.faults.map((f) => [f.code, f.spanId]).sort(),
      [
        ['OTLP_PARENT_CYCLE', a['spanId']],
        ['OTLP_PARENT_CYCLE', b['spanId']],
      ].sort(),
    );
    assert.equal(imported.episodes.length, 1);
  });

  it('an attribute past the size limit is dropped with its span id; the span is kept', async () => {
    const request = await fixtureRequest('openai-v2-latest.json');
    const span = spansOf(request)[0];
    (span['attributes'] as JsonObject[]).push({
      key: 'huge',
      value: { stringValue: 'x'.repeat(MAX_ATTRIBUTE_CHARS + 1) },
    });
    const imported = importText(JSON.stringify(request));
    assert.deepEqual(
      imported.faults.map((f) => [f.code, f.line, f.spanId]),
      [['OTLP_ATTRIBUTE_TOO_LARGE', 1, span['spanId']]],
    );
    assert.match(imported.faults[0].message, /attribute huge of span \w+: 8 Mi characters/);
    assert.deepEqual(
      imported.episodes[0].episode.turns[0].calls.map((c) => c.id),
      CALLS.map((c) => c.callId),
    );
  });

  it('messages that are not JSON: that span is not read, the others are', async () => {
    const request = await fixtureRequest('pydantic-ai.json');
    const agent = spansOf(request).find((s) => attribute(s, 'pydantic_ai.all_messages'))!;
    (attribute(agent, 'pydantic_ai.all_messages')!['value'] as JsonObject)['stringValue'] =
      '[{"role": "user", "parts": [';
    const imported = importText(JSON.stringify(request));
    assert.deepEqual(
      imported.faults.map((f) => [f.code, f.spanId]),
      [['OTLP_MESSAGE_NOT_JSON', agent['spanId']]],
    );
    // The last chat span holds the same conversation.
    assert.equal(imported.episodes[0].episode.answer, ANSWER);
  });

  it('Vercel AI SDK: a last step whose prompt is not JSON leaves the results to the ai.toolCall spans', async () => {
    const request = await fixtureRequest('vercel-ai.json');
    const steps = spansOf(request).filter((s) => attribute(s, 'ai.prompt.messages'));
    const last = steps.find((s) => attribute(s, 'ai.response.text'))!;
    (attribute(last, 'ai.prompt.messages')!['value'] as JsonObject)['stringValue'] = '[{"role":';
    const imported = importText(JSON.stringify(request));
    assert.deepEqual(
      imported.faults.map((f) => [f.code, f.spanId]),
      [['OTLP_MESSAGE_NOT_JSON', last['spanId']]],
    );
    // The first step's prompt and tool calls; each result and flag from its ai.toolCall span.
    const [{ episode }] = imported.episodes;
    assert.deepEqual(
      episode.turns.map((t) => t.calls.map((c) => [c.id, c.result, c.isError])),
      [
        [
          ['call_W3ath3rPar1s', '{"city":"Paris","temp_c":18,"sky":"cloudy"}', false],
          ['call_B00kChezLu', 'Chez Lu is fully booked for 4', true],
        ],
      ],
    );
    assert.equal(episode.answer, undefined);
    assert.deepEqual(episode.notes, [
      "book_table (call_B00kChezLu): no answer in the conversation; the span's error message is kept",
    ]);
  });

  it('arguments that are not JSON make their trace a coded fault, not an episode', async () => {
    const request = await fixtureRequest('openai-v2-latest.json');
    for (const span of spansOf(request))
      for (const key of ['gen_ai.input.messages', 'gen_ai.output.messages']) {
        const value = attribute(span, key)?.['value'] as JsonObject | undefined;
        if (value)
          value['stringValue'] = (value['stringValue'] as string).replace(
            '"arguments":{"city":"Paris"}',
            '"arguments":"{city: Paris"',
          );
      }
    const imported = importText(JSON.stringify(request));
    assert.deepEqual(
      imported.faults.map((f) => [f.code, f.traceId]),
      [['OTLP_MESSAGE_NOT_JSON', spansOf(request)[0]['traceId']]],
    );
    assert.deepEqual(imported.episodes, []);
  });

  it('through the CLI: faults on stderr with file, line and span; nothing written outside --out', async () => {
    const input = path.join(tmp, 'input');
    await writeFile(
      input + '.json',
      ['not json', (await readFile(fixture('pydantic-ai.json'), 'utf8')).trim()].join('\n'),
    );
    // A resourceSpans field whose length runs past the end of the file.
    await writeFile(input + '.pb', Buffer.from([0x0a, 0x05, 0x01]));
    const r = await importFiles([input + '.json', input + '.pb']);
    assert.equal(r.code, 0);
    assert.deepEqual(r.err, [
      `${input}.json:1: OTLP_LINE_NOT_JSON: the line is not JSON; it is skipped`,
      `${input}.pb:1: OTLP_PROTOBUF_INVALID: not an OTLP ExportTraceServiceRequest: index out of range`,
    ]);
    assert.deepEqual((await readdir(tmp)).sort(), ['input.json', 'input.pb', 'out']);
    assert.deepEqual((await readdir(r.out)).sort(), [
      'examples.jsonl',
      'recordings',
      'runs',
      'tasks',
    ]);
  });

  it('docs/otlp.md lists every fault code with its text, and no other', async () => {
    const doc = await readFile(path.join(studioRoot(), 'docs', 'otlp.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `(OTLP_[A-Z_]+)` \| (.*) \|$/gm)].map((m) => [m[1], m[2]]);
    assert.deepEqual(rows, Object.entries(OTLP_FAULT_CODES));
  });
});
