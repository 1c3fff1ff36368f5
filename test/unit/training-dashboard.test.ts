// The training dashboard's model: trainer events (docs/trainer-events.md) folded into the series the
// charts draw, the progress and its ETA, a resumed run's replayed steps, crashes and cancels, and the
// messages the dashboard may send.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { TrainerEvent } from '../../src/core/training/launch/supervisor';
import { EVENTS_FILE, readTrainerEvents } from '../../src/core/training/launch/supervisor';
import { formatParameters } from '../../src/core/base/counted';
import { estimateSecondsLeft, formatDuration } from '../../src/core/training/dashboard/progress';
import {
  isDashboardViewState,
  parseDashboardMessage,
  stateForDashboard,
} from '../../src/core/training/dashboard/protocol';
import {
  applyOutcome,
  applyTrainerEvent,
  emptyRunState,
  runStateFromEvents,
  thinSeries,
} from '../../src/core/training/dashboard/runState';
import { deltaBars } from '../../src/core/training/dashboard/compareView';
import type { FidelityComparison } from '../../src/core/training/compareFidelity';
import { useTempDir } from '../support/tempDir';

const start = (t: number, command = 'sft'): TrainerEvent => ({
  event: 'start',
  t,
  command,
  device: 'cpu',
});
/** An sft step: `steps` in all, 2 s per step after a start-up at t = 1. */
const sftStep = (step: number, steps = 10, t = 1 + 2 * step): TrainerEvent => ({
  event: 'step',
  t,
  command: 'sft',
  step,
  steps,
  loss: 5 - step / 4,
  tokens_per_s: 1000 + step,
  roles: {
    act: { rows: 4, tokens: 40, loss: 5.25 - step / 4 },
    rehearse: { rows: 4, tokens: 30, loss: 4.75 - step / 4 },
  },
});
const grpoStep = (step: number, iteration: number, t: number): TrainerEvent => ({
  event: 'step',
  t,
  command: 'grpo',
  step,
  iteration,
  iterations: 4,
  loss: 0.1,
  tokens_per_s: 500,
  roles: {
    act: { pg_loss: 0.2, reward_mean: 0.25 * iteration },
    rehearse: { pg_loss: -0.1, reward_mean: 0.5 },
  },
  grounding: { rows: 3, tokens: 20, nll: 2.5 - iteration / 4, weighted_nll: 2.6, coef: 0.1 },
});

describe('training dashboard: events to series', () => {
  it('plots sft loss per role and of the objective, and tokens/s, against the step; no reward or grounding', () => {
    const state = runStateFromEvents([
      start(0.5),
      { event: 'data', t: 0.8, rows: 8 },
      sftStep(1),
      sftStep(2),
    ]);
    assert.equal(state.status, 'running');
    assert.equal(state.device, 'cpu');
    assert.deepEqual(state.series.loss, {
      act: [
        [1, 5],
        [2, 4.75],
      ],
      rehearse: [
        [1, 4.5],
        [2, 4.25],
      ],
      objective: [
        [1, 4.75],
        [2, 4.5],
      ],
    });
    assert.deepEqual(state.series.tokensPerSecond, {
      'tokens/s': [
        [1, 1001],
        [2, 1002],
      ],
    });
    assert.deepEqual(state.series.reward, {});
    assert.deepEqual(state.series.groundingNll, {});
    assert.deepEqual(state.progress, { unit: 'steps', done: 2, total: 10, secondsLeft: 16 });
  });

  it('plots grpo policy-gradient loss and mean reward per role and the grounding NLL; progress counts iterations', () => {
    const state = runStateFromEvents([
      start(0, 'grpo'),
      grpoStep(1, 0, 10),
      { event: 'iteration', t: 12, iteration: 0, steps: 1 },
      grpoStep(2, 1, 20),
      { event: 'iteration', t: 22, iteration: 1, steps: 1 },
    ]);
    assert.deepEqual(state.series.loss.act, [
      [1, 0.2],
      [2, 0.2],
    ]);
    assert.deepEqual(state.series.loss.rehearse, [
      [1, -0.1],
      [2, -0.1],
    ]);
    assert.deepEqual(state.series.reward, {
      act: [
        [1, 0],
        [2, 0.25],
      ],
      rehearse: [
        [1, 0.5],
        [2, 0.5],
      ],
    });
    assert.deepEqual(state.series.groundingNll, {
      'grounding NLL': [
        [1, 2.5],
        [2, 2.25],
      ],
    });
    // Two of four iterations in 22 s, 10 s per iteration lately: 20 s to go.
    assert.deepEqual(state.progress, { unit: 'iterations', done: 2, total: 4, secondsLeft: 20 });
  });

  it("plots GRPO's validation points, one series per score of the held-out tasks", () => {
    const state = runStateFromEvents([
      start(0),
      {
        event: 'validation',
        t: 4,
        step: 0,
        iteration: 0,
        scores: { success: 0.2, meanReward: 0.5 },
      },
      {
        event: 'validation',
        t: 6,
        step: 4,
        iteration: 2,
        scores: { success: 0.3, meanReward: 0.6 },
      },
      { event: 'validation', t: 7, step: 6, iteration: 3 },
    ]);
    assert.deepEqual(state.series.validation, {
      success: [
        [0, 0.2],
        [4, 0.3],
      ],
      meanReward: [
        [0, 0.5],
        [4, 0.6],
      ],
    });
  });

  it('skips values that are not finite numbers (the trainer writes NaN as null)', () => {
    const state = runStateFromEvents([
      start(0),
      { ...sftStep(1), loss: null, tokens_per_s: 'fast' },
    ]);
    assert.equal(state.series.loss.objective, undefined);
    assert.deepEqual(state.series.tokensPerSecond, {});
    assert.deepEqual(state.series.loss.act, [[1, 5]]);
  });

  it('a resumed run drops the points after its checkpoint (they are trained again) and measures its pace from where it resumed', () => {
    const first = [
      start(0),
      sftStep(1),
      sftStep(2),
      { event: 'checkpoint', t: 5.5, step: 2, path: '/r/checkpoints/step-00000002' },
      sftStep(3),
      {
        event: 'error',
        t: 7.2,
        code: 'INTERRUPTED',
        message: 'Interrupted; resume from the last checkpoint by running the same command.',
      },
    ];
    const state = runStateFromEvents(first);
    assert.equal(state.status, 'cancelled');
    assert.equal(state.error?.code, 'INTERRUPTED');
    assert.deepEqual(state.lastCheckpoint, { step: 2, path: '/r/checkpoints/step-00000002' });
    assert.equal(state.series.loss.act.length, 3);
    // The second process: its clock starts again at 0; start-up takes 3 s, then 4 s per step.
    for (const e of [
      start(0.5),
      { event: 'resume', t: 3, step: 2, path: '/r/checkpoints/step-00000002' },
    ])
      applyTrainerEvent(state, e);
    assert.equal(state.status, 'running');
    assert.equal(state.error, undefined);
    assert.deepEqual(state.resumedFrom, { step: 2, path: '/r/checkpoints/step-00000002' });
    assert.deepEqual(
      state.series.loss.act.map(([x]) => x),
      [1, 2],
    );
    applyTrainerEvent(state, sftStep(3, 10, 7));
    assert.deepEqual(
      state.series.loss.act.map(([x]) => x),
      [1, 2, 3],
    );
    // One step since the resume at step 2, in 6.5 s from the process's start event: 7 steps to go.
    assert.equal(state.progress.secondsLeft, 7 * 6.5);
    applyTrainerEvent(state, sftStep(4, 10, 11));
    assert.equal(state.progress.secondsLeft, 6 * 4);
  });

  it('a run that is done ends at its total with no time left, and records its final model and the export', () => {
    const state = runStateFromEvents([
      start(0),
      sftStep(1, 2),
      sftStep(2, 2),
      { event: 'checkpoint', t: 6, step: 2, path: '/r/c' },
      { event: 'export', t: 7, path: '/r/final', onnx_bytes: 10 },
      { event: 'done', t: 7, command: 'sft', steps: 2, final: '/r/final' },
    ]);
    assert.equal(state.status, 'done');
    assert.equal(state.final, '/r/final');
    assert.deepEqual(state.exports, ['/r/final']);
    assert.deepEqual(state.progress, { unit: 'steps', done: 2, total: 2, secondsLeft: 0 });
  });

  it('a LoRA run says what trains: its rank, and how many of the parameters', () => {
    const state = runStateFromEvents([
      start(0),
      {
        event: 'model',
        t: 1,
        path: '/m/qwen3',
        parameters: 1_720_000_000,
        config: { backend: 'transformers', lora_rank: 16, trainable_parameters: 17_400_000 },
      },
      sftStep(1, 2),
    ]);
    assert.deepEqual(state.model, {
      backend: 'transformers',
      loraRank: 16,
      parameters: 1_720_000_000,
      trainable: 17_400_000,
    });
    assert.equal(formatParameters(state.model!.trainable), '17.4M');
    assert.equal(formatParameters(state.model!.parameters), '1.72B');
    // init's model event (a config.json, no backend) says nothing about what a run trains.
    const init = runStateFromEvents([
      { event: 'model', t: 0, path: '/m', parameters: 10, config: { model_type: 'llama' } },
    ]);
    assert.equal(init.model, undefined);
  });

  it("a TRL run (--backend trl) plots its loss and reward per step from TRL's logs", () => {
    const state = runStateFromEvents([
      start(0),
      { event: 'trl_step', t: 10, step: 1, steps: 4, logs: { loss: -0.12, reward: 0.32 } },
      { event: 'trl_step', t: 20, step: 2, steps: 4, logs: { loss: 0.05, reward: 0.41 } },
    ]);
    assert.deepEqual(state.series.loss['act'], [
      [1, -0.12],
      [2, 0.05],
    ]);
    assert.deepEqual(state.series.reward['act'], [
      [1, 0.32],
      [2, 0.41],
    ]);
    assert.equal(state.progress.done, 2);
    assert.equal(state.progress.total, 4);
  });

  it("a crash the trainer did not report takes the supervisor's verdict; warnings are kept", () => {
    const state = runStateFromEvents([
      start(0),
      {
        event: 'warning',
        t: 1,
        code: 'RESUME_CONFIG_CHANGED',
        message: 'Resuming with changed settings (train.steps)',
      },
      sftStep(1),
    ]);
    applyOutcome(state, {
      status: 'failed',
      exitCode: null,
      signal: 'SIGKILL',
      error: {
        code: 'TRAINER_CRASHED',
        message: 'The trainer was killed by SIGKILL without reporting an error; see the log tail.',
      },
      stderrTail: 'Killed',
      events: 3,
    });
    assert.equal(state.status, 'failed');
    assert.equal(state.error?.code, 'TRAINER_CRASHED');
    assert.equal(state.progress.secondsLeft, null);
    assert.deepEqual(
      state.warnings.map((w) => w.code),
      ['RESUME_CONFIG_CHANGED'],
    );
  });
});

describe('training dashboard: ETA', () => {
  it('measures the pace over the recent samples, or from where the process started when there is one', () => {
    assert.equal(
      estimateSecondsLeft(
        [
          { done: 10, t: 20 },
          { done: 20, t: 30 },
        ],
        100,
      ),
      80,
    );
    assert.equal(estimateSecondsLeft([{ done: 5, t: 12 }], 10, { done: 0, t: 2 }), 10);
    assert.equal(
      estimateSecondsLeft([{ done: 5, t: 12 }], 10),
      null,
      'no pace from a single sample without an origin',
    );
    assert.equal(estimateSecondsLeft([], 10), null);
    assert.equal(
      estimateSecondsLeft([{ done: 5, t: 12 }], null, { done: 0, t: 0 }),
      null,
      'no total, no ETA',
    );
    assert.equal(estimateSecondsLeft([{ done: 10, t: 12 }], 10, { done: 0, t: 0 }), 0);
  });

  it('follows a change of speed: only the last samples count', () => {
    const state = emptyRunState();
    applyTrainerEvent(state, start(0));
    for (let step = 1; step <= 30; step++)
      applyTrainerEvent(state, sftStep(step, 100, step <= 10 ? step : 10 + 5 * (step - 10)));
    // The first 10 steps took 1 s each, the last 20 five seconds each.
    assert.equal(state.progress.secondsLeft, 70 * 5);
  });

  it('reads as a person would say it', () => {
    assert.equal(formatDuration(0), '0 s');
    assert.equal(formatDuration(44.6), '45 s');
    assert.equal(formatDuration(185), '3 min 05 s');
    assert.equal(formatDuration(2 * 3600 + 7 * 60 + 59), '2 h 07 min');
  });
});

describe('training dashboard: what is sent to the webview', () => {
  it('thins a long series to at most the limit, keeping the first and the newest point', () => {
    const points = Array.from({ length: 10_000 }, (_, i): [number, number] => [i + 1, i]);
    const thin = thinSeries(points, 1000);
    assert.ok(thin.length <= 1000, `${thin.length} points`);
    assert.deepEqual(thin[0], [1, 0]);
    assert.deepEqual(thin.at(-1), [10_000, 9_999]);
    assert.ok(
      thin.every((p, i) => i === 0 || p[0] > thin[i - 1][0]),
      'steps stay in order',
    );
    assert.deepEqual(thinSeries(points.slice(0, 5), 1000), points.slice(0, 5));
  });

  it('sends the state without the pace bookkeeping, as a copy that later events do not change', () => {
    const state = runStateFromEvents([start(0), sftStep(1)]);
    const sent = stateForDashboard(state);
    assert.ok(!('pace' in sent));
    applyTrainerEvent(state, sftStep(2));
    assert.equal(sent.series.loss.act.length, 1);
  });

  it("accepts the dashboard's ready, button requests and rendered reports, and nothing else", () => {
    assert.deepEqual(parseDashboardMessage({ type: 'ready' }), { type: 'ready' });
    assert.deepEqual(
      parseDashboardMessage({ type: 'request', id: 2, request: { method: 'resume' } }),
      { type: 'request', id: 2, request: { method: 'resume' } },
    );
    assert.deepEqual(
      parseDashboardMessage({ type: 'rendered', points: { loss: 6, tokensPerSecond: 2 } }),
      { type: 'rendered', points: { loss: 6, tokensPerSecond: 2 } },
    );
    for (const bad of [
      null,
      {},
      { type: 'request', id: 1, request: { method: 'rm -rf' } },
      { type: 'request', request: { method: 'cancel' } },
      { type: 'rendered', points: { other: 1 } },
      { type: 'rendered', points: { loss: -1 } },
    ]) {
      assert.equal(parseDashboardMessage(bad), undefined, JSON.stringify(bad));
    }
    assert.ok(isDashboardViewState({ outDir: '/w/.rehearsal/training/run' }));
    assert.ok(!isDashboardViewState({ outDir: '' }) && !isDashboardViewState(null));
  });

  it("the comparison's bar chart has one bar per tool and score delta, validity first", () => {
    const d = (a: number | null, b: number | null) => ({
      a,
      b,
      delta: a === null || b === null ? null : b - a,
    });
    const row = (tool: string, f1: number) => ({
      tool,
      calls: 2,
      validity: d(0.5, 1),
      scores: {
        exactMatch: d(0, 0),
        fieldF1: d(0.2, f1),
        keyJaccard: d(0.5, 0.5),
        typeAgreement: d(1, 1),
        errorAgreement: d(null, 1),
      },
    });
    const c: FidelityComparison = {
      overall: row('(all)', 0.5),
      perTool: [row('get_order', 0.7), row('cancel', 0.1)],
      taskSuccess: null,
    };
    const bars = deltaBars(c);
    assert.deepEqual(bars.labels, ['get_order', 'cancel']);
    assert.deepEqual(
      bars.datasets.map((s) => s.label),
      ['Δ validity', 'Δ exact', 'Δ field F1', 'Δ key Jaccard', 'Δ type', 'Δ error state'],
    );
    assert.deepEqual(
      bars.datasets[2].data.map((v) => Math.round(v! * 10) / 10),
      [0.5, -0.1],
    );
    assert.deepEqual(bars.datasets[5].data, [null, null]);
  });
});

describe('training dashboard: replotting a run folder', () => {
  const dir = useTempDir('training-dashboard-');

  it('reads events.jsonl from the start or from where it left off, skipping a torn last line and non-events', async () => {
    const file = path.join(dir(), EVENTS_FILE);
    const line = (e: TrainerEvent) => JSON.stringify(e) + '\n';
    await fs.writeFile(
      file,
      line(start(0)) + line(sftStep(1)) + 'not json\n' + '{"event":"step","t":5,"st',
    );
    const first = await readTrainerEvents(dir());
    assert.deepEqual(
      first.events.map((e) => e.event),
      ['start', 'step'],
    );
    await fs.appendFile(file, 'ep":2}\n' + line(sftStep(3)));
    const more = await readTrainerEvents(dir(), first.next);
    assert.deepEqual(
      more.events.map((e) => e['step']),
      [2, 3],
    );
    assert.deepEqual(
      runStateFromEvents([...first.events, ...more.events]).series.loss.act.map(([x]) => x),
      [1, 3],
      'a step line without roles plots no role loss',
    );
    assert.deepEqual(await readTrainerEvents(path.join(dir(), 'missing')), { events: [], next: 0 });
  });
});
