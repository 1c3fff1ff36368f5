// Defects a reviewer hit in the editor (issue 17): each test failed before its fix.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import { TraceBuilder } from '../../builders/traceBuilder';
import type { TrajectoryPanel } from '../../../src/extension/features/traces/trajectoryPanel';
import {
  closeAllEditors,
  row,
  rowAt,
  studio,
  traceFile,
  waitForLibrary,
  waitUntil,
  workspaceFolder,
} from './helpers';

const SHADOW = SAMPLE_RUN_IDS.shadow;

describe('Review defects', () => {
  beforeEach(closeAllEditors);
  after(closeAllEditors);

  it("a turn whose tool calls did not parse opens its raw text, the cursor and an error at the parse error's position", async () => {
    const api = await studio();
    const turn = await rowAt(api, [SHADOW, 'e2 retail-test-0012', 'turn 2']);
    assert.equal(turn.description, 'parse error JSON_DECODE_ERROR');
    // It used to have no command: clicking it opened nothing.
    assert.equal(turn.item.command?.command, 'rehearsal.showTurnText');
    await vscode.commands.executeCommand(
      turn.item.command.command,
      ...(turn.item.command.arguments ?? []),
    );
    const editor = vscode.window.activeTextEditor;
    assert.ok(editor, 'an editor opened');
    assert.equal(editor.document.uri.scheme, 'rehearsal-turn');
    assert.match(editor.document.getText(), /<tool_call>/);
    const diagnostics = vscode.languages.getDiagnostics(editor.document.uri);
    assert.equal(diagnostics.length, 1);
    assert.match(diagnostics[0].message, /^act parse error JSON_DECODE_ERROR: /);
    assert.ok(
      editor.selection.active.isEqual(diagnostics[0].range.start),
      'the cursor is at the error',
    );
    assert.ok(
      editor.document.offsetAt(editor.selection.active) >
        editor.document.getText().indexOf('<tool_call>'),
      'inside the tool call',
    );
  });

  it('"Open Trajectory" from the palette takes the episode selected in the Trace Explorer', async () => {
    const api = await studio();
    await vscode.commands.executeCommand('workbench.view.extension.rehearsal');
    const episode = await rowAt(api, [SHADOW, 'e3 retail-test-0031']);
    await api.services.explorerTree!.reveal(episode.node, { select: true, focus: true });
    await waitUntil([api.services.explorerTree!.onDidChangeSelection], 'the selection', () =>
      assert.equal(api.services.explorerTree!.selection[0]?.entityId, 'e3'),
    );
    const panel = await vscode.commands.executeCommand<TrajectoryPanel | undefined>(
      'rehearsal.openTrajectory',
    );
    assert.ok(panel, 'no episode was asked for: the selection is the episode');
    await waitUntil(
      [panel.onDidPost],
      'the snapshot',
      () => assert.equal(panel.lastPosted?.snapshot.episode.episodeId, 'e3'),
      20_000,
    );
    assert.equal(panel.lastPosted!.snapshot.file, traceFile(SHADOW));
  });

  it("a run's model folder inside the workspace shows relative to it, not as an absolute path", async () => {
    const api = await studio();
    const runId = '20261202-090000-shadow-own-model';
    const file = path.join(workspaceFolder(), '.rehearsal', 'runs', runId, 'trace.jsonl');
    const trace = new TraceBuilder(
      runId,
      'shadow',
      path.join(workspaceFolder(), 'checkpoints', 'sft-3'),
    );
    trace.episode('retail-test-0007').end({ success: false, reward: 0 });
    await fs.mkdir(path.dirname(file), { recursive: true });
    await trace.end().write(file);
    await vscode.commands.executeCommand('rehearsal.refreshTraces');
    await waitForLibrary(api, 'the run', async () => {
      const run = await row(api, runId);
      assert.equal(run.description, '0/1 success · checkpoints/sft-3 · 2026-12-02 09:00');
      assert.equal(run.icon, 'diff-modified', 'no success: not a green check');
    });
  });
});
