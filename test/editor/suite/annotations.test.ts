import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Annotation } from '../../../src/core/annotations/schema';
import { appendAnnotationEvent } from '../../../src/core/annotations/store';
import {
  activeDiffTab,
  closeAllEditors,
  freshShadowRun,
  rowAt,
  studio,
  waitUntil,
} from './helpers';

const lines = async (file: string) =>
  (await fs.readFile(path.join(path.dirname(file), 'annotations.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('Annotations', () => {
  beforeEach(closeAllEditors);
  after(closeAllEditors);

  it('marks a JSON path of a call: one event in annotations.jsonl, a badge in the tree, a row in the Annotations view', async () => {
    const api = await studio();
    const runId = '20261129-140000-shadow-marked';
    const file = await freshShadowRun(api, runId);
    const a = await vscode.commands.executeCommand<Annotation>('rehearsal.markFidelityError', {
      file,
      callId: 'e1.t2.c1',
      path: '$.status',
      kind: 'hallucinated_value',
      severity: 'major',
      note: 'guessed pending',
    });
    assert.equal(a.kind, 'hallucinated_value');
    const written = await lines(file);
    assert.equal(written.length, 1);
    assert.deepEqual(
      {
        type: written[0].type,
        callId: written[0].callId,
        episodeId: written[0].episodeId,
        tool: written[0].tool,
        kind: written[0].kind,
        severity: written[0].severity,
        path: written[0].path,
        note: written[0].note,
      },
      {
        type: 'mark',
        callId: 'e1.t2.c1',
        episodeId: 'e1',
        tool: 'get_order_details',
        kind: 'hallucinated_value',
        severity: 'major',
        path: '$.status',
        note: 'guessed pending',
      },
    );
    const call = (
      await api.services.explorer.getChildren(
        (await rowAt(api, [runId, 'e1 retail-test-0007', 'turn 2'])).node,
      )
    )[0];
    assert.equal(api.services.explorer.getTreeItem(call).description, '⚑ 1 · F1 0.78');
    assert.equal(api.services.explorer.getTreeItem(call).contextValue, 'rehearsal.call.annotated');
    const run = api.services.annotationsView.getChildren().find((n) => n.label === runId);
    assert.ok(run, 'the run is in the Annotations view');
    assert.equal(run.description, '1 error');
    assert.deepEqual(
      api.services.annotationsView.getChildren(run).map((n) => [n.label, n.description]),
      [['hallucinated value', 'get_order_details e1.t2.c1 · $.status · major · “guessed pending”']],
    );
  });

  it('keeps edits and deletions as new events, and the view follows them', async () => {
    const api = await studio();
    const runId = '20261129-140100-shadow-edited';
    const file = await freshShadowRun(api, runId);
    const a = await vscode.commands.executeCommand<Annotation>('rehearsal.markFidelityError', {
      file,
      callId: 'e1.t3.c1',
      kind: 'other',
      severity: 'minor',
    });
    await vscode.commands.executeCommand(
      'rehearsal.editAnnotation',
      { file, annotationId: a.id },
      { kind: 'wrong_error_state', severity: 'critical' },
    );
    const b = await vscode.commands.executeCommand<Annotation>('rehearsal.acceptRehearsal', {
      file,
      callId: 'e1.t1.c1',
      note: 'fine',
    });
    await vscode.commands.executeCommand('rehearsal.deleteAnnotation', {
      file,
      annotationId: b.id,
    });
    assert.deepEqual(
      (await lines(file)).map((e) => e.type),
      ['mark', 'edit', 'accept', 'delete'],
    );
    const run = api.services.annotationsView.getChildren().find((n) => n.label === runId)!;
    assert.deepEqual(
      api.services.annotationsView.getChildren(run).map((n) => [n.label, n.description]),
      [['wrong error state', 'cancel_pending_order e1.t3.c1 · critical']],
    );
  });

  it('picks up annotations another process appends to the file', async () => {
    const api = await studio();
    const runId = '20261129-140200-shadow-shared';
    const file = await freshShadowRun(api, runId);
    await appendAnnotationEvent(path.join(path.dirname(file), 'annotations.jsonl'), {
      type: 'accept',
      id: 'a-from-elsewhere',
      author: 'bo',
      callId: 'e2.t1.c1',
      tool: 'get_order_details',
    });
    await waitUntil(
      [api.services.annotations.onDidChange],
      'the file watcher to read the new annotation',
      async () => {
        const call = (
          await api.services.explorer.getChildren(
            (await rowAt(api, [runId, 'e2 retail-test-0012', 'turn 1'])).node,
          )
        )[0];
        assert.equal(call.description, '✓ accepted · exact');
      },
    );
  });

  it("shows a call's annotations in its diff as diagnostics at the annotated path", async () => {
    const api = await studio();
    const runId = '20261129-140300-shadow-diagnosed';
    const file = await freshShadowRun(api, runId);
    await vscode.commands.executeCommand('rehearsal.markFidelityError', {
      file,
      callId: 'e1.t2.c1',
      path: '$.status',
      kind: 'stale_state',
      severity: 'critical',
      note: 'ignores the delivery',
    });
    await vscode.commands.executeCommand('rehearsal.showCallDiff', { file, callId: 'e1.t2.c1' });
    const { input } = activeDiffTab();
    await waitUntil(
      [vscode.languages.onDidChangeDiagnostics],
      'the annotation as a diagnostic',
      () => {
        const d = vscode.languages.getDiagnostics(input.original);
        assert.equal(d.length, 1, JSON.stringify(d));
        assert.equal(d[0].message, 'stale state (critical) at $.status: ignores the delivery');
        assert.equal(d[0].severity, vscode.DiagnosticSeverity.Error);
        assert.equal(d[0].source, 'Rehearsal');
      },
    );
    const doc = await vscode.workspace.openTextDocument(input.original);
    const d = vscode.languages.getDiagnostics(input.original)[0];
    assert.match(doc.lineAt(d.range.start.line).text, /"status": "pending"/);
  });

  it('refuses an annotation of a call id that is not an id', async () => {
    const api = await studio();
    const file = await freshShadowRun(api, '20261129-140400-shadow-refused');
    const result = await vscode.commands.executeCommand('rehearsal.markFidelityError', {
      file,
      callId: '../../x',
      kind: 'other',
      severity: 'minor',
    });
    assert.equal(result, undefined);
    await assert.rejects(
      fs.access(path.join(path.dirname(file), 'annotations.jsonl')),
      'nothing was written',
    );
  });
});
