// The runner in every mode with a real ONNX policy (the scripted test model, served by the policy
// host process) against a real MCP server (the probe fixture): shadow, imagine, imagine with audit,
// private rehearsal in sequence and in parallel, and replay of recorded traces. Every trace is read
// back through the studio's reader (schema-valid, nothing skipped) and checked for the event order of
// docs/trace-format.md.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { loadTaskFile } from '../../src/core/tasks/format/loader';
import { ReferencePolicy } from '../../src/core/policy/referencePolicy';
import {
  describeAttempts,
  MAX_ATTEMPTS_BYTES,
  MEMORY_SYSTEM_PROMPT,
} from '../../src/core/runner/privateRehearsal';
import type { EpisodeTranscript } from '../../src/core/tasks/checks/transcript';
import { replayTrace } from '../../src/core/runner/replay';
import type {
  CallActualEvent,
  CallRehearsalEvent,
  EpisodeEndEvent,
  FidelityEvent,
  TraceEvent,
  TurnEvent,
} from '../../src/core/trace/format/schema';
import {
  FINAL_ANSWER,
  OK_CASE,
  REFUSED_CASE,
  REHEARSAL_ERROR_CASES,
  probeCall,
  probeTask,
} from '../support/scriptedModel';
import { REPO } from '../support/servers';
import { RecordingPolicy, withoutSystemMessages } from '../support/recordingPolicy';
import { useRuns, useScriptedPolicy } from '../support/runnerFixture';
import { readCheckedTrace } from '../support/traceChecks';
import { mixSeed } from '../../src/core/base/random';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import { exportRows, readMemories } from '../../src/core/training/exportRows';
import type { EnvaceRecord } from '../../src/core/training/envaceExport';
import { exportEnvace } from '../../src/core/training/envaceExport';

const byType = <T extends TraceEvent['type']>(events: readonly TraceEvent[], type: T) =>
  events.filter((e): e is Extract<TraceEvent, { type: T }> => e.type === type);
const only = <T>(items: readonly T[], what: string): T => {
  assert.equal(items.length, 1, `one ${what}, got ${items.length}`);
  return items[0];
};
const ACTUAL_OK = (c: string) => JSON.stringify({ case: c, ok: true });

describe('runner: every mode with the scripted ONNX policy against a real MCP server', function () {
  this.timeout(120_000);
  const scripted = useScriptedPolicy();
  const { run, runsDir } = useRuns();

  it('shadow: rehearses each call before the tool runs, continues and grades on the actual response, never on the rehearsal', async () => {
    const policy = new RecordingPolicy(scripted());
    const { summary, trace } = await run(policy, [
      probeTask(OK_CASE.case),
      probeTask(REFUSED_CASE.case),
    ]);
    assert.equal(summary.status, 'completed');
    assert.equal(trace.run.mode, 'shadow');
    assert.deepEqual(trace.run.policy, {
      kind: 'onnx',
      id: scripted().info.id,
      device: 'cpu',
      devices: [{ device: 'cpu', ok: true }],
    });
    assert.deepEqual(
      trace.episodes.map((e) => [e.taskId, e.tools?.map((t) => t.name)]),
      [
        ['probe-ok', ['probe']],
        ['probe-refused', ['probe']],
      ],
    );

    for (const [episode, probeCase, rehearsal] of [
      ['e1', OK_CASE.case, { case: 'ok', ok: true }],
      ['e2', REFUSED_CASE.case, { error: 'probe refused' }],
    ] as const) {
      const events = trace.of(episode);
      assert.deepEqual(
        events.map((e) => e.type),
        ['episode', 'turn', 'call.rehearsal', 'call.actual', 'fidelity', 'turn', 'episode.end'],
        episode,
      );
      const [first, second] = byType(events, 'turn');
      assert.equal(first.text, probeCall(probeCase));
      assert.deepEqual(first.parse, {
        kind: 'calls',
        calls: [{ callId: `${episode}.t1.c1`, name: 'probe', arguments: { case: probeCase } }],
      });
      assert.deepEqual(only(byType(events, 'call.rehearsal'), 'rehearsal').result, {
        ok: true,
        value: rehearsal,
      });
      const actual = only(byType(events, 'call.actual'), 'actual');
      assert.deepEqual(
        [actual.source, actual.server, actual.response],
        ['mcp', 'probe', { text: [ACTUAL_OK(probeCase)] }],
      );
      assert.deepEqual(second.parse, { kind: 'final', answer: FINAL_ANSWER });
      // The second act re-encodes only the new suffix: the episode's KV cache covers the first prompt.
      assert.ok(
        second.tokens!.reused! > first.tokens!.prompt * 0.9,
        `reused ${second.tokens!.reused} of ${second.tokens!.prompt} (first prompt ${first.tokens!.prompt})`,
      );
      const end = only(byType(events, 'episode.end'), 'episode end');
      assert.deepEqual(
        [end.status, end.reward, end.success, end.answer],
        ['completed', 1, true, FINAL_ANSWER],
        JSON.stringify(end.checks),
      );
    }
    const fidelity = (e: string) => only(byType(trace.of(e), 'fidelity'), 'fidelity');
    assert.equal(fidelity('e1').scores?.exactMatch, true);
    assert.deepEqual(
      [fidelity('e2').scores?.exactMatch, fidelity('e2').scores?.errorAgreement],
      [false, false],
    );

    // What the policy was shown: tool messages carry the actual responses, never a rehearsal.
    const shown = policy.acts.flatMap((a) => a.messages);
    assert.deepEqual(
      shown.filter((m) => m.role === 'tool').map((m) => m.content),
      [ACTUAL_OK('ok'), ACTUAL_OK('refused')],
    );
    assert.ok(
      shown.every(
        (m) => !m.content.includes('probe refused') && !m.content.includes('<execution_result>'),
      ),
      'a rehearsal reached the act messages',
    );
    // Each rehearse prompt was made before its tool answered: it holds the conversation up to the call only.
    assert.ok(
      policy.rehearsals.every((r) => !r.messages.some((m) => m.content.includes('"ok":true'))),
    );
  });

  it("imagine: offers the task's tools, runs none, continues and grades on the rehearsal; state checks are not evaluated", async () => {
    const policy = new RecordingPolicy(scripted());
    const { summary, trace } = await run(
      policy,
      [probeTask(OK_CASE.case), probeTask(REFUSED_CASE.case)],
      { mode: 'imagine' },
    );
    assert.equal(summary.status, 'completed');
    assert.equal(trace.run.mode, 'imagine');
    assert.deepEqual(
      trace.episodes.map((e) => [e.mode, e.tools?.map((t) => t.name)]),
      [
        ['imagine', ['probe']],
        ['imagine', ['probe']],
      ],
    );
    assert.deepEqual(
      [trace.actuals.length, trace.fidelities.length],
      [0, 0],
      'no tool ran, so nothing was compared',
    );
    for (const episode of ['e1', 'e2'])
      assert.deepEqual(
        trace.of(episode).map((e) => e.type),
        ['episode', 'turn', 'call.rehearsal', 'turn', 'episode.end'],
      );
    // The episode continued on the imagined responses.
    assert.deepEqual(
      policy.acts
        .flatMap((a) => a.messages)
        .filter((m) => m.role === 'tool')
        .map((m) => m.content),
      ['{"case":"ok","ok":true}', '{"error":"probe refused"}'],
    );
    const verdicts = (e: EpisodeEndEvent) =>
      Object.fromEntries(e.checks!.map((c) => [c.id, c.passed]));
    const [ok, refused] = trace.ends;
    assert.deepEqual(verdicts(ok), { probed: null, called: true, answered: true });
    assert.match(ok.checks!.find((c) => c.id === 'probed')!.detail!, /not evaluated/);
    assert.deepEqual([ok.reward, ok.success], [1, true]);
    // Graded on the imagined error: the required call did not succeed in this imagined trajectory.
    assert.deepEqual(verdicts(refused), { probed: null, called: false, answered: true });
    assert.equal(refused.success, false);
  });

  it('imagine with audit: the real tool runs beside each rehearsal for comparison; the episode still continues on the rehearsal', async () => {
    const policy = new RecordingPolicy(scripted());
    const { trace } = await run(policy, [probeTask(REFUSED_CASE.case)], {
      mode: 'imagine',
      audit: true,
    });
    assert.deepEqual(
      trace.of('e1').map((e) => e.type),
      ['episode', 'turn', 'call.rehearsal', 'call.actual', 'fidelity', 'turn', 'episode.end'],
    );
    assert.deepEqual(only(trace.actuals, 'actual').response, { text: [ACTUAL_OK('refused')] });
    assert.equal(only(trace.fidelities, 'fidelity').scores?.errorAgreement, false);
    assert.deepEqual(policy.acts[1].messages.at(-1), {
      role: 'tool',
      name: 'probe',
      content: '{"error":"probe refused"}',
    });
    // The real server did receive the call (above), but the audit is for comparison only: the
    // episode is graded on its imagined trajectory, so its state item is not evaluated.
    assert.equal(trace.ends[0].checks!.find((c) => c.id === 'probed')!.passed, null);
  });

  it('private rehearsal in sequence: each imagined attempt sees the earlier ones; the memory conditions one committed shadow episode', async () => {
    const policy = new RecordingPolicy(scripted());
    const { summary, trace } = await run(policy, [probeTask(OK_CASE.case)], {
      mode: 'private',
      privateRehearsal: { budget: 2, order: 'sequential' },
    });
    assert.equal(trace.run.mode, 'private');
    assert.deepEqual(
      trace.episodes.map((e) => [e.episodeId, e.mode, e.role]),
      [
        ['e1', 'imagine', 'imagined'],
        ['e2', 'imagine', 'imagined'],
        ['e3', 'shadow', 'committed'],
      ],
    );
    assert.deepEqual(
      summary.episodes.map((e) => e.episodeId),
      ['e3'],
      'the summary counts the committed episode',
    );
    // The first imagined attempt is the scripted episode; the second is told about the first.
    assert.deepEqual(
      trace.of('e1').map((e) => e.type),
      ['episode', 'turn', 'call.rehearsal', 'turn', 'episode.end'],
    );
    const systemOf = (i: number) =>
      policy.acts[i].messages.find((m) => m.role === 'system')?.content ?? '';
    const acts = policy.acts.map((a, i) => ({ i, system: systemOf(i), session: a.session }));
    const e2Acts = acts.filter((a) => a.session?.startsWith('e2'));
    assert.ok(
      e2Acts.length > 0 &&
        e2Acts.every((a) =>
          a.system.includes('Your earlier imagined attempts at this task:\nAttempt 1:'),
        ),
      'e2 saw attempt 1',
    );
    assert.ok(
      acts.filter((a) => a.session?.startsWith('e1')).every((a) => a.system === ''),
      'e1 saw no earlier attempt',
    );
    // The memory: one act without tools over the attempts, then recorded on the committed episode.
    const memoryAct = policy.acts.find((a) => a.messages[0]?.content === MEMORY_SYSTEM_PROMPT);
    assert.ok(memoryAct, 'the policy was asked to condense its attempts');
    assert.deepEqual(memoryAct.tools, []);
    assert.match(memoryAct.messages[1].content, /Attempt 1:[\s\S]*Attempt 2:/);
    const committedEnd = trace.ends.find((e) => e.episodeId === 'e3')!;
    assert.equal(typeof committedEnd.memory, 'string');
    assert.ok(
      acts
        .filter((a) => a.session?.startsWith('e3'))
        .every((a) =>
          a.system.includes(
            `Rehearsal memory (from your private rehearsal of this task):\n${committedEnd.memory}`,
          ),
        ),
    );
    assert.ok(trace.ends.slice(0, 2).every((e) => e.memory === undefined));
  });

  it("private rehearsal: the memory is a system message of its own after the task's, and training rows keep it", async () => {
    // The runner's prompts carry system messages (the task's, the attempts', the memory); the model is
    // shown them without, so that every act but the memory's own is a row of its script.
    const policy = new RecordingPolicy(scripted(), { modelSees: withoutSystemMessages });
    const loaded = probeTask(OK_CASE.case);
    const task = { ...loaded, task: { ...loaded.task, system: 'You answer probe requests.' } };
    const { summary, trace } = await run(policy, [task], {
      mode: 'private',
      privateRehearsal: { budget: 2, order: 'sequential' },
    });
    const systems = (session: string) =>
      policy.acts
        .filter((a) => a.session?.startsWith(session))
        .map((a) => a.messages.filter((m) => m.role === 'system').map((m) => m.content));
    // The task's system prompt is never changed: a template that leaves it out (the minimal one)
    // still shows the policy its earlier attempts and its memory.
    assert.ok(systems('e1').every((s) => s.length === 1 && s[0] === 'You answer probe requests.'));
    assert.ok(
      systems('e2').every(
        (s) =>
          s.length === 2 &&
          s[0] === 'You answer probe requests.' &&
          s[1].startsWith('Your earlier imagined attempts at this task:\nAttempt 1:'),
      ),
    );
    const committed = only(
      trace.episodes.filter((e) => e.role === 'committed'),
      'committed episode',
    );
    assert.equal(committed.system, 'You answer probe requests.');
    assert.match(committed.context ?? '', /^Rehearsal memory \(from your private rehearsal/);
    assert.ok(systems('e3').every((s) => s.length === 2 && s[1] === committed.context));
    // The committed episode's act rows read what the policy read.
    const rows: DatasetRow[] = [];
    await exportRows([summary.traceFile], { actSource: 'demonstration', roles: ['act'] }, (r) =>
      rows.push(r),
    );
    const row = rows.find((r) => r.episode === committed.episodeId)!;
    assert.deepEqual(
      row.messages.filter((m) => m.role === 'system').map((m) => m.content),
      ['You answer probe requests.', committed.context],
    );
    // --memory-from: an episode without a memory is written again, read with its task's memory.
    const memories = await readMemories([summary.traceFile]);
    assert.deepEqual([...memories.entries()], [[task.task.id, [committed.context]]]);
    const withMemory: DatasetRow[] = [];
    await exportRows(
      [summary.traceFile],
      { actSource: 'demonstration', roles: ['act'], memories: (id) => memories.get(id) ?? [] },
      (r) => withMemory.push(r),
    );
    const plain = rows.filter((r) => r.episode === 'e1');
    const again = withMemory.filter((r) => r.episode === 'e1' && r.id.endsWith('/memory-1'));
    assert.equal(again.length, plain.length);
    assert.ok(plain.length > 0);
    for (const [i, r] of again.entries()) {
      assert.equal(r.target, plain[i].target);
      assert.deepEqual(r.messages, [
        plain[i].messages[0],
        { role: 'system', content: committed.context },
        ...plain[i].messages.slice(1),
      ]);
    }
    assert.equal(
      withMemory.filter((r) => r.episode === committed.episodeId).length,
      rows.filter((r) => r.episode === committed.episodeId).length,
      'an episode that read a memory is not written again',
    );
    // EnvACE's dataset of the committed episode holds the memory it read, after the system prompt.
    const records: EnvaceRecord[] = [];
    await exportEnvace([summary.traceFile], { onlySuccessful: false }, (r) => records.push(r));
    const record = only(records, 'EnvACE record');
    assert.deepEqual(
      record.messages.filter((m) => m.role === 'system').map((m) => m.content),
      ['You answer probe requests.', committed.context],
    );
  });

  it('private rehearsal with --memory attempts: the committed episode reads the attempts themselves, no condensation', async () => {
    const policy = new RecordingPolicy(scripted());
    const { trace } = await run(policy, [probeTask(OK_CASE.case)], {
      mode: 'private',
      privateRehearsal: { budget: 2, order: 'parallel', memory: 'attempts' },
    });
    assert.ok(
      !policy.acts.some((a) => a.messages[0]?.content === MEMORY_SYSTEM_PROMPT),
      'the policy was not asked to condense',
    );
    const committed = only(
      trace.episodes.filter((e) => e.role === 'committed'),
      'committed episode',
    );
    assert.match(
      committed.context ?? '',
      /^Rehearsal memory \(from your private rehearsal of this task\):\nAttempt 1:[\s\S]*\nAttempt 2:/,
    );
    const end = trace.ends.find((e) => e.episodeId === committed.episodeId)!;
    assert.ok(end.memory?.startsWith('Attempt 1:'));
  });

  it('private rehearsal in parallel: the imagined attempts start together, see none of each other, and decode identically on one host', async () => {
    const policy = new RecordingPolicy(scripted());
    const { trace } = await run(policy, [probeTask(OK_CASE.case)], {
      mode: 'private',
      privateRehearsal: { budget: 3, order: 'parallel' },
    });
    const imagined = trace.episodes.filter((e) => e.role === 'imagined').map((e) => e.episodeId);
    assert.deepEqual(imagined, ['e1', 'e2', 'e3']);
    const firstEnd = trace.events.findIndex((e) => e.type === 'episode.end');
    const starts = imagined.map((id) =>
      trace.events.findIndex((e) => e.type === 'episode' && e.episodeId === id),
    );
    assert.ok(
      starts.every((i) => i < firstEnd),
      'every imagined episode started before the first ended',
    );
    assert.ok(
      policy.acts.every(
        (a) => !a.messages.some((m) => m.content.includes('earlier imagined attempts')),
      ),
    );
    // Three concurrent greedy episodes on one host give the same texts as the scripted episode.
    const texts = (id: string) =>
      trace
        .of(id)
        .filter(
          (e): e is TurnEvent | CallRehearsalEvent =>
            e.type === 'turn' || e.type === 'call.rehearsal',
        )
        .map((e) => e.text);
    for (const id of imagined)
      assert.deepEqual(texts(id), [probeCall('ok'), OK_CASE.text, FINAL_ANSWER], id);
    assert.equal(trace.episodes.at(-1)!.role, 'committed');
  });

  it("private rehearsal with a rehearsal temperature: each imagined attempt samples with a seed of its own, the committed episode keeps the run's sampling", async () => {
    const policy = new RecordingPolicy(scripted());
    await run(policy, [probeTask(OK_CASE.case)], {
      mode: 'private',
      sampling: { act: { temperature: 0, seed: 7 }, rehearse: { temperature: 0, seed: 7 } },
      privateRehearsal: { budget: 2, order: 'parallel', temperature: 0.8 },
    });
    const sampling = (prefix: string) => [
      ...new Set(
        policy.acts
          .filter((a) => a.session?.startsWith(prefix))
          .map((a) => JSON.stringify(a.sampling)),
      ),
    ];
    const attempt = (n: number) => mixSeed(7, 'imagined act', n);
    assert.deepEqual(sampling('e1:'), [JSON.stringify({ temperature: 0.8, seed: attempt(1) })]);
    assert.deepEqual(sampling('e2:'), [JSON.stringify({ temperature: 0.8, seed: attempt(2) })]);
    assert.notEqual(attempt(1), attempt(2));
    assert.deepEqual(
      sampling('e3:'),
      [JSON.stringify({ temperature: 0, seed: 7 })],
      'the committed episode',
    );
    assert.ok(
      policy.rehearsals
        .filter((r) => r.session?.startsWith('e1:'))
        .every(
          (r) =>
            r.sampling?.temperature === 0.8 &&
            r.sampling.seed === mixSeed(7, 'imagined rehearse', 1),
        ),
    );
  });

  it("several episodes of one task (a GRPO group) sample with seeds of their own, derived from the run's, so that they differ", async () => {
    const policy = new RecordingPolicy(scripted());
    await run(policy, [probeTask(OK_CASE.case)], {
      episodesPerTask: 3,
      // top-k 1 keeps the sampled path (and its seeds) but decodes the script's greedy tokens, so
      // every episode makes its call and rehearses it whatever the model's weights.
      sampling: {
        act: { temperature: 1, topK: 1, seed: 5 },
        rehearse: { temperature: 1, topK: 1, seed: 6 },
      },
    });
    const seeds = (prefix: string, of: { session?: string; sampling?: { seed?: number } }[]) => [
      ...new Set(of.filter((a) => a.session?.startsWith(prefix)).map((a) => a.sampling?.seed)),
    ];
    const id = 'probe-' + OK_CASE.case.replace(/_/g, '-');
    assert.deepEqual(
      ['e1:', 'e2:', 'e3:'].map((e) => seeds(e, policy.acts)),
      [[5], [mixSeed(5, 'act', id, 1)], [mixSeed(5, 'act', id, 2)]],
    );
    assert.deepEqual(
      ['e1:', 'e2:', 'e3:'].map((e) => seeds(e, policy.rehearsals)),
      [[6], [mixSeed(6, 'rehearse', id, 1)], [mixSeed(6, 'rehearse', id, 2)]],
    );
    assert.equal(new Set([5, 6, ...[1, 2].map((k) => mixSeed(5, 'act', id, k))]).size, 4);
  });

  it('private rehearsal: the imagined attempts a prompt carries stay within their byte budget, however long they ran', () => {
    const long = (n: number): EpisodeTranscript => ({
      turns: [
        {
          user: 'Cancel order #W1.',
          calls: Array.from({ length: 40 }, (_, i) => ({
            name: 'get_order_details',
            arguments: { order_id: `#W${n}${i}` },
            outcome: { response: { text: [JSON.stringify({ items: 'x'.repeat(2000) })] } },
          })),
          answer: 'Done.',
        },
      ],
      snapshot: { ok: true, value: {} },
    });
    const text = describeAttempts([long(1), long(2), long(3), long(4)]);
    assert.ok(
      Buffer.byteLength(text, 'utf8') <= MAX_ATTEMPTS_BYTES,
      `${Buffer.byteLength(text, 'utf8')} bytes`,
    );
    const attempts = text.split('\n\n');
    assert.deepEqual(
      attempts.map((a) => a.split('\n')[0]),
      ['Attempt 1:', 'Attempt 2:', 'Attempt 3:', 'Attempt 4:'],
      'every attempt keeps its place',
    );
    for (const a of attempts) assert.match(a, /\n\(\d+ more lines\)$/);
    assert.ok(
      attempts[0].split('\n').every((l) => Buffer.byteLength(l, 'utf8') <= 240),
      'each line bounded',
    );
    const short: EpisodeTranscript = {
      turns: [
        {
          user: 'Hi',
          calls: [
            {
              name: 'probe',
              arguments: { case: 'ok' },
              outcome: { response: { text: ['{"ok":true}'] } },
            },
          ],
          answer: 'done',
        },
      ],
      snapshot: { ok: true, value: {} },
    };
    assert.equal(
      describeAttempts([short]),
      'Attempt 1:\nUser: Hi\nCall probe {"case":"ok"} -> {"ok":true}\nAnswer: done',
      'a short attempt is shown whole',
    );
  });

  it('replay: one rehearsal per recorded call, recorded actual responses, no tool run; the same policy rehearses the same texts', async () => {
    const cases = [
      OK_CASE.case,
      REFUSED_CASE.case,
      REHEARSAL_ERROR_CASES.NO_EXECUTION_RESULT_TAG_FOUND.case,
    ];
    const recorded = await run(
      scripted(),
      cases.map((c) => probeTask(c)),
    );
    const summary = await replayTrace({
      source: recorded.summary.traceFile,
      runsDir: runsDir(),
      policy: scripted(),
      settings: { maxTokens: { act: 64, rehearse: 64 } },
    });
    assert.equal(summary.status, 'completed');
    const replay = await readCheckedTrace(summary.traceFile);
    assert.equal(replay.run.mode, 'replay');
    assert.equal(replay.run.source, path.resolve(recorded.summary.traceFile));
    const sameCalls = (events: readonly (CallRehearsalEvent | CallActualEvent | FidelityEvent)[]) =>
      events.map((e) => e.callId);
    assert.deepEqual(sameCalls(replay.rehearsals), sameCalls(recorded.trace.rehearsals));
    assert.deepEqual(
      replay.rehearsals.map((r) => [r.text, r.result]),
      recorded.trace.rehearsals.map((r) => [r.text, r.result]),
    );
    assert.deepEqual(
      replay.actuals.map((a) => [a.source, a.response]),
      recorded.trace.actuals.map((a) => ['replay', a.response]),
    );
    assert.deepEqual(
      replay.fidelities.map((f) => [f.callId, f.comparable, f.scores]),
      recorded.trace.fidelities.map((f) => [f.callId, f.comparable, f.scores]),
    );
    assert.deepEqual(
      replay.ends.map((e) => [e.status, e.reward]),
      recorded.trace.ends.map((e) => [e.status, e.reward]),
    );
  });

  it('replay of a reference-policy trace of a built-in task: a rehearsal and a fidelity for every call', async () => {
    const retail = await loadTaskFile(
      path.join(REPO, 'examples', 'tasks', 'retail-0000.task.json'),
    );
    const recorded = await run(new ReferencePolicy([retail.task]), [retail]);
    const calls = recorded.trace.turns.flatMap((t) =>
      t.parse.kind === 'calls' ? t.parse.calls.map((c) => c.callId) : [],
    );
    assert.equal(calls.length, 3);
    assert.equal(recorded.trace.rehearsals.length, 0, 'the reference policy does not rehearse');
    const summary = await replayTrace({
      source: recorded.summary.traceFile,
      runsDir: runsDir(),
      policy: scripted(),
      settings: { maxTokens: { act: 32, rehearse: 32 } },
    });
    assert.equal(summary.status, 'completed', JSON.stringify(summary.error));
    const replay = await readCheckedTrace(summary.traceFile);
    assert.deepEqual(
      replay.rehearsals.map((r) => r.callId),
      calls,
    );
    assert.deepEqual(
      replay.fidelities.map((f) => f.callId),
      calls,
    );
    assert.deepEqual(
      replay.actuals.map((a) => a.response),
      recorded.trace.actuals.map((a) => a.response),
    );
    assert.ok(
      replay.rehearsals.every((r) => r.tokens!.prompt > 500),
      "rehearse prompts carry the task's tools and conversation",
    );
  });

  it('a replay that cannot rehearse a call fails with its code, and its trace still ends the episode and the run', async () => {
    const recorded = await run(scripted(), [probeTask(OK_CASE.case)]);
    // 4090 new tokens after a prompt of hundreds exceed the model's 4096 positions.
    const summary = await replayTrace({
      source: recorded.summary.traceFile,
      runsDir: runsDir(),
      policy: scripted(),
      settings: { maxTokens: { act: 64, rehearse: 4090 } },
    });
    assert.equal(summary.status, 'failed');
    assert.equal(summary.error?.code, 'PROMPT_TOO_LONG');
    assert.match(summary.error!.message, /exceeds the model's 4096 positions/);
    const replay = await readCheckedTrace(summary.traceFile);
    assert.deepEqual(
      replay.events.map((e) => e.type),
      ['run', 'episode', 'turn', 'episode.end', 'run.end'],
    );
    assert.deepEqual(
      [replay.ends[0].status, replay.ends[0].error?.code],
      ['failed', 'PROMPT_TOO_LONG'],
    );
    assert.deepEqual([replay.end.status, replay.end.error?.code], ['failed', 'PROMPT_TOO_LONG']);
  });
});
