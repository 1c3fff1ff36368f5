import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import { closeAllEditors, row, studio, traceFile } from './helpers';

async function reportOf(target: unknown): Promise<string> {
  await vscode.commands.executeCommand('rehearsal.showReport', target);
  const editor = vscode.window.activeTextEditor;
  assert.ok(editor, 'the report did not open in an editor');
  // A read-only document: closing it never asks to save.
  assert.equal(editor.document.uri.scheme, 'rehearsal-report');
  assert.equal(editor.document.isDirty, false);
  return editor.document.getText();
}

describe('Fidelity report', () => {
  beforeEach(closeAllEditors);
  after(closeAllEditors);

  it('opens the report of a run with its outcomes, parse errors and fidelity scores', async () => {
    await studio();
    const text = await reportOf({ file: traceFile(SAMPLE_RUN_IDS.shadow) });
    assert.match(text, new RegExp(`^${SAMPLE_RUN_IDS.shadow} `));
    assert.match(text, /3 episodes · success 33\.3% \(1\/3\) · mean reward 0\.50/);
    assert.match(
      text,
      /errors: act JSON_DECODE_ERROR ×1, rehearsal NO_EXECUTION_RESULT_TAG_FOUND ×1, actual TOOL_TIMEOUT ×1/,
    );
    assert.match(text, /fidelity: exact 0\.40 · field F1 0\.56/);
    assert.match(text, /^get_order_details +3 +2 /m);
    assert.doesNotMatch(text, /\x1b\[/, 'no terminal colour codes in an editor document');
  });

  it('opens the report from a run row, and reports the torn line of a crashed run', async () => {
    const api = await studio();
    const text = await reportOf((await row(api, SAMPLE_RUN_IDS.torn)).node);
    assert.match(
      text,
      / · 1 skipped line\n +line \d+: torn last line \(incomplete write\)\n +task retail-test-0007: /,
    );
  });
});
