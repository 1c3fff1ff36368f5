import * as assert from 'node:assert/strict';
import { runIdShort } from '../../../src/core/trace/format/ids';
import * as vscode from 'vscode';
import { SAMPLE_RUN_IDS } from '../../builders/sampleWorkspace';
import { row, rows, studio } from './helpers';

const SHADOW = SAMPLE_RUN_IDS.shadow;

describe('Trace Explorer filters, search and sort', () => {
  afterEach(() => vscode.commands.executeCommand('rehearsal.clearExplorerFilter'));

  it('shows only mismatches, says so in the view, and clears', async () => {
    const api = await studio();
    await vscode.commands.executeCommand('rehearsal.filterExplorer', { mismatches: true });
    assert.equal(api.services.explorerTree?.description, 'mismatches');
    const run = await row(api, SHADOW);
    const episodes = await rows(api, run.node);
    assert.deepEqual(
      episodes.map((e) => e.label),
      ['e1 retail-test-0007', 'e3 retail-test-0031'],
    );
    assert.ok(
      !(await rows(api)).some((r) => r.label === runIdShort(SAMPLE_RUN_IDS.imagine)) ||
        (await rows(api, (await row(api, SAMPLE_RUN_IDS.imagine)).node)).length > 0,
      'runs without mismatches are hidden',
    );
    await vscode.commands.executeCommand('rehearsal.clearExplorerFilter');
    assert.equal(api.services.explorerTree?.description, undefined);
    assert.equal((await rows(api, (await row(api, SHADOW)).node)).length, 3);
  });

  it('searches text and filters by tool', async () => {
    const api = await studio();
    await vscode.commands.executeCommand('rehearsal.searchExplorer', 'timeout');
    assert.equal(api.services.explorerTree?.description, '"timeout"');
    const episodes = await rows(api, (await row(api, SHADOW)).node);
    assert.deepEqual(
      episodes.map((e) => e.label),
      ['e3 retail-test-0031'],
    );
    await vscode.commands.executeCommand('rehearsal.filterExplorer', {
      tools: ['cancel_pending_order'],
    });
    assert.equal(api.services.explorerTree?.description, 'tool cancel_pending_order');
    const turns = await rows(api, (await rows(api, (await row(api, SHADOW)).node))[0].node);
    assert.deepEqual(
      turns.map((t) => t.label),
      ['turn 3'],
    );
  });

  it("sorts a run's calls least faithful first", async () => {
    const api = await studio();
    await vscode.commands.executeCommand('rehearsal.sortExplorer', 'fidelity');
    assert.equal(api.services.explorerTree?.description, 'least faithful first');
    const calls = await rows(api, (await row(api, SHADOW)).node);
    assert.deepEqual(
      calls.slice(0, 3).map((c) => c.description),
      [
        'parse error NO_EXECUTION_RESULT_TAG_FOUND · e2.t3.c1',
        'tool error TOOL_TIMEOUT · e3.t2.c1',
        'F1 0.00 · error state differs · e1.t3.c1',
      ],
    );
    assert.equal((await api.services.explorer.getParent(calls[0].node))?.label, runIdShort(SHADOW));
  });
});
