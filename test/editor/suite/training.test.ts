import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunSummary } from '../../../src/core/runner/runner';
import { readTraceEvents } from '../../../src/core/trace/format/reader';
import { planLaunch } from '../../../src/core/training/launch/backends';
import { formatCommand } from '../../../src/core/training/launch/launchPlan';
import { loadRunSpec } from '../../../src/core/training/launch/runSpec';
import type { ComparePanel } from '../../../src/extension/features/training/compareFidelityPanel';
import type { RehearsalStudioApi } from '../../../src/extension/extension';
import type { PolicyComparison } from '../../../src/core/training/comparePolicies';
import type { TrainingDashboard } from '../../../src/extension/features/training/trainingDashboard';
import type { TrainingRun } from '../../../src/core/training/run/trainingRun';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import { weatherRows } from '../../support/trainingRows';
import { closeAllEditors, studio, traceFile, waitUntil, workspaceFolder } from './helpers';

const trainingFolder = () => path.join(workspaceFolder(), 'training');

/** Writes `<workspace>/training/<name>.run.json`: sft from the scripted test model on 16 rows, on one CPU thread. */
async function writeRunFile(
  name: string,
  train: Record<string, unknown>,
  base = process.env.REHEARSAL_EDITOR_MODEL!,
): Promise<string> {
  await fs.mkdir(trainingFolder(), { recursive: true });
  await fs.writeFile(path.join(trainingFolder(), 'rows.jsonl'), weatherRows());
  const file = path.join(trainingFolder(), `${name}.run.json`);
  await fs.writeFile(
    file,
    JSON.stringify(
      {
        name,
        objective: 'sft',
        base,
        data: { train: ['rows.jsonl'] },
        seed: 0,
        hardware: { device: 'cpu', threads: 1 },
        hyperparameters: { train: { batch_size: 4, micro_batch_size: 4, log_every: 1, ...train } },
      },
      null,
      1,
    ),
  );
  return file;
}

/** The dashboard of a run, once the editor has opened it. */
function dashboardOf(api: RehearsalStudioApi, run: TrainingRun): TrainingDashboard {
  const dashboard = api.services.dashboards.open.find((d) => d.run === run);
  assert.ok(dashboard, `no dashboard is open for ${run.outDir}`);
  return dashboard;
}

/** What the dashboard's webview reported drawing, each time, with the run's status at that moment. */
function recordRenders(dashboard: TrainingDashboard): {
  renders: { loss: number; tokens: number; status: string }[];
  dispose(): void;
} {
  const renders: { loss: number; tokens: number; status: string }[] = [];
  const subscription = dashboard.onDidRender((r) =>
    renders.push({
      loss: r.points.loss ?? 0,
      tokens: r.points.tokensPerSecond ?? 0,
      status: dashboard.lastPosted?.state.status ?? '?',
    }),
  );
  return { renders, dispose: () => subscription.dispose() };
}

describe('Training runs from the editor', function () {
  this.timeout(120_000);
  const shownCommands: { message: string; detail: string }[] = [];
  let run: TrainingRun;

  before(async function () {
    assert.ok(
      process.env.REHEARSAL_EDITOR_MODEL,
      'the harness names the scripted test model in REHEARSAL_EDITOR_MODEL',
    );
    const api = await studio();
    // Stands in for the person at the modal: reads what it shows and presses Start.
    api.services.training.confirmLaunch = (message, detail) => {
      shownCommands.push({ message, detail });
      return Promise.resolve(true);
    };
    await closeAllEditors();
  });
  after(async () => {
    // Back to the default policy (Use Trained Model as Policy chose the trained one).
    await vscode.commands.executeCommand('rehearsal.selectPolicy', { kind: 'default' });
    await closeAllEditors();
  });

  it('Start Training Run shows the exact command first, then the dashboard plots the steps as the trainer streams them', async () => {
    const api = await studio();
    // export_at_end off: the editor exports the final model itself when the run is done.
    // Enough steps that the dashboard is seen plotting while the run goes on: 12 tiny steps could end
    // before its first render once the trainer's allocator made them fast, and 48 once ended before
    // the webview had loaded.
    const steps = 160;
    const file = await writeRunFile('editor-tiny', {
      steps,
      checkpoint_every: 40,
      export_at_end: false,
    });
    const expected = formatCommand(planLaunch(await loadRunSpec(file), 'local'));
    run = (await vscode.commands.executeCommand<TrainingRun>('rehearsal.startTrainingRun', file))!;
    assert.ok(run, 'the command returns the run it started');
    assert.deepEqual(
      shownCommands.map((c) => c.message),
      ['Start the training run "editor-tiny"?'],
    );
    assert.equal(
      shownCommands[0].detail.split('\n')[0],
      expected,
      'the confirmation shows the exact command',
    );
    assert.match(shownCommands[0].detail, /starts from the base model/);
    // What the run will hold in GPU memory, planned from its base's config.json as the dry run plans it.
    assert.match(
      shownCommands[0].detail,
      /memory plan per GPU: full fine-tuning[\s\S]*total +\d+\.\d GiB of 80\.0 GiB: fits/,
    );

    const dashboard = dashboardOf(api, run);
    await waitUntil([vscode.window.tabGroups.onDidChangeTabs], "the dashboard's tab", () => {
      const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
      assert.ok(
        tab?.input instanceof vscode.TabInputWebview && tab.label === 'Training editor-tiny',
        `the active tab is ${tab?.label}`,
      );
    });
    const seen = recordRenders(dashboard);
    try {
      await waitUntil(
        [dashboard.onDidRender],
        'the webview to plot a first step while the run goes on',
        () => {
          assert.ok(
            seen.renders.some((r) => r.loss > 0 && r.status === 'running'),
            JSON.stringify(seen.renders),
          );
        },
        60_000,
      );
      const outcome = await run.finished;
      assert.equal(outcome?.status, 'done', JSON.stringify(outcome?.error));
      // The objective's loss and tokens/s each step; the loss of each role in the steps whose batch had it.
      const loss = run.state.series.loss;
      assert.equal(loss.objective.length, steps);
      assert.ok(loss.act.length > 0 && loss.rehearse.length > 0, JSON.stringify(loss));
      const lossPoints = loss.objective.length + loss.act.length + loss.rehearse.length;
      await waitUntil(
        [dashboard.onDidRender],
        'the last step plotted',
        () =>
          assert.deepEqual(seen.renders.at(-1), {
            loss: lossPoints,
            tokens: steps,
            status: 'done',
          }),
        20_000,
      );
    } finally {
      seen.dispose();
    }
    const counts = seen.renders.map((r) => r.loss);
    assert.deepEqual(
      counts,
      [...counts].sort((a, b) => a - b),
      'the plots only grow',
    );
    assert.ok(
      counts.some((n) => n > 0 && n < counts.at(-1)!),
      `the plots grew step by step, not all at the end: ${counts.join(', ')}`,
    );

    const final = path.join(trainingFolder(), '.rehearsal', 'training', 'editor-tiny', 'final');
    await waitUntil(
      [run.onDidChange],
      'the export of the final model',
      () => assert.equal(run.afterRun?.phase, 'exported'),
      60_000,
    );
    assert.ok(
      existsSync(path.join(final, 'onnx', 'model.onnx')),
      'the editor exported the final model to ONNX',
    );
    await waitUntil([dashboard.onDidPost], 'the snapshot after the export', () => {
      const s = dashboard.lastPosted!;
      assert.equal(s.model, final);
      assert.deepEqual(s.actions, { cancel: false, resume: false, usePolicy: true, compare: true });
      assert.deepEqual(s.state.progress, {
        unit: 'steps',
        done: steps,
        total: steps,
        secondsLeft: 0,
      });
      assert.equal(s.command, expected);
    });
    assert.ok(
      existsSync(path.join(run.outDir, 'trainer.log')),
      "the launcher keeps the trainer's log in the run folder",
    );
  });

  it('Use Trained Model as Policy selects the new model, and the next run starts the policy host on it without a restart', async () => {
    const api = await studio();
    assert.ok(run?.model, 'the previous test trained and exported a model');
    const choice = await vscode.commands.executeCommand('rehearsal.useTrainedPolicy', {
      outDir: run.outDir,
    });
    assert.deepEqual(choice, { kind: 'modelFolder', folder: run.model });
    assert.equal(api.services.runs.statusItem.text, '$(hubot) model final · auto');
    const summary = await vscode.commands.executeCommand<RunSummary>('rehearsal.replayTrace', {
      file: traceFile(SAMPLE_RUN_IDS.shadow),
    });
    assert.equal(summary.status, 'completed', JSON.stringify(summary.error));
    const first = (await readTraceEvents(summary.traceFile)).events[0];
    assert.equal(
      first.type === 'run' && first.policy.id,
      run.model,
      'the replay ran the trained model',
    );
  });

  it('Compare Policy Fidelity replays a held-out trace with the base and the trained model and shows per-tool deltas as a table and bars', async () => {
    await studio();
    const trace = traceFile(SAMPLE_RUN_IDS.shadow);
    const result = await vscode.commands.executeCommand<{
      comparison: PolicyComparison;
      panel: ComparePanel;
    }>('rehearsal.compareFidelity', { outDir: run.outDir, trace });
    assert.ok(result, 'the comparison ran');
    const { comparison, panel } = result;
    assert.equal(
      comparison.a.name,
      process.env.REHEARSAL_EDITOR_MODEL,
      'A is the base model of the run',
    );
    assert.equal(comparison.b?.name, run.model, 'B is the trained model');
    const tools = [
      ...new Set(
        (await readTraceEvents(trace)).events.flatMap((e) =>
          e.type === 'call.actual' ? [e.tool] : [],
        ),
      ),
    ].sort();
    assert.deepEqual(
      comparison.comparison?.perTool.map((t) => t.tool),
      tools,
    );
    await waitUntil(
      [panel.onDidRender],
      'the comparison drawn',
      () => {
        assert.equal(panel.lastPosted?.status, 'done');
        assert.equal(
          panel.lastRendered?.rows,
          tools.length + 1,
          'a row per tool and one over all calls',
        );
        assert.ok(
          (panel.lastRendered?.bars ?? 0) >= tools.length,
          `bars drawn: ${panel.lastRendered?.bars}`,
        );
      },
      20_000,
    );
    assert.deepEqual(panel.lastPosted!.table!.header, [
      'tool',
      'calls',
      'validity',
      'exact',
      'field F1',
      'key Jaccard',
      'type',
      'error state',
    ]);
    assert.match(
      panel.lastPosted!.table!.rows[0][3],
      /^(\d\.\d\d|-)→(\d\.\d\d|-) \(([+-]\d\.\d\d|-)\)$/,
    );
    assert.ok(
      panel.lastPosted!.notes.some((n) => n.startsWith('Task success: not measured.')),
      'says that replay measures no task success',
    );
  });

  it('Open Training Run replots a finished run from its events.jsonl (as after a restart of the editor)', async () => {
    const api = await studio();
    const copy = path.join(trainingFolder(), '.rehearsal', 'training', 'editor-tiny-copy');
    await fs.cp(run.outDir, copy, { recursive: true });
    const dashboard = (await vscode.commands.executeCommand<TrainingDashboard>(
      'rehearsal.openTrainingRun',
      copy,
    ))!;
    assert.notEqual(dashboard.run, run, 'a run folder the editor did not start');
    const loss = run.state.series.loss;
    await waitUntil(
      [dashboard.onDidRender],
      'the replotted run',
      () =>
        assert.deepEqual(dashboard.lastRendered?.points, {
          loss: loss.objective.length + loss.act.length + loss.rehearse.length,
          reward: 0,
          groundingNll: 0,
          validation: 0,
          tokensPerSecond: loss.objective.length,
        }),
      20_000,
    );
    const s = dashboard.lastPosted!;
    assert.deepEqual(
      s.state.series,
      run.snapshot().state.series,
      'the same plots as the run had live',
    );
    assert.equal(s.state.status, 'done');
    assert.equal(s.attached, false);
    assert.equal(s.command, run.command, 'the launch record brings back the command');
    assert.ok(api.services.dashboards.open.includes(dashboard));
  });

  it('Cancel stops the trainer keeping its checkpoint; Resume starts it again from that checkpoint and the dashboard goes on', async () => {
    const api = await studio();
    const file = await writeRunFile('editor-cancel', {
      steps: 400,
      checkpoint_every: 2,
      export_at_end: false,
    });
    const started = (await vscode.commands.executeCommand<TrainingRun>(
      'rehearsal.startTrainingRun',
      file,
    ))!;
    await waitUntil(
      [started.onDidChange],
      'a checkpoint',
      () => assert.ok((started.state.lastCheckpoint?.step ?? 0) >= 2),
      60_000,
    );
    await vscode.commands.executeCommand('rehearsal.cancelTrainingRun', { outDir: started.outDir });
    const cancelled = await started.finished;
    assert.equal(cancelled?.status, 'cancelled');
    const dashboard = dashboardOf(api, started);
    await waitUntil([dashboard.onDidPost], 'the cancelled state', () => {
      assert.equal(dashboard.lastPosted?.state.status, 'cancelled');
      assert.deepEqual(dashboard.lastPosted?.actions, {
        cancel: false,
        resume: true,
        usePolicy: false,
        compare: false,
      });
    });
    const kept = cancelled!.lastCheckpoint!.step;
    // The same run, shortened to end soon after the checkpoint it resumes from.
    await writeRunFile('editor-cancel', {
      steps: kept + 2,
      checkpoint_every: 2,
      export_at_end: false,
    });
    shownCommands.length = 0;
    const resumed = (await vscode.commands.executeCommand<TrainingRun>(
      'rehearsal.resumeTrainingRun',
      { outDir: started.outDir },
    ))!;
    assert.equal(resumed, started, 'the same run folder, the same dashboard');
    assert.match(shownCommands[0]?.message ?? '', /^Resume the training run "editor-cancel"\?/);
    assert.match(shownCommands[0].detail, new RegExp(`resumes from \\S+step-0*${kept}`));
    const outcome = await resumed.finished;
    assert.equal(outcome?.status, 'done', JSON.stringify(outcome?.error));
    assert.equal(resumed.state.resumedFrom?.step, kept);
    const steps = resumed.state.series.loss.act.map(([x]) => x);
    assert.deepEqual(
      steps.slice(-3),
      [kept, kept + 1, kept + 2],
      'the plot continues after the checkpoint',
    );
    assert.equal(new Set(steps).size, steps.length, 'no step is plotted twice');
  });

  it('a run file whose base or rows are not there says which before anything starts (issue 27)', async () => {
    const api = await studio();
    const file = await writeRunFile(
      'editor-missing-paths',
      { steps: 2 },
      path.join(workspaceFolder(), 'no-such-model'),
    );
    await fs.rm(path.join(trainingFolder(), 'rows.jsonl'));
    const asked: string[] = [];
    const runs = api.services.training;
    const confirm = runs.confirmLaunch;
    runs.confirmLaunch = async (message) => {
      asked.push(message);
      return false;
    };
    try {
      const started = await vscode.commands.executeCommand<TrainingRun | undefined>(
        'rehearsal.startTrainingRun',
        file,
      );
      assert.equal(started, undefined);
    } finally {
      runs.confirmLaunch = confirm;
    }
    assert.deepEqual(asked, [], 'nothing to confirm: the run cannot start');
    const said = runs.lastLaunchError ?? '';
    assert.match(said, /names 2 paths that are not there/);
    assert.match(said, /\$\.base "\.\.\/no-such-model" .* is not a model folder/);
    assert.match(
      said,
      /\$\.data\.train\[0\] "rows\.jsonl" .* does not exist: export rows there first/,
    );
  });

  it('a launch whose Python is not there shows its code with Set Up Trainer and Open Settings (issue 31)', async () => {
    const api = await studio();
    const file = await writeRunFile('editor-no-python', { steps: 2 });
    const spec = JSON.parse(await fs.readFile(file, 'utf8')) as { hardware: object };
    spec.hardware = { ...spec.hardware, python: path.join(workspaceFolder(), 'no-such-python') };
    await fs.writeFile(file, JSON.stringify(spec));
    const started = await vscode.commands.executeCommand<TrainingRun | undefined>(
      'rehearsal.startTrainingRun',
      file,
    );
    assert.equal(started, undefined);
    const shown = api.services.errors.last;
    assert.equal(shown?.code, 'TRAINER_PYTHON_MISSING');
    assert.match(shown.message, /no-such-python does not exist.*\(TRAINER_PYTHON_MISSING\)$/);
    assert.deepEqual(shown.actions, ['Set Up Trainer', 'Open Settings']);
  });

  it('a run that fails says why on the dashboard and offers Resume', async () => {
    const api = await studio();
    // A model folder (the launch checks that) without the tokenizer the trainer needs.
    const broken = path.join(workspaceFolder(), 'model-without-tokenizer');
    await fs.mkdir(broken, { recursive: true });
    await fs.copyFile(
      path.join(process.env.REHEARSAL_EDITOR_MODEL!, 'config.json'),
      path.join(broken, 'config.json'),
    );
    const file = await writeRunFile('editor-broken', { steps: 2 }, broken);
    const started = (await vscode.commands.executeCommand<TrainingRun>(
      'rehearsal.startTrainingRun',
      file,
    ))!;
    const outcome = await started.finished;
    assert.equal(outcome?.status, 'failed');
    const dashboard = dashboardOf(api, started);
    await waitUntil([dashboard.onDidPost], 'the failure on the dashboard', () => {
      const s = dashboard.lastPosted!;
      assert.equal(s.state.status, 'failed');
      assert.equal(s.state.error?.code, 'TOKENIZER_MISSING');
      assert.match(s.state.error!.message, /model-without-tokenizer/);
      assert.equal(s.actions.resume, true);
    });
  });
});
