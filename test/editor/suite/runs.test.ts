import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RunSummary } from '../../../src/core/runner/runner';
import { readTraceEvents } from '../../../src/core/trace/format/reader';
import { runIdShort } from '../../../src/core/trace/format/ids';
import type { Row } from './helpers';
import { rows, studio, traceFile, waitUntil, workspaceFolder } from './helpers';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import { FIXTURE_TASK } from '../fixture';
import { startJudgeServer } from '../../support/judgeServer';

const taskUri = () =>
  vscode.Uri.file(path.join(workspaceFolder(), 'tasks', `${FIXTURE_TASK}.task.json`));
const config = () => vscode.workspace.getConfiguration('rehearsal');

/** Every row under `node`, depth first. */
async function descendants(
  api: Awaited<ReturnType<typeof studio>>,
  parent: Row['node'],
): Promise<Row[]> {
  const out: Row[] = [];
  for (const r of await rows(api, parent)) out.push(r, ...(await descendants(api, r.node)));
  return out;
}

describe('Running tasks from the editor', function () {
  this.timeout(90_000);
  before(async () => {
    await studio();
    await vscode.commands.executeCommand('rehearsal.selectPolicy', { kind: 'reference' });
  });
  after(async () => {
    await config().update('run.episodesPerTask', undefined, vscode.ConfigurationTarget.Workspace);
  });

  it('Select Policy remembers the choice for the workspace without writing its settings, and shows it in the status bar', async () => {
    const api = await studio();
    // Issue 27: the choice was written to .vscode/settings.json unasked.
    assert.equal(config().inspect('policy.kind')?.workspaceValue, undefined);
    const settingsFile = path.join(workspaceFolder(), '.vscode', 'settings.json');
    const settings = await fs.readFile(settingsFile, 'utf8').catch(() => '');
    assert.ok(!settings.includes('rehearsal.policy'), settings);
    assert.equal(api.services.runs.statusItem.text, '$(hubot) reference · auto');
    assert.match(String(api.services.runs.statusItem.tooltip), /chosen with Select Policy/);
    assert.equal(api.services.runs.statusItem.command, 'rehearsal.selectPolicy');

    // A policy setting edited afterwards wins: the person changed it last.
    await config().update('policy.kind', 'default', vscode.ConfigurationTarget.Workspace);
    try {
      await waitUntil(
        [vscode.workspace.onDidChangeConfiguration],
        'the status bar follows the edited setting',
        () => assert.match(api.services.runs.statusItem.text, /^\$\(hubot\) default/),
      );
      assert.match(String(api.services.runs.statusItem.tooltip), /from the settings/);
    } finally {
      await config().update('policy.kind', undefined, vscode.ConfigurationTarget.Workspace);
      await vscode.commands.executeCommand('rehearsal.selectPolicy', { kind: 'reference' });
    }
    assert.equal(api.services.runs.statusItem.text, '$(hubot) reference · auto');
  });

  it('runs a built-in task: the trace is written under .rehearsal/runs and its calls appear in the tree while it runs', async () => {
    const api = await studio();
    const seenWhileRunning: string[] = [];
    let statusWhileRunning = '';
    // Every change of the library during the run: what the Trace Explorer shows at that moment.
    const watch = api.services.library.onDidChange(
      () =>
        void (async () => {
          const file = api.services.runs.currentTrace;
          const index = file ? api.services.library.index(file) : undefined;
          if (!file || !index || index.runEnd) return;
          statusWhileRunning ||= api.services.runs.statusItem.text;
          const run = (await rows(api)).find((r) => r.node.file === file);
          if (!run) return;
          for (const r of await descendants(api, run.node))
            if (r.node.kind === 'call') seenWhileRunning.push(`${r.label} | ${r.description}`);
        })(),
    );
    let summary: RunSummary | undefined;
    try {
      summary = await vscode.commands.executeCommand<RunSummary>('rehearsal.runTask', taskUri());
    } finally {
      watch.dispose();
    }
    assert.ok(summary, 'the command returns the run');
    assert.equal(summary.status, 'completed');
    assert.deepEqual(
      summary.episodes.map((e) => [e.taskId, e.success, e.reward]),
      [[FIXTURE_TASK, true, 1]],
    );
    assert.equal(
      summary.traceFile,
      path.join(workspaceFolder(), '.rehearsal', 'runs', summary.runId, 'trace.jsonl'),
    );
    assert.ok(
      seenWhileRunning.includes('find_user_id_by_name_zip | not rehearsed'),
      `calls seen before run.end:\n${seenWhileRunning.join('\n')}`,
    );
    assert.match(statusWhileRunning, /^\$\(sync~spin\) reference · /);
    const { events } = await readTraceEvents(summary.traceFile);
    assert.deepEqual(
      events.filter((e) => e.type === 'call.actual').map((e) => e.type === 'call.actual' && e.tool),
      ['find_user_id_by_name_zip', 'get_order_details', 'cancel_pending_order'],
    );
    const run = (await rows(api)).find((r) => r.label === runIdShort(summary!.runId));
    assert.ok(run, 'the finished run is listed');
    assert.match(run.label, /^shadow-/);
    assert.match(run.description, /^1\/1 success · reference · \d{4}-\d\d-\d\d \d\d:\d\d$/);
    // The notification counts as the tree does (issue 27: it said 4/10 where the tree said 4/8).
    assert.match(api.services.runs.lastReport ?? '', /: completed, 1 episode, 1\/1 success · mean/);
    assert.equal(run.icon, 'pass');
    assert.equal(api.services.runs.running, false);
    assert.equal(api.services.runs.statusItem.text, '$(hubot) reference · auto');
  });

  it('offers Run Task and Run with Private Rehearsal as CodeLenses on a task file; the Run Task lens runs it', async () => {
    await studio();
    const doc = await vscode.workspace.openTextDocument(taskUri());
    await vscode.window.showTextDocument(doc);
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>(
      'vscode.executeCodeLensProvider',
      doc.uri,
    );
    assert.deepEqual(
      lenses.map((l) => [l.command?.title, l.command?.command]),
      [
        ['$(play) Run Task', 'rehearsal.runTask'],
        ['$(run-all) Run with Private Rehearsal', 'rehearsal.runTaskPrivate'],
      ],
    );
    const lens = lenses[0].command!;
    const summary = await vscode.commands.executeCommand<RunSummary>(
      lens.command,
      ...(lens.arguments ?? []),
    );
    assert.equal(summary.status, 'completed');
    assert.deepEqual(
      summary.episodes.map((e) => e.taskId),
      [FIXTURE_TASK],
    );
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('Stop Run cancels the run in progress; the trace ends with run.end cancelled', async () => {
    const api = await studio();
    await config().update('run.episodesPerTask', 50, vscode.ConfigurationTarget.Workspace);
    let summary: RunSummary;
    try {
      const started = vscode.commands.executeCommand<RunSummary>('rehearsal.runTask', taskUri());
      await waitUntil(
        [api.services.library.onDidChange],
        'the first episode to end',
        () => {
          const file = api.services.runs.currentTrace;
          assert.ok(
            file && api.services.library.index(file)?.episodes.some((e) => e.end),
            'no episode has ended yet',
          );
        },
        60_000,
      );
      await vscode.commands.executeCommand('rehearsal.stopRun');
      summary = await started;
    } finally {
      // The tests after this one play one episode a task.
      await config().update('run.episodesPerTask', undefined, vscode.ConfigurationTarget.Workspace);
    }
    assert.equal(summary.status, 'cancelled');
    assert.ok(summary.episodes.length < 50, `${summary.episodes.length} episodes ran`);
    const { events } = await readTraceEvents(summary.traceFile);
    const end = events[events.length - 1];
    assert.equal(end.type === 'run.end' && end.status, 'cancelled');
  });

  it('refuses private rehearsal and replay with the reference policy, which does not rehearse', async () => {
    const api = await studio();
    const before = (await fs.readdir(path.join(workspaceFolder(), '.rehearsal', 'runs'))).length;
    assert.equal(
      await vscode.commands.executeCommand('rehearsal.runTaskPrivate', taskUri()),
      undefined,
    );
    const someTrace = api.services.library.files[0];
    assert.equal(
      await vscode.commands.executeCommand('rehearsal.replayTrace', { file: someTrace }),
      undefined,
    );
    assert.equal(
      (await fs.readdir(path.join(workspaceFolder(), '.rehearsal', 'runs'))).length,
      before,
      'no run was started',
    );
  });

  it('grades judge items with the judge the settings name and the key Set Judge API Key stored (issue 29)', async () => {
    // The reference policy plays the task's solution on every machine; the scripted test model, trained
    // only on its probe prompts, says whatever its weights happen to say on a retail prompt (issue 39).
    await studio();
    const key = 'editor-judge-key-0123456789';
    // A real endpoint that passes an item about cancelling and fails one about a refund.
    const judge = await startJudgeServer({ key, answer: (q) => /cancel/i.test(q) });
    const task = JSON.parse(await fs.readFile(taskUri().fsPath, 'utf8')) as Record<string, unknown>;
    const judged = vscode.Uri.file(
      path.join(workspaceFolder(), 'tasks', 'retail-0000-judged.task.json'),
    );
    await fs.writeFile(
      judged.fsPath,
      JSON.stringify({
        ...task,
        id: 'retail-0000-judged',
        checks: [
          { id: 'cancelled', kind: 'judge', question: 'Does the assistant cancel the order?' },
          { id: 'refunded', kind: 'judge', question: 'Does the assistant offer a refund?' },
        ],
      }),
    );
    const verdicts = async (summary: RunSummary) => {
      const { events } = await readTraceEvents(summary.traceFile);
      const end = events.find((e) => e.type === 'episode.end');
      assert.ok(end?.type === 'episode.end');
      return Object.fromEntries((end.checks ?? []).map((c) => [c.id, c.passed]));
    };
    try {
      await config().update('judge.endpoint', judge.url, vscode.ConfigurationTarget.Workspace);
      await config().update('judge.model', 'judge', vscode.ConfigurationTarget.Workspace);
      await vscode.commands.executeCommand('rehearsal.setJudgeApiKey', key);
      let summary = await vscode.commands.executeCommand<RunSummary>('rehearsal.runTask', judged);
      assert.equal(summary.status, 'completed', JSON.stringify(summary.error));
      const [run] = (await readTraceEvents(summary.traceFile)).events;
      assert.equal(run.type === 'run' && run.policy.kind, 'reference');
      assert.deepEqual(await verdicts(summary), { cancelled: true, refunded: false });
      assert.equal(summary.episodes[0].reward, 0.5);
      assert.equal(judge.asked.length, 2);
      // The key is in secret storage, not in any setting; removed, the judge refuses the run's requests.
      const settings = await fs.readFile(
        path.join(workspaceFolder(), '.vscode', 'settings.json'),
        'utf8',
      );
      assert.ok(!settings.includes(key), 'the key is not in settings.json');
      await vscode.commands.executeCommand('rehearsal.setJudgeApiKey', '');
      summary = await vscode.commands.executeCommand<RunSummary>('rehearsal.runTask', judged);
      assert.deepEqual(await verdicts(summary), { cancelled: null, refunded: null });
      assert.equal(summary.episodes[0].reward, null);
    } finally {
      await config().update('judge.endpoint', undefined, vscode.ConfigurationTarget.Workspace);
      await config().update('judge.model', undefined, vscode.ConfigurationTarget.Workspace);
      await fs.rm(judged.fsPath, { force: true });
      await judge.close();
    }
  });

  it('says what is wrong with a task file instead of running it', async () => {
    const bad = path.join(workspaceFolder(), 'tasks', 'broken.task.json');
    await fs.writeFile(bad, '{"version": 1, "id": "broken"}');
    try {
      assert.equal(
        await vscode.commands.executeCommand('rehearsal.runTask', vscode.Uri.file(bad)),
        undefined,
      );
    } finally {
      await fs.rm(bad);
    }
  });
});

describe('Running with a model folder that rehearses', function () {
  this.timeout(120_000);
  const model = process.env.REHEARSAL_EDITOR_MODEL;
  before(async () => {
    assert.ok(model, 'the harness names the scripted test model in REHEARSAL_EDITOR_MODEL');
    await studio();
    await vscode.commands.executeCommand('rehearsal.selectPolicy', {
      kind: 'modelFolder',
      folder: model,
    });
    await config().update('run.privateRehearsal.budget', 2, vscode.ConfigurationTarget.Workspace);
  });
  after(async () => {
    await config().update(
      'run.privateRehearsal.budget',
      undefined,
      vscode.ConfigurationTarget.Workspace,
    );
    await vscode.commands.executeCommand('rehearsal.selectPolicy', { kind: 'reference' });
  });

  it('Select Policy with a model folder shows it in the status bar', async () => {
    const api = await studio();
    assert.equal(
      api.services.runs.statusItem.text,
      `$(hubot) model ${path.basename(model!)} · auto`,
    );
  });

  it('Run with Private Rehearsal plays the imagined episodes, then the committed one, on the policy host; the status bar shows its speed and progress', async () => {
    const api = await studio();
    const statusTexts = new Set<string>();
    const watch = api.services.library.onDidChange(() => {
      if (api.services.runs.running) statusTexts.add(api.services.runs.statusItem.text);
    });
    let summary: RunSummary;
    try {
      summary = await vscode.commands.executeCommand<RunSummary>(
        'rehearsal.runTaskPrivate',
        taskUri(),
      );
    } finally {
      watch.dispose();
    }
    const seen = [...statusTexts].join('\n');
    assert.ok(
      [...statusTexts].some((t) =>
        /^\$\(sync~spin\) model scripted-[0-9a-f]+ · .*\d+\.\d tok\/s/.test(t),
      ),
      `status bar texts while running:\n${seen}`,
    );
    assert.ok(
      [...statusTexts].some((t) => / · \d+\/\d+ episodes$/.test(t)),
      `status bar texts while running:\n${seen}`,
    );
    assert.ok(summary, 'the command returns the run');
    assert.equal(summary.status, 'completed', JSON.stringify(summary.error));
    const { events } = await readTraceEvents(summary.traceFile);
    const episodes = events.flatMap((e) => (e.type === 'episode' ? [`${e.mode} ${e.role}`] : []));
    assert.deepEqual(episodes, ['imagine imagined', 'imagine imagined', 'shadow committed']);
    const run = events[0];
    assert.equal(run.type === 'run' && run.mode, 'private');
    assert.equal(run.type === 'run' && run.policy.kind, 'onnx');
    await waitUntil(
      [api.services.library.onDidChange],
      'the private run in the Trace Explorer',
      async () => {
        const row = (await rows(api)).find((r) => r.label === runIdShort(summary.runId));
        assert.ok(row, 'the run is listed');
        assert.match(row.label, /^private-/);
      },
    );
    // The committed episode opens on the memory the policy condensed, and the attempts behind it
    // (what the memory says is the model's: only its place and its attempts are asserted).
    const runRow = (await rows(api)).find((r) => r.label === runIdShort(summary.runId))!;
    const committed = (await rows(api, runRow.node)).find((r) => r.label.endsWith('(committed)'));
    assert.ok(committed, 'the committed episode is listed');
    const [memory] = await rows(api, committed.node);
    assert.deepEqual(
      [memory.label, memory.description],
      ['rehearsal memory', 'condensed · from 2 imagined attempts (e1–e2)'],
    );
    const attempts = (await rows(api, memory.node)).filter((r) => r.node.kind === 'attempt');
    assert.deepEqual(
      attempts.map((r) => [r.label, r.node.entityId]),
      [
        ['attempt 1', 'e1'],
        ['attempt 2', 'e2'],
      ],
    );
  });

  it('Replay Trace with Policy re-rehearses every call of a recorded run and runs no tool', async () => {
    const api = await studio();
    const source = traceFile(SAMPLE_RUN_IDS.shadow);
    const summary = await vscode.commands.executeCommand<RunSummary>('rehearsal.replayTrace', {
      file: source,
    });
    assert.ok(summary, 'the command returns the run');
    assert.equal(summary.status, 'completed', JSON.stringify(summary.error));
    const recorded = (await readTraceEvents(source)).events.filter(
      (e) => e.type === 'call.actual',
    ).length;
    const { events } = await readTraceEvents(summary.traceFile);
    assert.equal(events[0].type === 'run' && events[0].mode, 'replay');
    assert.equal(
      events.filter((e) => e.type === 'call.rehearsal').length,
      recorded,
      'one new rehearsal per recorded call',
    );
    await waitUntil(
      [api.services.library.onDidChange],
      'the replay run in the Trace Explorer',
      async () => {
        const row = (await rows(api)).find((r) => r.label === runIdShort(summary.runId));
        assert.ok(row, 'the run is listed');
        assert.match(row.label, /^replay-/);
      },
    );
  });
});
