// `--reward envace`: EnvACE's reward and episode rules (issue 18, rows 7-9), played end to end by the
// real runner against the real probe MCP server. Expected numbers come from EnvACE's own code at
// commit 173e941: `_aggregate_turn_score` (agent_system/environments/env_package/checklist/envs.py)
// and `compute_grpo_outcome_advantage` (verl/trainer/ppo/core_algos.py) run standalone under
// /usr/bin/python3 on the worked examples below, plus the one-line formulas of
// agent_system/reward_manager/checklist.py (Σ turn rewards / num_checklists / max_num_turns) and
// verl/trainer/ppo/ray_trainer.py `apply_invalid_action_penalty` (coef 0.1 on rows whose text is empty).
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReferencePolicy } from '../../src/core/policy/referencePolicy';
import { EndpointJudge } from '../../src/core/tasks/checks/judge';
import {
  envaceRowReward,
  envaceTurnScore,
  isInvalidAction,
} from '../../src/core/tasks/checks/envaceReward';
import { parseTask } from '../../src/core/tasks/format/loader';
import type { LoadedTask } from '../../src/core/tasks/format/taskFile';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import { probeTask, REHEARSAL_ERROR_CASES } from '../support/scriptedModel';
import { ensureServerBundles, fixtureServer } from '../support/servers';
import type { JudgeServer } from '../support/judgeServer';
import { startJudgeServer } from '../support/judgeServer';
import { rehearse } from '../support/cli';
import { useRuns, useScriptedPolicy } from '../support/runnerFixture';
import { readCheckedTrace } from '../support/traceChecks';

/** A task on the probe server, with its reference solution (one call per user turn, then an answer). */
function probeReferenceTask(
  id: string,
  turns: {
    user: string;
    calls: { name: string; arguments: Record<string, string> }[];
    answer: string;
  }[],
  checks: unknown[],
): LoadedTask {
  const task = parseTask(
    {
      version: 1,
      id,
      seed: 1,
      turns: turns.map((t) => ({ user: t.user })),
      servers: { probe: fixtureServer('probe.mjs') },
      checks,
      reference: { turns: turns.map((t) => ({ calls: t.calls, answer: t.answer })) },
    },
    id,
  );
  return { task, file: path.join(os.tmpdir(), `${id}.task.json`), baseDir: process.cwd() };
}

// Turn 0: a-called 0.5, a-answer 0.2, x-called 0.8 (never passes), a-judged 0.5 (required_for_next_turn);
// turn 1: b-called 0.6, b-state 0.4 (no turn: graded with the last user turn).
const CHECKS = [
  {
    id: 'a-called',
    kind: 'call',
    tool: 'probe',
    args: { case: { equals: 'a' } },
    turn: 0,
    weight: 0.5,
  },
  { id: 'a-answer', kind: 'answer', contains: ['done a'], turn: 0, weight: 0.2 },
  {
    id: 'x-called',
    kind: 'call',
    tool: 'probe',
    args: { case: { equals: 'x' } },
    turn: 0,
    weight: 0.8,
  },
  {
    id: 'a-judged',
    kind: 'judge',
    question: 'Did the agent probe a?',
    required_for_next_turn: true,
    turn: 0,
    weight: 0.5,
  },
  {
    id: 'b-called',
    kind: 'call',
    tool: 'probe',
    args: { case: { equals: 'b' } },
    turn: 1,
    weight: 0.6,
  },
  { id: 'b-state', kind: 'state', server: 'probe', path: '$.calls[1]', equals: 'b', weight: 0.4 },
];
const call = (c: string) => ({ name: 'probe', arguments: { case: c } });
const TWO_TURNS = probeReferenceTask(
  'envace-two-turns',
  [
    { user: 'Probe a.', calls: [call('a')], answer: 'Done a.' },
    { user: 'Probe b.', calls: [call('b')], answer: 'Done b.' },
  ],
  CHECKS,
);
// The same, but the second turn's call reaches no tool (UNKNOWN_TOOL): a tool failure.
const TOOL_FAILS = probeReferenceTask(
  'envace-tool-fails',
  [
    { user: 'Probe a.', calls: [call('a')], answer: 'Done a.' },
    { user: 'Probe b.', calls: [{ name: 'nope', arguments: {} }], answer: 'Done b.' },
  ],
  CHECKS,
);

describe("--reward envace: EnvACE's checklist reward and episode rules", function () {
  this.timeout(120_000);
  const { run } = useRuns();
  let judgeSays = true;
  let judge: JudgeServer;
  before(async () => {
    ensureServerBundles();
    judge = await startJudgeServer({ answer: () => judgeSays, reasoning: () => 'as configured' });
  });
  after(() => judge.close());
  const grade = () => ({ judge: new EndpointJudge({ baseURL: judge.url, model: 'judge' }) });
  const play = (task: LoadedTask, reward: 'studio' | 'envace' | undefined) =>
    run(new ReferencePolicy([task.task]), [task], reward ? { reward } : {}, { grade: grade() });

  it('row 8: the reward is Σ passed weights per user turn / user turns (1.1 here, above 1), and the run records its rule', async () => {
    judgeSays = true;
    const { trace } = await play(TWO_TURNS, 'envace');
    // _aggregate_turn_score: turn 0 → 1.2 (0.5 + 0.2 + 0.5), turn 1 → 1.0; reward_manager/checklist.py: 2.2 / 1 / 2.
    assert.equal(trace.ends[0].reward, 1.1);
    assert.deepEqual([trace.ends[0].status, trace.ends[0].success], ['completed', false]);
    assert.deepEqual(
      trace.ends[0].checks!.map((c) => [c.id, c.passed]),
      [
        ['a-called', true],
        ['a-answer', true],
        ['x-called', false],
        ['a-judged', true],
        ['b-called', true],
        ['b-state', true],
      ],
    );
    assert.equal(trace.run.settings!['reward'], 'envace');
  });

  it('row 8: an unmet required_for_next_turn item ends the episode after its turn (0.35); the next turn is never played', async () => {
    judgeSays = false;
    const { trace } = await play(TWO_TURNS, 'envace');
    // interaction.py: the unmet required item terminates; envs.py turn 0 → 0.7; 0.7 / 1 / 2.
    assert.equal(trace.ends[0].reward, 0.35);
    assert.deepEqual(
      trace.turns.map((t) => t.user ?? null),
      ['Probe a.', null],
      'only the first user turn was played',
    );
    const late = trace.ends[0].checks!.filter((c) => c.id.startsWith('b-'));
    assert.deepEqual(
      late.map((c) => c.passed),
      [null, null],
    );
    assert.match(late[0].detail!, /EnvACE ended the episode after user turn 1/);
  });

  it('row 7: a tool failure ends the episode after its act; turns already answered keep their reward (0.6)', async () => {
    judgeSays = true;
    const { trace } = await play(TOOL_FAILS, 'envace');
    // envs.py PROCESSING_TOOLS: tool_failed_any → TERMINATED before turn 1 is judged; episode_rewards = 1.2 → 1.2 / 2.
    assert.deepEqual(
      [
        trace.ends[0].status,
        trace.ends[0].error?.code,
        trace.ends[0].reward,
        trace.ends[0].success,
      ],
      ['failed', 'UNKNOWN_TOOL', 0.6, false],
    );
    assert.equal(trace.turns.length, 3, 'the failed call is the last act');
  });

  it('the default (studio) rule is unchanged: the share of passed weights over all items, both turns played, a failed call does not end the episode', async () => {
    judgeSays = false;
    let { trace } = await play(TWO_TURNS, undefined);
    // 0.5 + 0.2 + 0.6 + 0.4 passed of 3.0.
    assert.deepEqual(
      [trace.ends[0].reward, trace.turns.length, trace.run.settings!['reward']],
      [0.566667, 4, 'studio'],
    );
    judgeSays = true;
    ({ trace } = await play(TOOL_FAILS, 'studio'));
    // a-called, a-answer, a-judged: 1.2 of 3.0; the episode went on after the failed call.
    assert.deepEqual(
      [trace.ends[0].status, trace.ends[0].reward, trace.turns.length],
      ['completed', 0.4, 4],
    );
  });

  it("row 8: turn scores and the invalid-action penalty follow EnvACE's formulas (Python's str.strip)", () => {
    assert.equal(
      envaceTurnScore([
        { id: 'a', kind: 'judge', weight: 0.5, passed: true },
        { id: 'b', kind: 'judge', weight: 0.3, passed: false },
        { id: 'c', kind: 'judge', weight: 0.2, passed: null },
      ]),
      0.5,
    );
    // `1 if (t and t.strip()) else 0` under /usr/bin/python3: '', ' \n\t', '\x1c\x85', '\u3000' invalid; '\ufeff', 'x' valid.
    assert.deepEqual(['', ' \n\t', '\x1c\x85', '\u3000', '\ufeff', 'x'].map(isInvalidAction), [
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
    assert.deepEqual([envaceRowReward(0.35, ''), envaceRowReward(0.35, 'Done.')], [0.25, 0.35]);
  });
});

describe('--reward envace in imagine mode: any error_tool_call ends the episode (row 7)', function () {
  this.timeout(120_000);
  const scripted = useScriptedPolicy();
  const { run } = useRuns();

  it('a rehearsal that does not parse ends the imagined episode with reward 0, even with on-parse-error feedback', async () => {
    const { case: notag } = REHEARSAL_ERROR_CASES.NO_EXECUTION_RESULT_TAG_FOUND;
    const { trace } = await run(scripted(), [probeTask(notag)], {
      mode: 'imagine',
      onParseError: 'feedback',
      reward: 'envace',
    });
    assert.deepEqual(
      trace.of('e1').map((e) => e.type),
      ['episode', 'turn', 'call.rehearsal', 'episode.end'],
    );
    // envs.py AWAIT_SIMULATOR: sim_failed_any → TERMINATED, reward 0.0; no user turn was answered: 0 / 1 / 1.
    assert.deepEqual(
      [trace.ends[0].status, trace.ends[0].error?.code, trace.ends[0].reward],
      ['failed', 'NO_EXECUTION_RESULT_TAG_FOUND', 0],
    );
  });

  it('under the studio rule the same imagined episode goes on with feedback and is graded on its checks', async () => {
    const { case: notag } = REHEARSAL_ERROR_CASES.NO_EXECUTION_RESULT_TAG_FOUND;
    const { trace } = await run(scripted(), [probeTask(notag)], {
      mode: 'imagine',
      onParseError: 'feedback',
    });
    assert.deepEqual([trace.ends[0].status, trace.turns.length], ['completed', 2]);
    assert.ok(trace.ends[0].reward! > 0);
  });
});

describe("rehearse rollout --act-rows turn: per-turn act rows pooled as EnvACE's role-wise GRPO pools them (row 9)", function () {
  this.timeout(120_000);
  let dir = '';
  let taskFile = '';
  before(async () => {
    ensureServerBundles();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'reward-envace-'));
    // One user turn: probe a, then an empty answer (an invalid action: EnvACE's penalty).
    const { task } = probeReferenceTask(
      'envace-rollout',
      [{ user: 'Probe a.', calls: [call('a')], answer: '' }],
      [
        { id: 'called', kind: 'call', tool: 'probe', args: { case: { equals: 'a' } }, weight: 1 },
        { id: 'answered', kind: 'answer', contains: ['done'], weight: 1 },
      ],
    );
    taskFile = path.join(dir, 'envace-rollout.task.json');
    await fs.writeFile(taskFile, JSON.stringify(task));
  });
  after(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function rollout(...extra: string[]): Promise<DatasetRow[]> {
    const out = path.join(dir, `rows-${extra.join('-') || 'default'}.jsonl`);
    const r = await rehearse(
      'rollout',
      taskFile,
      '--policy',
      'reference',
      '--real',
      '--episodes',
      '2',
      '--out',
      out,
      '--runs',
      path.join(dir, 'runs'),
      ...extra,
    );
    assert.equal(r.code, 0, r.err);
    return (await fs.readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as DatasetRow);
  }

  /** EnvACE's advantages with group_by_agent_id (uid_agentid groups pool every row), norm_adv_by_std_in_grpo=False. */
  function pooledAdvantages(rows: DatasetRow[]): number[] {
    const groups = new Map<string, number[]>();
    for (const r of rows)
      groups.set(`${r.group}_${r.role}`, [
        ...(groups.get(`${r.group}_${r.role}`) ?? []),
        r.reward!,
      ]);
    return rows.map((r) => {
      const g = groups.get(`${r.group}_${r.role}`)!;
      return Math.round((r.reward! - g.reduce((a, b) => a + b, 0) / g.length) * 1e6) / 1e6;
    });
  }

  it('writes one act row per turn (the default), each with the episode score less the 0.1 penalty of an empty text', async () => {
    const rows = await rollout('--reward', 'envace');
    assert.deepEqual(
      rows.map((r) => [r.role, r.group, r.reward, r.train_history ?? false]),
      [
        ['act', 'envace-rollout/rollout', 1, false],
        ['act', 'envace-rollout/rollout', 0.9, false],
        ['act', 'envace-rollout/rollout', 1, false],
        ['act', 'envace-rollout/rollout', 0.9, false],
      ],
    );
    // compute_grpo_outcome_advantage on rewards [1.0, 0.9, 1.0, 0.9], one uid_agentid group: [0.05, -0.05, 0.05, -0.05].
    assert.deepEqual(pooledAdvantages(rows), [0.05, -0.05, 0.05, -0.05]);
    const trace = await readCheckedTrace(
      path.join(dir, 'runs', (await fs.readdir(path.join(dir, 'runs')))[0], 'trace.jsonl'),
    );
    assert.equal(trace.run.settings!['reward'], 'envace');
  });

  it('--act-rows episode writes one row per episode (a different estimator: advantages 0 here); the studio rule has no penalty', async () => {
    const rows = await rollout('--reward', 'envace', '--act-rows', 'episode');
    assert.deepEqual(
      rows.map((r) => [r.reward, r.train_history]),
      [
        [0.9, true],
        [0.9, true],
      ],
    );
    // compute_grpo_outcome_advantage on [0.9, 0.9]: [0.0, 0.0].
    assert.deepEqual(pooledAdvantages(rows), [0, 0]);
    const studio = await rollout('--reward', 'studio');
    assert.deepEqual(
      studio.map((r) => r.reward),
      [0.5, 0.5, 0.5, 0.5],
      'called passed, answered failed: 1 of 2, no penalty',
    );
  });

  it('refuses an unknown rule, an unknown act-row layout, and envace with parse-error feedback', async () => {
    let r = await rehearse(
      'rollout',
      taskFile,
      '--policy',
      'reference',
      '--real',
      '--out',
      path.join(dir, 'x.jsonl'),
      '--reward',
      'tau2',
    );
    assert.match(r.err, /--reward must be studio or envace, not "tau2"/);
    r = await rehearse(
      'rollout',
      taskFile,
      '--policy',
      'reference',
      '--real',
      '--out',
      path.join(dir, 'x.jsonl'),
      '--act-rows',
      'call',
    );
    assert.match(r.err, /--act-rows must be turn .* or episode, not "call"/);
    r = await rehearse(
      'run',
      taskFile,
      '--policy',
      'reference',
      '--no-progress',
      '--out',
      path.join(dir, 'runs'),
      '--reward',
      'envace',
      '--on-parse-error',
      'feedback',
    );
    assert.match(r.err, /--reward envace ends the episode on any parse error/);
    assert.equal(r.code, 2);
  });
});
