// One training-run lifecycle (issue 31): `rehearse train` and the editor's Start Training Run go
// through src/core/training/launch/lifecycle.ts, so for the same run file and hardware they choose
// the same backend, start the same command with the same environment, write the same launch.json
// and trainer config, and export the final model the same way. The trainer here is a stand-in
// script named as the Python (it records how it was started and answers like the trainer), so
// these tests need no torch.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LAUNCH_RECORD } from '../../src/core/training/launch/launchRecord';
import type { TrainingRunResult } from '../../src/core/training/launch/lifecycle';
import {
  chooseBackend,
  prepareTrainingRun,
  startTrainingRun,
} from '../../src/core/training/launch/lifecycle';
import { rehearse } from '../support/cli';
import { useTempDir } from '../support/tempDir';

/**
 * A stand-in for the trainer's Python: appends its argv and the variables the launcher sets to
 * $FAKE_TRAINER_CALLS; `-m trainer export` writes onnx/model.onnx into the model folder; any other
 * command leaves an unexported `final/` in the config's out_dir and reports it in its `done` event.
 */
const FAKE_PYTHON = `#!/usr/bin/env node
const fs = require('node:fs');
const path = require('node:path');
const argv = process.argv.slice(2);
const env = { PYTHONPATH: process.env.PYTHONPATH, OMP_WAIT_POLICY: process.env.OMP_WAIT_POLICY };
fs.appendFileSync(process.env.FAKE_TRAINER_CALLS, JSON.stringify({ argv, env }) + '\\n');
const config = JSON.parse(fs.readFileSync(argv[argv.indexOf('--config') + 1], 'utf8'));
const say = (e) => process.stdout.write(JSON.stringify(e) + '\\n');
if (argv.includes('export')) {
  fs.mkdirSync(path.join(config.model.path, 'onnx'), { recursive: true });
  fs.writeFileSync(path.join(config.model.path, 'onnx', 'model.onnx'), 'graph');
  say({ event: 'done' });
} else {
  const final = path.join(config.out_dir, 'final');
  fs.mkdirSync(final, { recursive: true });
  say({ event: 'start' });
  say({ event: 'step', step: 1, steps: 1, loss: 1 });
  say({ event: 'done', final });
}
`;

/** What one launch left behind: the launch record, the trainer config, the processes started. */
interface Launch {
  record: unknown;
  trainerConfig: unknown;
  calls: { argv: string[]; env: Record<string, string> }[];
  model: string | null;
}

describe('training runs: one lifecycle for the CLI and the editor', function () {
  this.timeout(60_000);
  const dir = useTempDir('training-lifecycle-');
  let python = '';
  let calls = '';
  let savedCalls: string | undefined;

  beforeEach(async () => {
    python = path.join(dir(), 'bin', 'python3');
    calls = path.join(dir(), 'calls.jsonl');
    await fs.mkdir(path.dirname(python));
    await fs.writeFile(python, FAKE_PYTHON, { mode: 0o755 });
    await fs.mkdir(path.join(dir(), 'base'));
    await fs.writeFile(path.join(dir(), 'base', 'config.json'), '{}');
    await fs.writeFile(path.join(dir(), 'rows.jsonl'), '');
    savedCalls = process.env['FAKE_TRAINER_CALLS'];
    process.env['FAKE_TRAINER_CALLS'] = calls;
  });
  afterEach(() => {
    if (savedCalls === undefined) delete process.env['FAKE_TRAINER_CALLS'];
    else process.env['FAKE_TRAINER_CALLS'] = savedCalls;
  });

  async function writeSpec(hardware: Record<string, unknown>): Promise<string> {
    const file = path.join(dir(), 'tiny.run.json');
    await fs.writeFile(
      file,
      JSON.stringify({
        name: 'tiny',
        objective: 'sft',
        base: 'base',
        data: { train: ['rows.jsonl'] },
        hardware: { device: 'cpu', threads: 1, ...hardware },
        hyperparameters: { train: { steps: 1, export_at_end: false } },
      }),
    );
    return file;
  }

  /** Reads what a launch left in the run folder, then removes it for the next launch. */
  async function collect(model: string | null): Promise<Launch> {
    const outDir = path.join(dir(), '.rehearsal', 'training', 'tiny');
    const read = async (name: string) =>
      JSON.parse(await fs.readFile(path.join(outDir, name), 'utf8')) as unknown;
    const launch: Launch = {
      record: await read(LAUNCH_RECORD),
      trainerConfig: await read('trainer-config.json'),
      calls: (await fs.readFile(calls, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Launch['calls'][number]),
      model,
    };
    await fs.rm(outDir, { recursive: true });
    await fs.rm(calls);
    return launch;
  }

  async function viaCli(file: string): Promise<Launch> {
    const r = await rehearse('train', '--config', file, '--python', python, '--json');
    assert.equal(r.code, 0, r.err);
    return collect((JSON.parse(r.out) as { model: string | null }).model);
  }

  /** What the editor's TrainingRuns.start calls: the run file and the Python its settings name. */
  async function viaEditorPath(file: string): Promise<Launch> {
    const prepared = await prepareTrainingRun({
      runFile: file,
      options: { python, envDir: undefined },
    });
    const started = await startTrainingRun(prepared, {});
    const result: TrainingRunResult = await started.done;
    assert.equal(result.outcome.status, 'done', JSON.stringify(result.outcome.error));
    return collect(result.model ?? null);
  }

  it('one process: the same local command, launch.json, trainer config and final export', async () => {
    const file = await writeSpec({});
    const cli = await viaCli(file);
    const editor = await viaEditorPath(file);
    assert.deepEqual(cli, editor);
    const outDir = path.join(dir(), '.rehearsal', 'training', 'tiny');
    assert.deepEqual(cli.record, {
      runFile: file,
      backend: 'local',
      command: `PYTHONPATH=${cli.calls[0].env['PYTHONPATH']} OMP_WAIT_POLICY=PASSIVE ${python} -m trainer sft --config ${outDir}/trainer-config.json`,
    });
    assert.deepEqual(
      cli.calls.map((c) => c.argv.slice(0, 3)),
      [
        ['-m', 'trainer', 'sft'],
        ['-m', 'trainer', 'export'],
      ],
      'the trainer, then the export of its final model (export_at_end is off)',
    );
    assert.equal(cli.model, path.join(outDir, 'final'));
  });

  it('several processes: torchrun chosen from the hardware by both, on the same port when the run file names one', async () => {
    const file = await writeSpec({ processes: 2, master_port: 29517 });
    const cli = await viaCli(file);
    const editor = await viaEditorPath(file);
    assert.deepEqual(cli, editor);
    assert.equal((cli.record as { backend: string }).backend, 'torchrun');
    assert.deepEqual(cli.calls[0].argv.slice(0, 6), [
      '-m',
      'torch.distributed.run',
      '--nproc_per_node',
      '2',
      '--master_port',
      '29517',
    ]);
  });

  it('several processes and no port named: both pick a free one, and otherwise agree', async () => {
    const file = await writeSpec({ processes: 2 });
    const withoutPort = (launch: Launch): Launch =>
      JSON.parse(
        JSON.stringify(launch).replace(/--master_port( |",")\d+/g, '--master_port$1PORT'),
      ) as Launch;
    const cli = await viaCli(file);
    const editor = await viaEditorPath(file);
    assert.match(cli.calls[0].argv.join(' '), /--master_port \d+ /);
    assert.match(editor.calls[0].argv.join(' '), /--master_port \d+ /);
    assert.deepEqual(withoutPort(cli), withoutPort(editor));
  });

  it('the backend follows the hardware; --dry-run plans what the lifecycle plans, port aside', async () => {
    assert.equal(chooseBackend({}), 'local');
    assert.equal(chooseBackend({ processes: 1, nodes: 1 }), 'local');
    assert.equal(chooseBackend({ processes: 4 }), 'torchrun');
    assert.equal(chooseBackend({ nodes: 2 }), 'torchrun');
    const file = await writeSpec({ processes: 2 });
    const r = await rehearse('train', '--config', file, '--python', python, '--dry-run', '--json');
    assert.equal(r.code, 0, r.err);
    const { plan } = JSON.parse(r.out) as { plan: { argv: string[]; backend: string } };
    const prepared = await prepareTrainingRun({
      runFile: file,
      options: { python },
      pickPort: false,
    });
    assert.equal(plan.backend, 'torchrun');
    assert.deepEqual(plan.argv, prepared.plan.argv);
    assert.ok(!plan.argv.includes('--master_port'), 'a dry run picks no port');
  });
});
