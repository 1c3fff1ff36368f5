// Training runs launched for real: trainer processes streamed, cancelled, resumed and crashed,
// and under torchrun with 2 CPU processes (gloo). The run file and the backends' exact commands are
// unit tests (test/unit/training-launch.test.ts).
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../src/core/base/errors';
import { planLaunch } from '../../src/core/training/launch/backends';
import { checkRunSpecPaths, parseRunSpec } from '../../src/core/training/launch/runSpec';
import { defaultModelFolder } from '../../src/core/base/studioRoot';
import type { TrainerEvent } from '../../src/core/training/launch/supervisor';
import { TrainingProcess } from '../../src/core/training/launch/supervisor';
import { randomTestModel } from '../support/testModels';
import { weatherRows } from '../support/trainingRows';
import { rehearse } from '../support/cli';
import { repoRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';

describe('training runs: real trainer processes', function () {
  this.timeout(180_000);
  const dir = useTempDir('training-launch-');
  let model = '';
  before(async function () {
    this.timeout(300_000);
    model = await randomTestModel(1);
  });

  async function writeSpec(
    extra: Record<string, unknown> = {},
    hyper: Record<string, unknown> = {},
  ): Promise<string> {
    await fs.writeFile(path.join(dir(), 'rows.jsonl'), weatherRows());
    const file = path.join(dir(), 'run.json');
    await fs.writeFile(
      file,
      JSON.stringify({
        objective: 'sft',
        base: model,
        data: { train: ['rows.jsonl'] },
        hardware: { device: 'cpu', threads: 1 },
        hyperparameters: {
          train: {
            steps: 200,
            batch_size: 4,
            micro_batch_size: 4,
            checkpoint_every: 2,
            export_at_end: false,
            ...hyper,
          },
        },
        ...extra,
      }),
    );
    return file;
  }

  it('streams events, cancels mid-run keeping the checkpoint, and resumes from it when launched again', async () => {
    const file = await writeSpec();
    const dry = await rehearse('train', '--config', file, '--dry-run');
    assert.match(
      dry.out,
      /^command: PYTHONPATH=\S+ OMP_WAIT_POLICY=PASSIVE \S+\/bin\/python3? -m trainer sft --config \S+\/\.rehearsal\/training\/run\/trainer-config\.json$/m,
    );
    assert.match(dry.out, /would start from the base model/);

    const first = await TrainingProcess.start(
      planLaunch(parseRunSpec(await fs.readFile(file, 'utf8'), file), 'local'),
      { graceMs: 20_000 },
    );
    const seen: TrainerEvent[] = [];
    first.onEvent((e) => {
      seen.push(e);
      if (e.event === 'checkpoint' && e['step'] === 4) first.cancel();
    });
    const cancelled = await first.done;
    assert.equal(cancelled.status, 'cancelled', cancelled.stderrTail);
    assert.equal(cancelled.exitCode, 130);
    assert.equal(cancelled.error?.code, 'INTERRUPTED');
    assert.deepEqual(
      seen.slice(0, 3).map((e) => e.event),
      ['start', 'model', 'data'],
    );
    const steps = seen.filter((e) => e.event === 'step');
    assert.ok(steps.length >= 4 && steps.length < 200, `${steps.length} steps before the cancel`);
    assert.ok(
      steps.every((e) => typeof e['loss'] === 'number' && typeof e['tokens_per_s'] === 'number'),
    );
    const kept = cancelled.lastCheckpoint!;
    assert.ok(kept.step >= 4, JSON.stringify(kept));
    assert.match(
      cancelled.error!.message,
      new RegExp(`newest checkpoint is step ${kept.step}\\. Run the same command again to resume`),
    );

    // The same command again, shortened to end soon: it resumes at the kept checkpoint.
    const short = await writeSpec({}, { steps: kept.step + 2 });
    const r = await rehearse('train', '--config', short, '--json');
    assert.equal(r.code, 0, r.err);
    const { outcome, lastStep } = JSON.parse(r.out) as {
      outcome: { status: string; resumedFrom: { step: number } };
      lastStep: { step: number };
    };
    assert.equal(outcome.status, 'done');
    assert.equal(outcome.resumedFrom.step, kept.step);
    assert.equal(lastStep.step, kept.step + 2);
    assert.match(r.err, new RegExp(`resuming from \\S+step-0*${kept.step}`));
  });

  it("reports a crash with the trainer's coded error and the log tail", async () => {
    // A model folder (the launch checks that) without its tokenizer: the trainer fails.
    const broken = path.join(dir(), 'model-without-tokenizer');
    await fs.mkdir(broken);
    await fs.copyFile(path.join(model, 'config.json'), path.join(broken, 'config.json'));
    const file = await writeSpec({ base: broken });
    const r = await rehearse('train', '--config', file, '--no-progress');
    assert.equal(r.code, 1);
    assert.match(
      r.errLines.find((l) => l.startsWith('rehearse: ')) ?? '',
      /^rehearse: the trainer failed: TOKENIZER_MISSING: No tokenizer\.json in \S+model-without-tokenizer/,
    );
  });

  it('a base or rows file that is not there is one clear error before the trainer starts (issue 27)', async () => {
    const file = await writeSpec({
      base: '../no-such-model',
      data: { train: ['rows.jsonl', 'missing.jsonl'] },
    });
    const r = await rehearse('train', '--config', file, '--no-progress');
    assert.equal(r.code, 2);
    assert.equal(r.errLines.length, 1, r.err);
    assert.match(
      r.errLines[0],
      /^rehearse: The training run \S+run\.json names 2 paths that are not there: \$\.base "\.\.\/no-such-model" \(\S+\) is not a model folder .*; \$\.data\.train\[1\] "missing\.jsonl" \(\S+\) does not exist: export rows there first/,
    );
    assert.ok(!(await fs.readdir(dir())).includes('.rehearsal'), 'no run folder was made');
  });

  it("the example workspace's run file works in a copy of it: the default policy by name, rows once exported", async () => {
    // What a user has: a copy of examples/workspace, not the repository around it.
    const ws = path.join(dir(), 'workspace');
    await fs.cp(path.join(repoRoot(), 'examples', 'workspace'), ws, { recursive: true });
    const file = path.join(ws, 'retail-grounding.run.json');
    const before = await rehearse('train', '--config', file, '--dry-run');
    assert.equal(before.code, 2);
    assert.match(
      before.errLines[0] ?? '',
      /names a path that is not there: \$\.data\.train\[0\] "\.rehearsal\/datasets\/rows\.train\.jsonl" .* does not exist: export rows there first/,
    );
    let missing: unknown;
    try {
      checkRunSpecPaths(parseRunSpec(await fs.readFile(file, 'utf8'), file));
    } catch (err) {
      missing = err;
    }
    assert.ok(missing instanceof StudioError && missing.code === 'RUN_SPEC_PATHS_MISSING');
    assert.deepEqual(missing.details?.['rows'], [
      path.join(ws, '.rehearsal', 'datasets', 'rows.train.jsonl'),
    ]);

    process.chdir(ws);
    const exported = await rehearse(
      'export',
      '.rehearsal/runs/20261129-120000-shadow-sample',
      '--out',
      '.rehearsal/datasets/rows.jsonl',
      '--split-by-task',
      '0.2',
    ).finally(() => process.chdir(repoRoot()));
    assert.equal(exported.code, 0, exported.err);
    const after = await rehearse('train', '--config', file, '--dry-run');
    assert.equal(after.code, 0, after.err);
    const spec = parseRunSpec(await fs.readFile(file, 'utf8'), file);
    assert.equal(spec.base, defaultModelFolder(), '"default" is the embedded policy');
    assert.equal(spec.out_dir, path.join(ws, '.rehearsal', 'training', 'retail-grounding'));
    assert.match(after.out, /would start from the base model/);
  });

  it('envace: "default" as the base is refused, since the cluster does not have the studio\'s policy', () => {
    const spec = parseRunSpec(
      JSON.stringify({
        objective: 'grpo',
        base: 'default',
        envace: {
          root: '/opt/EnvACE',
          tool_dataset: '/d.json',
          train_files: '/d.parquet',
          judge: { urls: ['http://judge'] },
        },
      }),
      '/w/run.json',
    );
    assert.throws(
      () => planLaunch(spec, 'envace'),
      (err: StudioError) =>
        err.code === 'RUN_SPEC_INVALID' &&
        /name the model as the cluster sees it/.test(err.message),
    );
  });

  it('torchrun: 2 CPU processes (gloo) train 2 steps, events read through the worker prefix, replicas identical', async () => {
    const file = await writeSpec(
      { hardware: { device: 'cpu', threads: 1, processes: 2 } },
      { steps: 2 },
    );
    const r = await rehearse('train', '--config', file, '--backend', 'torchrun', '--json');
    assert.equal(r.code, 0, r.err);
    const { plan, outcome, lastStep } = JSON.parse(r.out) as {
      plan: { argv: string[] };
      outcome: { status: string; events: number };
      lastStep: { step: number };
    };
    assert.ok(plan.argv.includes('torch.distributed.run'));
    assert.equal(outcome.status, 'done');
    assert.equal(lastStep.step, 2);
    const events = (
      await fs.readFile(path.join(dir(), '.rehearsal', 'training', 'run', 'events.jsonl'), 'utf8')
    )
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as TrainerEvent);
    assert.equal(events[0]['world_size'], 2);
    assert.equal(events.at(-1)?.['replicas_identical'], true);
    assert.equal(outcome.events, events.length, 'every event of rank 0 was streamed from stdout');
  });
});
