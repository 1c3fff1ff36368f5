import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import { EXTENSION_ID, studio, traceFile } from './helpers';

describe('Activation', () => {
  it('activates in a workspace with .rehearsal/runs and indexes every run before ready resolves', async () => {
    const api = await studio();
    assert.equal(vscode.extensions.getExtension(EXTENSION_ID)?.isActive, true);
    const expected = [SAMPLE_RUN_IDS.torn, SAMPLE_RUN_IDS.shadow, SAMPLE_RUN_IDS.imagine].map(
      traceFile,
    );
    for (const file of expected) {
      assert.ok(
        api.services.library.files.includes(file),
        `${file} is not in the library: ${JSON.stringify(api.services.library.files)}`,
      );
      assert.equal(api.services.library.failure(file), undefined);
      assert.ok(api.services.library.index(file), `${file} has no index`);
    }
  });

  it('registers every command that package.json contributes', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    const contributed = (ext?.packageJSON.contributes.commands as { command: string }[]).map(
      (c) => c.command,
    );
    for (const id of [
      'rehearsal.refreshTraces',
      'rehearsal.openTrace',
      'rehearsal.showCallDiff',
      'rehearsal.showReport',
    ]) {
      assert.ok(contributed.includes(id), `${id} is not contributed`);
    }
    await studio();
    const registered = new Set(await vscode.commands.getCommands(true));
    assert.deepEqual(
      contributed.filter((c) => !registered.has(c)),
      [],
      'contributed but not registered',
    );
  });

  it('contributes the Trace Explorer view in the Rehearsal container', async () => {
    await studio();
    // These commands exist only when the container and the view are registered from package.json.
    await vscode.commands.executeCommand('workbench.view.extension.rehearsal');
    await vscode.commands.executeCommand('rehearsal.traceExplorer.focus');
  });
});
