import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { sampleImagineRun } from '../../builders/samples';
import type { Annotation } from '../../../src/core/annotations/schema';
import { freshShadowRun, row, rows, studio, waitForLibrary, workspaceFolder } from './helpers';

describe('Commands', () => {
  // Beside the workspace, inside the fixture folder that the harness deletes at the end.
  const outside = () => path.join(path.dirname(workspaceFolder()), 'outside-the-workspace');

  it('a command that fails with a StudioError shows its code and its action as a button (issue 31)', async () => {
    const api = await studio();
    const file = await freshShadowRun(api, '20261129-150000-shadow-error-action');
    const gone = { id: 'no-such-annotation', callId: 'c1' } as Annotation;
    const result = await vscode.commands.executeCommand(
      'rehearsal.editAnnotation',
      {
        kind: 'annotation',
        id: gone.id,
        file,
        label: '',
        description: '',
        tooltip: '',
        annotation: gone,
      },
      { note: 'edited' },
    );
    assert.equal(result, undefined);
    const shown = api.services.errors.last;
    assert.equal(shown?.code, 'UNKNOWN_ANNOTATION');
    assert.match(
      shown.message,
      /^Rehearsal: cannot edit the annotation: No annotation no-such-annotation .*\(UNKNOWN_ANNOTATION\)$/,
    );
    assert.deepEqual(shown.actions, ['Refresh Traces']);
  });

  it('Open Trace adds a trace from outside the workspace to the Trace Explorer', async () => {
    const api = await studio();
    const runId = '20261129-100000-imagine-elsewhere';
    const file = path.join(outside(), 'kept', 'trace.jsonl');
    await sampleImagineRun(runId).write(file);
    await vscode.commands.executeCommand('rehearsal.openTrace', file);
    const run = await row(api, runId);
    assert.equal(run.description, '1/1 success · models/default · 2026-11-29 10:00');
    assert.equal(run.node.file, file);
  });

  it('Open Trace shows a missing file as an unreadable row instead of failing', async () => {
    const api = await studio();
    const file = path.join(outside(), 'gone', 'trace.jsonl');
    await vscode.commands.executeCommand('rehearsal.openTrace', file);
    const problem = await row(api, 'gone');
    assert.equal(problem.description, 'unreadable');
    assert.equal(problem.icon, 'error');
    assert.match(String(problem.item.tooltip), /no such file/);
  });

  it('Refresh Trace Explorer forgets a run whose folder was deleted', async () => {
    const api = await studio();
    const runId = '20261129-090000-imagine-deleted';
    const folder = path.join(workspaceFolder(), '.rehearsal', 'runs', runId);
    await sampleImagineRun(runId).write(path.join(folder, 'trace.jsonl'));
    await vscode.commands.executeCommand('rehearsal.refreshTraces');
    await row(api, runId);
    await fs.rm(folder, { recursive: true, force: true });
    await vscode.commands.executeCommand('rehearsal.refreshTraces');
    await waitForLibrary(api, 'the deleted run to go', async () => {
      assert.ok(!(await rows(api)).some((r) => r.label === runId), `${runId} is still listed`);
    });
  });
});
