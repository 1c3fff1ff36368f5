import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import { activeDiffTab, closeAllEditors, studio, traceFile } from './helpers';

const titles = (lenses: vscode.CodeLens[]) => lenses.map((l) => l.command?.title);

describe('Diff decorations and CodeLenses', () => {
  beforeEach(closeAllEditors);
  after(closeAllEditors);

  it('offers one CodeLens per differing path, on the side where the path is, with the call-level actions on the left', async () => {
    await studio();
    await vscode.commands.executeCommand('rehearsal.showCallDiff', {
      file: traceFile(SAMPLE_RUN_IDS.shadow),
      callId: 'e1.t2.c1',
    });
    const { input } = activeDiffTab();
    const left = await vscode.commands.executeCommand<vscode.CodeLens[]>(
      'vscode.executeCodeLensProvider',
      input.original,
    );
    const right = await vscode.commands.executeCommand<vscode.CodeLens[]>(
      'vscode.executeCodeLensProvider',
      input.modified,
    );
    assert.deepEqual(titles(left), [
      '$(report) Mark call as fidelity error',
      '$(check) Rehearsal acceptable',
      '$(list-flat) Trajectory',
      '$(report) Mark $.status (value differs)',
    ]);
    assert.deepEqual(titles(right), ['$(report) Mark $.fulfillments (missing from the rehearsal)']);
    const doc = await vscode.workspace.openTextDocument(input.original);
    const status = left[3];
    assert.match(doc.lineAt(status.range.start.line).text, /"status": "pending"/);
    assert.deepEqual(status.command?.arguments, [
      {
        file: traceFile(SAMPLE_RUN_IDS.shadow),
        callId: 'e1.t2.c1',
        path: '$.status',
        kind: 'hallucinated_value',
      },
    ]);
    assert.deepEqual(right[0].command?.arguments?.[0].kind, 'missing_field');
  });

  it('places the differing paths on lines of both sides for the decorations', async () => {
    const api = await studio();
    const marks = await api.services.decorations.marksOf(
      traceFile(SAMPLE_RUN_IDS.shadow),
      'e1.t3.c1',
    );
    const kinds = marks.diff.marks.map((m) => `${m.side} ${m.path} ${m.kind}`);
    assert.ok(kinds.includes('actual $.error added'), kinds.join('\n'));
    assert.ok(kinds.includes('rehearsal $.refund removed'), kinds.join('\n'));
  });

  it('has no path lenses for a rehearsal that did not parse, only the call-level actions', async () => {
    await studio();
    await vscode.commands.executeCommand('rehearsal.showCallDiff', {
      file: traceFile(SAMPLE_RUN_IDS.shadow),
      callId: 'e2.t3.c1',
    });
    const { input } = activeDiffTab();
    const left = await vscode.commands.executeCommand<vscode.CodeLens[]>(
      'vscode.executeCodeLensProvider',
      input.original,
    );
    assert.deepEqual(titles(left), [
      '$(report) Mark call as fidelity error',
      '$(check) Rehearsal acceptable',
      '$(list-flat) Trajectory',
    ]);
  });
});
