import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { readTraceEvents } from '../../../src/core/trace/format/reader';
import { runsFolder } from '../../../src/core/trace/format/discover';
import { TraceWriter } from '../../../src/core/trace/format/writer';
import type { TrajectoryPanel } from '../../../src/extension/features/traces/trajectoryPanel';
import { PRIVATE_RUN_OUTCOMES, recordPrivateRun } from '../../builders/privateRun';
import { sampleTraceFile } from '../../builders/sampleWorkspace';
import type { Row } from './helpers';
import {
  activeDiffTab,
  closeAllEditors,
  row,
  rows,
  studio,
  waitForLibrary,
  waitUntil,
  workspaceFolder,
} from './helpers';

const [REFUSED_LINE, NO_WRITE_LINE] = PRIVATE_RUN_OUTCOMES.split('\n');
const COMMITTED = 'e4 bank-foresight-0001 (committed)';

/** Labels and descriptions, the attempts' outcomes left out (they are the scripted checks'). */
const shown = (list: Row[]) =>
  list.map((r) => [r.label, r.description.replace(/ · (success|failure) · reward \d\.\d\d/, '')]);

/** The rows under the committed episode's memory row, once the library has the run. */
async function memoryRows(api: Awaited<ReturnType<typeof studio>>, runId: string) {
  const committed = await row(api, COMMITTED, (await row(api, runId)).node);
  const memory = (await rows(api, committed.node))[0];
  return { committed, memory, children: await rows(api, memory.node) };
}

describe('Rehearsal memory (private rehearsal)', () => {
  beforeEach(closeAllEditors);
  after(closeAllEditors);

  it('a committed episode opens on the memory it read: each line with its attempts, each attempt with its lines; a line’s call opens its diff', async () => {
    const api = await studio();
    const runId = '20261130-090000-private-memory';
    await recordPrivateRun(runsFolder(workspaceFolder()), runId);
    await vscode.commands.executeCommand('rehearsal.refreshTraces');
    await waitForLibrary(api, `the run ${runId}`, async () => {
      await row(api, runId);
    });
    const { memory, children } = await memoryRows(api, runId);
    assert.equal(memory.label, 'rehearsal memory');
    assert.equal(memory.description, 'outcomes · from 3 imagined attempts (e1–e3)');
    assert.equal(memory.item.collapsibleState, vscode.TreeItemCollapsibleState.Collapsed);
    assert.deepEqual(shown(children), [
      [REFUSED_LINE, 'attempts 1, 2'],
      [NO_WRITE_LINE, 'attempt 3'],
      ['attempt 1', 'e1 · line 1'],
      ['attempt 2', 'e2 · line 1'],
      ['attempt 3', 'e3 · line 2'],
    ]);

    // Open Trajectory on the memory's row opens the committed episode that read it.
    const committedPanel = await vscode.commands.executeCommand<TrajectoryPanel>(
      'rehearsal.openTrajectory',
      memory.node,
    );
    assert.equal(committedPanel.episodeId, 'e4');

    // The refused line opens on the imagined calls that made it; the first opens its diff.
    const calls = await rows(api, children[0].node);
    assert.deepEqual(shown(calls), [
      ['attempt 1 · transfer_between_accounts', 'e1.t2.c1'],
      ['attempt 2 · transfer_between_accounts', 'e2.t2.c1'],
    ]);
    const open = calls[0].item.command;
    assert.ok(open, 'a call row has a command');
    await vscode.commands.executeCommand(open.command, ...(open.arguments ?? []));
    const { tab } = activeDiffTab();
    assert.match(tab.label, /transfer_between_accounts e1\.t2\.c1/);

    // The no-write line opens on the attempt it names, which opens its Trajectory.
    const named = await rows(api, children[1].node);
    assert.deepEqual(
      named.map((r) => r.label),
      ['attempt 3'],
    );
    const attempt = named[0].item.command;
    assert.ok(attempt, 'an attempt row has a command');
    const panel = await vscode.commands.executeCommand<TrajectoryPanel>(
      attempt.command,
      ...(attempt.arguments ?? []),
    );
    assert.equal(panel.episodeId, 'e3');
    await waitUntil([vscode.window.tabGroups.onDidChangeTabs], 'the attempt’s Trajectory tab', () =>
      assert.equal(
        vscode.window.tabGroups.activeTabGroup.activeTab?.label,
        `Trajectory e3 · ${runId}`,
      ),
    );
  });

  it('the Trajectory panel of the committed episode shows its memory line by line, with the calls behind each line', async () => {
    const api = await studio();
    const runId = '20261130-091000-private-panel';
    const file = (await recordPrivateRun(runsFolder(workspaceFolder()), runId)).traceFile;
    await api.services.library.add(file);
    const panel = await vscode.commands.executeCommand<TrajectoryPanel>(
      'rehearsal.openTrajectory',
      { file, episodeId: 'e4' },
    );
    await waitUntil(
      [panel.onDidPost],
      'the committed episode’s snapshot',
      () => assert.ok(panel.lastPosted?.snapshot.memory),
      20_000,
    );
    const memory = panel.lastPosted!.snapshot.memory!;
    assert.equal(memory.kind, 'outcomes');
    assert.equal(memory.mapped, true);
    assert.deepEqual(
      memory.lines.map((l) => [l.text, l.attempts, l.calls.map((c) => c.callId)]),
      [
        [REFUSED_LINE, [1, 2], ['e1.t2.c1', 'e2.t2.c1']],
        [NO_WRITE_LINE, [3], []],
      ],
    );
    assert.deepEqual(
      memory.attempts.map((a) => [a.episodeId, a.lines]),
      [
        ['e1', [0]],
        ['e2', [0]],
        ['e3', [1]],
      ],
    );
  });

  it('a run being written shows the memory as soon as the committed episode starts', async () => {
    const api = await studio();
    const runId = '20261130-092000-private-live';
    // The run is recorded elsewhere, then written into the workspace as a run writes it.
    const elsewhere = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-memory-'));
    try {
      const recorded = await recordPrivateRun(elsewhere, runId);
      const { events } = await readTraceEvents(recorded.traceFile);
      const started = events.findIndex((e) => e.type === 'episode' && e.role === 'committed');
      const writer = await TraceWriter.open(sampleTraceFile(workspaceFolder(), runId), {
        durable: true,
      });
      try {
        for (const e of events.slice(0, started + 1)) await writer.append(e);
        await waitForLibrary(
          api,
          'the committed episode, not yet acting, and its memory',
          async () => {
            const { committed, children } = await memoryRows(api, runId);
            assert.equal(committed.description, 'running');
            assert.deepEqual(
              children.map((r) => r.label),
              [REFUSED_LINE, NO_WRITE_LINE, 'attempt 1', 'attempt 2', 'attempt 3'],
            );
          },
        );
        for (const e of events.slice(started + 1)) await writer.append(e);
        await waitForLibrary(api, 'the committed episode’s turns after its memory', async () => {
          const committed = await row(api, COMMITTED, (await row(api, runId)).node);
          assert.deepEqual(
            (await rows(api, committed.node)).map((r) => r.label),
            ['rehearsal memory', 'turn 1', 'turn 2', 'turn 3'],
          );
        });
      } finally {
        await writer.close();
      }
    } finally {
      await fs.rm(elsewhere, { recursive: true, force: true });
    }
  });
});
