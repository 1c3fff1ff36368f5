// A LoRA GRPO iteration through a served rollout engine (issue 42, part 4), end to end: the trainer
// saves its adapter and hot-loads it into an OpenAI-compatible server started on the base (vLLM's
// /v1/load_lora_adapter; here `python -m trainer.serve_hf`, the transformers-backed stand-in, since
// vLLM needs a GPU), the studio's runner samples that adapter through the server with
// `rollout --record-tokens`, the rows carry the server's token ids and log-probs, and the trainer
// trains those ids and scores them as the server did.
import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { promisify } from 'node:util';
import { ensureServerBundles } from '../support/servers';
import { rehearse } from '../support/cli';
import { repoRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';
import { trainerEvents, trainerPython } from '../support/trainerPython';

const run = promisify(execFile);

/** Starts the stand-in server on a free port; resolves with its base URL once it listens. */
function startServer(base: string): { child: ChildProcess; url: Promise<string> } {
  const child = spawn(
    trainerPython(),
    ['-m', 'trainer.serve_hf', '--model', base, '--port', '0', '--served-model-name', 'base'],
    { cwd: repoRoot(), env: { ...process.env, OMP_WAIT_POLICY: 'PASSIVE' } },
  );
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const url = new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolve((JSON.parse(line) as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`serve_hf exited (${code}): ${stderr}`)));
  });
  return { child, url };
}

describe('a LoRA GRPO iteration through a served rollout engine', function () {
  this.timeout(240_000);
  const dir = useTempDir('rehearsal-served-lora-');
  let server: ChildProcess | undefined;

  before(async () => {
    await ensureServerBundles();
  });
  after(() => {
    server?.kill();
  });

  it('hot-loads the adapter, samples it with token ids and log-probs, and trains the tokens sampled', async () => {
    const base = path.join(dir(), 'base');
    await run(trainerPython(), ['-m', 'trainer', 'test-checkpoint', '--out', base], {
      cwd: repoRoot(),
    });
    const tasks = path.join(dir(), 'tasks');
    const generated = await rehearse('generate', 'bank', '--count', '1', '--out', tasks);
    assert.equal(generated.code, 0, generated.err);
    const started = startServer(base);
    server = started.child;
    const url = await started.url;
    const config = path.join(dir(), 'grpo.json');
    await fs.writeFile(
      config,
      JSON.stringify({
        out_dir: 'run',
        threads: 1,
        model: { path: base },
        lora: { rank: 4 },
        data: { max_length: 8192 },
        optim: { lr: 0.001, schedule: 'constant' },
        train: { micro_batch_size: 4, export_at_end: false },
        grpo: { iterations: 1 },
        rollouts: {
          server_url: url,
          command: [
            process.execPath,
            path.join(repoRoot(), 'dist', 'cli.js'),
            'rollout',
            tasks,
            '--policy',
            '{endpoint}',
            '--model',
            '{model}',
            '--record-tokens',
            '--episodes',
            '2',
            '--seed',
            '{seed}',
            '--group',
            'iter{iteration}',
            '--runs',
            '{run_dir}/traces',
            '--out',
            '{out}',
          ],
        },
      }),
    );
    const events = await trainerEvents('grpo', '--config', config);
    const of = (name: string) => events.filter((e) => e.event === name);
    assert.equal((of('model')[0]['config'] as { backend: string }).backend, 'transformers');

    // The adapter reached the server under the iteration's name, and the server lists it.
    const served = of('served')[0];
    assert.equal(served['model'], 'run-iter0000');
    const models = (await (await fetch(`${url}/models`)).json()) as { data: { id: string }[] };
    assert.deepEqual(
      models.data.map((m) => m.id),
      ['base', 'run-iter0000'],
    );

    // Each row carries what the server sampled: one log-prob per token id.
    const rowsFile = path.join(dir(), 'run', 'rollouts', 'iter-0000', 'rows.jsonl');
    const rows = (await fs.readFile(rowsFile, 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) => JSON.parse(l) as { role: string; target_ids?: number[]; target_logprobs?: number[] },
      );
    assert.ok(rows.length >= 2);
    for (const row of rows) {
      assert.ok(row.target_ids && row.target_ids.length > 0, 'the row has the sampled ids');
      assert.equal(row.target_logprobs?.length, row.target_ids.length);
    }

    // The trainer trained exactly those tokens and scores them as the server did: same weights,
    // same chat template, same ids, so the importance weights of truncated IS are 1.
    const iteration = of('iteration')[0];
    const tokensOf = (role?: string) =>
      rows.filter((r) => !role || r.role === role).reduce((n, r) => n + r.target_ids!.length, 0);
    assert.equal(iteration['act_tokens'], tokensOf('act'));
    const gap = iteration['sampler_gap'] as { tokens: number; max_abs: number };
    assert.equal(gap.tokens, tokensOf());
    assert.ok(gap.max_abs < 1e-3, `sampler and trainer log-probs differ by ${gap.max_abs}`);
    await fs.access(path.join(dir(), 'run', 'final', 'adapter_model.safetensors'));
  });
});
