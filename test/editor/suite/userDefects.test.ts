// Defects a new user hit with the installed extension (issue 27): each test failed before its fix.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { Annotation } from '../../../src/core/annotations/schema';
import { closeAllEditors, freshShadowRun, studio } from './helpers';

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
});
