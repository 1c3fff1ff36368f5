// `rehearse train --backend trl` (issue 42, part 5): TRL's own GRPOTrainer drives the run, with the
// studio's runner as its rollout function (imagined episodes of the live model, served on a loopback
// port inside the trainer) and the studio's checklist reward; two steps on a tiny random Qwen3 folder
// with LoRA. TRL trains the act role (one sequence per episode, tool responses masked out).
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ensureServerBundles } from '../support/servers';
import { rehearse } from '../support/cli';
import { repoRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';
import type { TrainerEvent } from '../support/trainerPython';
import { trainerEvents } from '../support/trainerPython';

describe('train --backend trl: TRL GRPOTrainer with the studio runner as its rollouts', function () {
  this.timeout(300_000);
  const dir = useTempDir('rehearsal-trl-backend-');
  before(async () => {
    await ensureServerBundles();
  });

  it('runs two steps through the studio runner and writes the adapter', async () => {
    const base = path.join(dir(), 'base');
    await trainerEvents('test-checkpoint', '--out', base);
    const tasks = path.join(dir(), 'tasks');
    assert.equal((await rehearse('generate', 'bank', '--count', '1', '--out', tasks)).code, 0);
    const runFile = path.join(dir(), 'trl.run.json');
    await fs.writeFile(
      runFile,
      JSON.stringify({
        objective: 'grpo',
        base: 'base',
        out_dir: 'run',
        hyperparameters: {
          lora: { rank: 4, merge_at_end: false },
          data: { max_length: 8192 },
          optim: { lr: 0.001 },
          train: { export_at_end: false },
          grpo: { iterations: 2 },
          trl: { tasks: ['tasks'], num_generations: 2, tasks_per_step: 1 },
          rollouts: {
            command: [
              process.execPath,
              path.join(repoRoot(), 'dist', 'cli.js'),
              'rollout',
              '{tasks}',
              '--episodes',
              '{episodes}',
              '--policy',
              '{endpoint}',
              '--model',
              '{model}',
              '--act-rows',
              'episode',
              '--record-tokens',
              '--seed',
              '{seed}',
              '--out',
              '{out}',
            ],
          },
        },
      }),
    );
    const trained = await rehearse(
      'train',
      '--config',
      runFile,
      '--backend',
      'trl',
      '--no-progress',
    );
    assert.equal(trained.code, 0, trained.err);
    assert.match(trained.err, /step 2\/2 · loss -?\d+\.\d{3}/, 'a line per TRL step');
    const events = (await fs.readFile(path.join(dir(), 'run', 'events.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as TrainerEvent);
    const steps = events.filter((e) => e.event === 'trl_step');
    assert.deepEqual(
      steps.map((e) => e['step']),
      [1, 2],
    );
    for (const s of steps) assert.equal(typeof (s['logs'] as { loss?: unknown }).loss, 'number');
    // Each step's rollouts came from the studio's runner: rows with the server's sampled tokens.
    for (const step of ['step-0000', 'step-0001']) {
      const rows = (
        await fs.readFile(path.join(dir(), 'run', 'rollouts', step, 'rows.jsonl'), 'utf8')
      )
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { role: string; target_ids?: number[] });
      assert.equal(rows.filter((r) => r.role === 'act').length, 2, 'one act row per episode');
      assert.ok(rows.every((r) => r.role !== 'act' || (r.target_ids?.length ?? 0) > 0));
    }
    assert.equal(events.at(-1)?.event, 'done');
    await fs.access(path.join(dir(), 'run', 'final', 'adapter_model.safetensors'));
  });

  it('refuses an sft run file: TRL backs GRPO here, the export backs its SFTTrainer', async () => {
    const runFile = path.join(dir(), 'sft.run.json');
    await fs.writeFile(path.join(dir(), 'rows.jsonl'), '');
    await fs.mkdir(path.join(dir(), 'base'));
    await fs.writeFile(
      runFile,
      JSON.stringify({ objective: 'sft', base: 'base', data: { train: ['rows.jsonl'] } }),
    );
    const r = await rehearse('train', '--config', runFile, '--backend', 'trl', '--dry-run');
    assert.equal(r.code, 2);
    assert.match(r.err, /--backend trl runs TRL's GRPOTrainer/);
  });
});
