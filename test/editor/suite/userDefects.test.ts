// Defects a new user hit with the installed extension (issue 27): each test failed before its fix.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Annotation } from '../../../src/core/annotations/schema';
import type { DatasetExport } from '../../../src/core/training/datasetExport';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import { runPickItems } from '../../../src/extension/pickers';
import {
  closeAllEditors,
  freshShadowRun,
  rowAt,
  studio,
  traceFile,
  workspaceFolder,
} from './helpers';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs a command that asks through quick picks and input boxes, and answers each with Enter (the
 * preselected item, the empty note), as a user who accepts the defaults does.
 */
async function withEnter<T>(command: string, ...args: unknown[]): Promise<T> {
  let settled = false;
  const result = Promise.resolve(vscode.commands.executeCommand<T>(command, ...args)).finally(
    () => (settled = true),
  );
  for (let i = 0; i < 100 && !settled; i++) {
    await sleep(150);
    if (!settled)
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
  }
  return result;
}

describe('Defects a new user hit (issue 27)', () => {
  beforeEach(closeAllEditors);
  after(closeAllEditors);

  it("Ctrl+Alt+M with the cursor in a line's indentation marks that line's path, not the whole response", async () => {
    const api = await studio();
    const file = await freshShadowRun(api, '20261203-150000-shadow-cursor');
    await vscode.commands.executeCommand('rehearsal.showCallDiff', { file, callId: 'e1.t2.c1' });
    const editor = vscode.window.activeTextEditor;
    assert.ok(editor, 'the diff has an active side');
    assert.equal(editor.document.uri.scheme, 'rehearsal-call');
    // Where a fresh diff leaves the cursor: line 2, column 1, in the indentation of the first member.
    editor.selection = new vscode.Selection(1, 0, 1, 0);
    const key = /^\s*"([^"]+)":/.exec(editor.document.lineAt(1).text)?.[1];
    assert.ok(key, `line 2 is a member: ${editor.document.lineAt(1).text}`);
    const a = await withEnter<Annotation | undefined>('rehearsal.markPathAtCursor');
    assert.ok(a, 'the mark was saved');
    assert.equal(a.path, `$.${key}`);
  });

  it('the run pickers say mode, policy, success and date, not only ids and paths', async () => {
    const api = await studio();
    const [item] = runPickItems(api.services.library, [traceFile(SAMPLE_RUN_IDS.shadow)]);
    assert.equal(item.label, 'shadow-sample');
    assert.equal(item.description, '1/3 success · models/default · 2026-11-29 12:00');
    assert.equal(item.detail, `.rehearsal/runs/${SAMPLE_RUN_IDS.shadow}`);
  });

  it("Export Training Rows from a run's context menu writes the train and held-out rows a run file names", async () => {
    const api = await studio();
    const run = await rowAt(api, [SAMPLE_RUN_IDS.shadow]);
    const studioExtension = vscode.extensions.all.find(
      (e) => (e.packageJSON as { name?: string }).name === 'rehearsal-studio',
    );
    assert.ok(studioExtension, 'the extension is installed');
    const menu = (
      studioExtension.packageJSON as {
        contributes: { menus: { 'view/item/context': { command: string; when: string }[] } };
      }
    ).contributes.menus['view/item/context'];
    assert.ok(
      menu.some(
        (m) =>
          m.command === 'rehearsal.exportTrainingRows' &&
          /viewItem == rehearsal\.run\b/.test(m.when),
      ),
      "the run rows' context menu offers it",
    );
    // The tree node, as the context menu passes it, with the rows file a person would type; the
    // question "which calls?" answered with Enter (every call).
    const result = await withEnter<DatasetExport | undefined>('rehearsal.exportTrainingRows', {
      ...run.node,
      out: '.rehearsal/datasets/editor-rows.jsonl',
    });
    assert.ok(result, 'exported');
    const dir = path.join(workspaceFolder(), '.rehearsal', 'datasets');
    assert.deepEqual(
      result.written.map((w) => path.relative(dir, w.file)),
      ['editor-rows.train.jsonl', 'editor-rows.heldout.jsonl'],
    );
    let rows = 0;
    for (const w of result.written) {
      const lines = (await fs.readFile(w.file, 'utf8')).split('\n').filter(Boolean);
      assert.equal(lines.length, w.items);
      for (const l of lines) assert.ok(['act', 'rehearse'].includes(JSON.parse(l).role));
      rows += lines.length;
    }
    assert.ok(rows > 0, 'the sample run has rows');
    assert.match(result.summaryText, /act and \d+ rehearse rows from 3 episodes/);
  });
});
