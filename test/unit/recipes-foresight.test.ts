import * as assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { hasIdentifier } from '../../src/core/protocol/identifierSlots';
import { memoryContext } from '../../src/core/runner/privateRehearsal';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import { mergedEffects } from '../../src/recipes/measureEnvace/effectsFile';
import type { ForesightContext } from '../../src/recipes/measureForesight/context';
import type { LoggedWrite, Verdict } from '../../src/recipes/measureForesight/memories';
import {
  flipRateOf,
  flippedIndices,
  memorySays,
  taskMemories,
} from '../../src/recipes/measureForesight/memories';
import type { ForesightEffects } from '../../src/recipes/measureForesight/results';
import {
  REQUIRED_DIFFERENCES,
  foresightProblems,
} from '../../src/recipes/measureForesight/results';
import { foresightSettings } from '../../src/recipes/measureForesight/settings';
import {
  TRANSFER,
  actAccuracy,
  inventedIds,
  loggedWrites,
  worldModelAccuracy,
} from '../../src/recipes/measureForesight/traces';
import { sftRunFile } from '../../src/recipes/measureForesight/training';
import { RECIPES } from '../../src/recipes/recipes';
import type { ProgressLog } from '../../src/recipes/shared/log';
import type { Recipe } from '../../src/recipes/trainDefault/settings';
import { SAMPLE_RUN_IDS, sampleTraceFile, writeSampleWorkspace } from '../builders/sampleWorkspace';
import { TraceBuilder } from '../builders/traceBuilder';
import { rehearse } from '../support/cli';
import { repoRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';

// measure:foresight (issue 41, parts 3-5): its settings, the memory-reading rows' memories and their
// flip rate, what it reads from traces (the rule accuracies, invented ids), its SFT run file and the
// effects file's form. No process is started here; QUICK=1 runs it whole in scripts/test.sh.

const ROOT = '/studio';
const silent: ProgressLog = Object.assign(() => undefined, { started: Date.now() });

describe('recipes: measure:foresight settings', () => {
  it('defaults to the full size, and QUICK to a tiny one', () => {
    const s = foresightSettings({}, [], ROOT);
    assert.equal(s.work, '/studio/.rehearsal/measure-foresight');
    assert.equal(s.base, '/studio/models/default');
    assert.deepEqual(
      [s.demonstrations, s.logged, s.memoryTasks, s.heldout, s.builtinHeldout * 2],
      [300, 2000, 600, 600, 600],
    );
    assert.deepEqual([s.flipRate, s.sftSteps, s.sftBatch, s.seeds], [0.12, 800, 16, [0, 1, 2]]);
    assert.deepEqual(s.orders, ['sequential', 'parallel']);
    const steps = Math.ceil((s.grpoTasks * 8) / s.miniBatchEpisodes) * s.ppoEpochs * s.iterations;
    assert.ok(steps >= 200, `${steps} GRPO steps a seed`);
    const q = foresightSettings({ QUICK: '1' }, [], ROOT);
    assert.equal(q.work, '/studio/.rehearsal/measure-foresight-quick');
    assert.ok(q.heldout <= 2 && q.sftSteps <= 2 && q.iterations === 1);
    assert.equal(Math.round(q.flipRate * q.memoryTasks), 1, 'QUICK flips one memory');
  });

  it('reads every size from the environment, and refuses seeds that would overlap', () => {
    const s = foresightSettings(
      { LOGGED: '50', MEMORY_TASKS: '40', FLIP_RATE: '0.1', ORDERS: 'sequential', SEEDS: '4' },
      ['--fresh', '--publish'],
      ROOT,
    );
    assert.deepEqual(
      [s.logged, s.memoryTasks, s.flipRate, s.orders],
      [50, 40, 0.1, ['sequential']],
    );
    assert.deepEqual([s.seeds, s.privateSeeds, s.fresh, s.publish], [[4], [4], true, true]);
    assert.throws(() => foresightSettings({ LOGGED: '9000' }, [], ROOT), /GRPO's seeds/);
    assert.throws(() => foresightSettings({ MEMORY_TASKS: '3000' }, [], ROOT), /LOGGED/);
    assert.throws(() => foresightSettings({ ORDERS: 'parallel' }, [], ROOT), /sequential/);
  });

  it('is an npm script of its own', () => {
    assert.equal(RECIPES['measure-foresight'].script, 'measure:foresight');
  });
});

/** A logged transfer and its real response: refused (with the real server's words) or made. */
function logged(verdict: Verdict, seed: number): LoggedWrite {
  const from = verdict === 'refused' ? `CD${10000000 + seed}` : `SAV${10000000 + seed}`;
  const response =
    verdict === 'refused'
      ? {
          text: [
            JSON.stringify({
              error: `Account ${from} is a certificate of deposit, and money cannot be moved out of a CD before it matures.`,
              code: 'TRANSFER_RESTRICTED',
            }),
          ],
          isError: true,
        }
      : { text: [JSON.stringify({ status: 'completed', transaction_id: `T${900000000 + seed}` })] };
  return {
    call: {
      name: TRANSFER,
      arguments: { from_account_id: from, to_account_id: 'CHK10000001', amount: 25 },
      outcome: { response },
    },
    verdict,
  };
}

describe('recipes: measure:foresight memory-reading rows', () => {
  const n = 1000;
  const tasks = Array.from({ length: n }, (_, i) => ({
    id: `bank-foresight-${40000 + i}`,
    seed: i,
  }));
  const writes = new Map(tasks.map((t) => [t.seed, logged(t.seed % 2 ? 'refused' : 'ok', t.seed)]));
  const memories = taskMemories(tasks, writes, { flipRate: 0.12, budget: 2, seed: 41 });
  const truth = new Map(memories.map((m) => [m.task, m.truth]));
  /** The act rows `rehearse export --memory-file` writes: the memory as the committed episode reads it. */
  const rows = memories.map((m, i): DatasetRow => ({
    v: 1,
    id: `e${i + 1}/e${i + 1}.t1/act/memory-1`,
    role: 'act',
    task: m.task,
    messages: [
      { role: 'system', content: 'You are a support agent of a retail bank.' },
      { role: 'system', content: memoryContext(m.memory) },
      { role: 'user', content: 'Please move $25.00 from my savings account SAV#1.' },
    ],
    target: '',
    reward: null,
    group: null,
    weight: 1,
    source: 'demonstration',
  }));

  it('flips exactly the share the recipe says: the rows disagree with the truth on 12%', () => {
    assert.deepEqual(flipRateOf(rows, truth), { rows: n, flipped: 120, rate: 0.12 });
    assert.equal(memories.filter((m) => m.flipped).length, 120);
    // Flips fall on both verdicts, and a row without a memory is not counted.
    const flippedRefusals = memories.filter((m) => m.flipped && m.truth === 'refused').length;
    assert.ok(flippedRefusals > 30 && flippedRefusals < 90, `${flippedRefusals}`);
    const plain = { ...rows[0], id: 'e1/e1.t1/act' };
    assert.equal(flipRateOf([plain], truth).rows, 0);
    assert.equal(flippedIndices(10, 0.12, 41).size, 1);
    assert.deepEqual([...flippedIndices(50, 0.12, 7)], [...flippedIndices(50, 0.12, 7)]);
  });

  it("says the true outcome with the real server's reason, ids stripped, as budget 2's memory reads", () => {
    const refused = memories.find((m) => m.truth === 'refused' && !m.flipped)!;
    assert.equal(
      refused.memory,
      'Imagined transfer_between_accounts -> refused: Account ID is a certificate of deposit, and money cannot be moved out of a CD before it matures. (x2)',
    );
    const ok = memories.find((m) => m.truth === 'ok' && !m.flipped)!;
    assert.equal(ok.memory, 'Imagined transfer_between_accounts -> ok (x2)');
    for (const m of memories) {
      assert.equal(
        memorySays(m.memory),
        m.flipped ? (m.truth === 'ok' ? 'refused' : 'ok') : m.truth,
      );
      assert.ok(!hasIdentifier(m.memory), m.memory);
    }
  });

  describe('through rehearse export --memory-file', () => {
    const dir = useTempDir('foresight-memories-');
    it("measures the flip rate on the exported rows' own memories", async () => {
      await writeSampleWorkspace(dir());
      const trace = sampleTraceFile(dir(), SAMPLE_RUN_IDS.shadow);
      const plain = path.join(dir(), 'plain.jsonl');
      assert.equal((await rehearse('export', trace, '--roles', 'act', '--out', plain)).code, 0);
      const ids = [
        ...new Set(
          (await fs.readFile(plain, 'utf8'))
            .split('\n')
            .filter(Boolean)
            .map((l) => (JSON.parse(l) as DatasetRow).task!),
        ),
      ];
      const made = taskMemories(
        ids.map((id, seed) => ({ id, seed })),
        new Map(ids.map((_, seed) => [seed, logged(seed % 2 ? 'refused' : 'ok', seed)])),
        { flipRate: 0.5, budget: 2, seed: 41 },
      );
      const file = path.join(dir(), 'memories.jsonl');
      await fs.writeFile(file, made.map((m) => JSON.stringify(m) + '\n').join(''));
      const out = path.join(dir(), 'rows.jsonl');
      const r = await rehearse(
        ...['export', trace, '--roles', 'act', '--act-rows', 'episode', '--out', out],
        ...['--memory-file', file, '--identifier-slots'],
      );
      assert.equal(r.code, 0, r.err);
      const exported = (await fs.readFile(out, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as DatasetRow);
      const flip = flipRateOf(exported, new Map(made.map((m) => [m.task, m.truth])));
      assert.equal(flip.rows, made.length);
      assert.equal(flip.flipped, made.filter((m) => m.flipped).length);
      assert.equal(flip.flipped, Math.round(made.length / 2));
    });
  });
});

describe('recipes: measure:foresight traces', () => {
  /** An act turn with one call, as the act parser takes it. */
  const call = (name: string, args: Record<string, unknown>) =>
    `\n<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
  const transfer = (from: string) =>
    call(TRANSFER, { from_account_id: from, to_account_id: 'SAV10000001', amount: 25 });
  const restricted = {
    error:
      'Account CD10000001 is a certificate of deposit, and money cannot be moved out of a CD before it matures.',
    code: 'TRANSFER_RESTRICTED',
  };

  it("reads the logged writes' true outcomes, and the world model's verdicts against them", () => {
    const t = new TraceBuilder('replay-1');
    const refusedEp = t.episode('bank-foresight-logging-60009');
    refusedEp
      .turn(transfer('CD10000001'))
      .rehearse(0, restricted)
      .actual(0, { json: restricted, isError: true });
    const okEp = t.episode('bank-foresight-logging-60019');
    okEp
      .turn(transfer('SAV10000002'))
      .rehearse(0, restricted)
      .actual(0, { json: { status: 'completed' } });
    const brokenEp = t.episode('bank-foresight-logging-60029');
    brokenEp
      .turn(transfer('SAV10000003'))
      .rehearseText(0, 'no result')
      .actual(0, { json: { status: 'completed' } });
    const writes = loggedWrites(t.events);
    assert.deepEqual(
      [...writes].map(([task, w]) => [task, w.verdict]),
      [
        ['bank-foresight-logging-60009', 'refused'],
        ['bank-foresight-logging-60019', 'ok'],
        ['bank-foresight-logging-60029', 'ok'],
      ],
    );
    const accuracy = worldModelAccuracy(t.events);
    assert.equal(accuracy.n, 3);
    assert.equal(accuracy.accuracy, 1 / 3);
    assert.deepEqual(accuracy.counts, {
      'refused->refused': 1,
      'ok->refused': 1,
      'ok->unknown': 1,
    });
  });

  it("reads the act's choice, transfer, refusal or neither, against each task's verdict (imagined attempts left out)", () => {
    const t = new TraceBuilder('private-1', 'private');
    const ep = (task: string, role?: 'imagined' | 'committed') => {
      const b = t.episode(task);
      if (role) (t.events.at(-1) as { role?: string }).role = role;
      return b;
    };
    ep('a', 'imagined').turn(transfer('CD10000001'));
    ep('a', 'committed').turn('I cannot make that transfer: it is a CD.');
    ep('b', 'committed').turn(transfer('SAV10000001'));
    ep('c', 'committed').turn(transfer('CD10000002'));
    // An act that did not parse chose nothing: it is no refusal.
    ep('d', 'committed').turn('<tool_call>{"name": ');
    const truth = new Map<string, Verdict>([
      ['a', 'refused'],
      ['b', 'ok'],
      ['c', 'refused'],
      ['d', 'refused'],
    ]);
    const a = actAccuracy(t.events, truth);
    assert.deepEqual([a.n, a.accuracy], [4, 2 / 4]);
    assert.deepEqual(a.counts, {
      'refused->refused': 1,
      'ok->ok': 1,
      'refused->ok': 1,
      'refused->unknown': 1,
    });
  });

  it('counts calls on an id the conversation never showed, not on ids the user or a tool gave', () => {
    const t = new TraceBuilder('run-1');
    const e = t.episode('bank-0001', { instruction: 'My customer id is C1234567.' });
    e.turn(call('get_customer', { customer_id: 'C1234567' })).actual(0, {
      json: { accounts: ['CHK10000001'] },
    });
    e.turn(call('get_account', { account_id: 'CHK10000001' }));
    e.turn(call('get_account', { account_id: 'SAV99999999' }));
    const other = t.episode('bank-0002', { instruction: 'Hello.' });
    other.turn(call('get_customer', { customer_id: 'C7654321', note: 'x' }));
    assert.deepEqual(inventedIds(t.events), {
      episodes: 2,
      calls: 4,
      inventedCalls: 2,
      episodesWithInvented: 2,
    });
  });
});

describe('recipes: measure:foresight SFT arms', () => {
  const recipe = JSON.parse(
    readFileSync(path.join(repoRoot(), 'training/default/recipe.json'), 'utf8'),
  ) as Recipe;
  const ctx: ForesightContext = {
    settings: foresightSettings({ WORK: '/w', BASE: '/b' }, [], ROOT),
    recipe,
    log: silent,
    prompt: { identifierSlots: true },
  };

  it('continue from BASE on their rows, at the recipe’s continued-SFT rate, for SFT_STEPS of SFT_BATCH', () => {
    const rows = ['demo-foresight', 'logged', 'memory'].map((f) => ({
      file: `/w/rows/${f}.jsonl`,
      rows: 1,
      key: f,
    }));
    const { run, processes } = sftRunFile(ctx, 'foresight', rows);
    assert.equal(run.base, '/b');
    assert.equal(run.out_dir, '/w/sft/foresight');
    assert.deepEqual(
      run.data.train,
      rows.map((r) => r.file),
    );
    assert.equal(processes, recipe.sft.processes);
    const h = run.hyperparameters as {
      optim: unknown;
      train: Record<string, unknown>;
      probe?: unknown;
    };
    assert.deepEqual(h.optim, recipe.memory!.sft.optim);
    assert.deepEqual([h.train.steps, h.train.batch_size, h.train.export_at_end], [800, 16, true]);
    assert.equal(h.probe, undefined, "no copy probe: it reads train:default's probe rows");
  });
});

describe('recipes: measure:foresight effects file', () => {
  const difference = (name: string, family: string, metric: 'success' | 'reward') => ({
    name,
    family,
    metric,
    mean: 0.05,
    ci95: [0.01, 0.09] as [number, number],
    tasks: 600,
  });
  const accuracy = { accuracy: 0.9, n: 600, counts: { 'ok->ok': 300, 'refused->refused': 240 } };
  const ids = { episodes: 600, calls: 900, inventedCalls: 30, episodesWithInvented: 20 };
  const effects = (): ForesightEffects => ({
    worldModelRuleAccuracy: 0.9,
    actRuleAccuracy: 0.5,
    foresight: {
      seeds: [0, 1, 2],
      privateRehearsalSeeds: [0, 1, 2],
      budget: 2,
      memory: 'outcomes',
      heldOutTasks: { 'bank-foresight': 600, 'bank-foresight-twin': 600, builtin: 600 },
      data: {
        demonstrations: 300,
        twinDemonstrations: 300,
        loggedRows: 2000,
        memoryRows: 600,
        flipRate: 0.12,
        builtinRows: 800,
      },
      sft: { steps: 800, batch: 16 },
      grpo: {
        iterations: 13,
        tasks: 16,
        episodes: 8,
        miniBatchEpisodes: 16,
        ppoEpochs: 2,
        lr: 0.0002,
        compute: {
          actUpdates: 624,
          actTokens: 90000,
          steps: 624,
          episodes: 4992,
          realToolCalls: 0,
          imaginedParseFailRate: 0.01,
        },
      },
      worldModel: accuracy,
      act: { 'foresight-budget0': accuracy },
      builtinInventedIds: { budget0: ids, 'budget2-sequential': ids },
    },
    differences: REQUIRED_DIFFERENCES.flatMap(([name, family]) => [
      difference(name, family, 'success'),
      difference(name, family, 'reward'),
    ]) as ForesightEffects['differences'],
  });

  it('accepts a well-formed foresight part and names each field out of form', () => {
    assert.deepEqual(foresightProblems(effects()), []);
    const e = effects();
    e.worldModelRuleAccuracy = 1.2;
    e.foresight.data.flipRate = Number.NaN;
    e.foresight.grpo.compute.realToolCalls = 3;
    e.differences = e.differences.filter((d) => d.name !== 'twin-budget2-vs-budget0');
    e.differences[0] = { ...e.differences[0], family: 'builtin' };
    assert.deepEqual(foresightProblems(e), [
      'worldModelRuleAccuracy',
      'foresight.data.flipRate',
      'foresight.grpo.compute.realToolCalls is 0',
      'differences foresight-budget2-vs-budget0 success',
      'differences twin-budget2-vs-budget0 success',
      'differences twin-budget2-vs-budget0 reward',
    ]);
    assert.deepEqual(foresightProblems({}).slice(0, 2), [
      'worldModelRuleAccuracy',
      'actRuleAccuracy',
    ]);
  });

  it("lands in measure:envace's effects file, each recipe keeping the other's part", () => {
    const envace = {
      seeds: [0],
      heldOutTasks: 600,
      differences: [
        { name: 'imagined-vs-none', metric: 'success', mean: 0, ci95: [0, 0], tasks: 1 },
      ],
    };
    const foresight = { ...effects() } as unknown as Record<string, unknown>;
    const both = mergedEffects(envace, foresight, 'foresight');
    assert.equal(both.heldOutTasks, 600);
    assert.equal(both.worldModelRuleAccuracy, 0.9);
    const names = (e: Record<string, unknown>) =>
      (e.differences as { name: string }[]).map((d) => d.name);
    assert.equal(names(both)[0], 'imagined-vs-none');
    assert.equal(names(both).length, 1 + effects().differences.length);
    // measure:envace publishes again: its part is replaced, the foresight part kept.
    const again = mergedEffects(both, { ...envace, seeds: [0, 1] }, 'envace');
    assert.deepEqual(again.seeds, [0, 1]);
    assert.deepEqual(again.foresight, effects().foresight);
    assert.deepEqual(names(again), names(both));
    // And measure:foresight again: its own differences replaced, not doubled.
    assert.deepEqual(names(mergedEffects(again, foresight, 'foresight')), names(both));
    assert.deepEqual(
      mergedEffects(undefined, foresight, 'foresight').differences,
      effects().differences,
    );
  });
});
