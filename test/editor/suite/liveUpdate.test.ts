import * as assert from 'node:assert/strict';
import { runIdShort } from '../../../src/core/trace/format/ids';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { TraceWriter } from '../../../src/core/trace/format/writer';
import { sampleTraceFile, tornShadowRunText } from '../../builders/sampleWorkspace';
import { row, rowAt, rows, studio, waitForLibrary, workspaceFolder } from './helpers';
import { LiveTrace } from './liveTrace';

describe('Live update', () => {
  it('shows a run that starts while the editor is open, and each call as it is written', async () => {
    const api = await studio();
    const runId = '20261129-160000-shadow-live';
    const live = await LiveTrace.open(sampleTraceFile(workspaceFolder(), runId), runId);
    try {
      const episode = live.builder.episode('retail-test-0060', {
        instruction: 'Where is my order #W6000060?',
      });
      await live.flush();
      // Only the workspace file watcher can tell the editor about this new trace.
      await waitForLibrary(api, 'the new run (file watcher)', async () => {
        const run = await row(api, runId);
        assert.match(run.description, /^models\/default · 1 episode · \d{4}-\d\d-\d\d \d\d:\d\d$/);
        assert.equal(run.icon, 'loading~spin', 'a run without run.end is still running');
        assert.equal((await row(api, 'e1 retail-test-0060', run.node)).description, 'running');
      });
      assert.equal((await rows(api))[0].label, runIdShort(runId), 'the newest run is listed first');

      const turn = episode
        .turn(
          '\n<tool_call>\n{"name": "get_order_details", "arguments": {"order_id": "#W6000060"}}\n</tool_call>',
        )
        .rehearse(0, { order_id: '#W6000060', status: 'processed' });
      await live.flush();
      const turnPath = [runId, 'e1 retail-test-0060', 'turn 1'];
      await waitForLibrary(api, 'the rehearsed call', async () => {
        assert.equal(
          (await row(api, 'get_order_details', (await rowAt(api, turnPath)).node)).description,
          'waiting for tool',
        );
      });

      turn.actual(0, { json: { order_id: '#W6000060', status: 'processed' } });
      await live.flush();
      await waitForLibrary(api, 'the answered call', async () => {
        const call = await row(api, 'get_order_details', (await rowAt(api, turnPath)).node);
        assert.equal(call.description, 'exact');
        assert.equal(call.icon, 'pass');
      });

      episode.turn('It is being processed.');
      episode.end({ reward: 1, success: true, answer: 'It is being processed.' });
      live.builder.end();
      await live.flush();
      await waitForLibrary(api, 'the finished run', async () => {
        const run = await row(api, runId);
        assert.equal(run.icon, 'pass');
        assert.equal(
          (await row(api, 'e1 retail-test-0060', run.node)).description,
          'success · reward 1.00',
        );
      });
    } finally {
      await live.close();
    }
  });

  it('keeps the torn line of a crashed run skipped when a writer resumes the trace', async () => {
    const api = await studio();
    const runId = '20261129-170000-shadow-resumed';
    const file = sampleTraceFile(workspaceFolder(), runId);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, tornShadowRunText(runId));
    await vscode.commands.executeCommand('rehearsal.refreshTraces');
    await waitForLibrary(api, 'the crashed run', async () => {
      assert.equal(
        (await row(api, runId)).description,
        '1/3 success · models/default · 1 skipped line · 2026-11-29 17:00',
      );
    });

    const writer = await TraceWriter.open(file);
    try {
      await writer.append({
        type: 'episode',
        episodeId: 'e4',
        index: 3,
        taskId: 'retail-test-0099',
        mode: 'shadow',
      });
      await writer.append({
        type: 'episode.end',
        episodeId: 'e4',
        status: 'completed',
        reward: 1,
        success: true,
      });
    } finally {
      await writer.close();
    }
    await waitForLibrary(api, 'the resumed episode', async () => {
      const run = await row(api, runId);
      assert.equal(
        run.description,
        '2/4 success · models/default · 1 skipped line · 2026-11-29 17:00',
      );
      assert.equal(
        (await row(api, 'e4 retail-test-0099', run.node)).description,
        'success · reward 1.00',
      );
    });
  });

  it('finds a run the file watcher does not report (its folder is in files.watcherExclude)', async () => {
    const api = await studio();
    const runId = '20261129-165000-shadow-unwatched';
    const files = vscode.workspace.getConfiguration('files');
    await files.update(
      'watcherExclude',
      { '**/*-shadow-unwatched/**': true },
      vscode.ConfigurationTarget.Workspace,
    );
    try {
      // Let the workbench restart its watcher without the excluded folders before the run starts.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const live = await LiveTrace.open(sampleTraceFile(workspaceFolder(), runId), runId);
      try {
        live.builder.episode('retail-test-0061', { instruction: 'Where is my order #W6000061?' });
        await live.flush();
        await waitForLibrary(api, 'the unwatched run (listing of the runs folder)', async () => {
          assert.match(
            (await row(api, runId)).description,
            /^models\/default · 1 episode · \d{4}-\d\d-\d\d \d\d:\d\d$/,
          );
        });
      } finally {
        await live.close();
      }
    } finally {
      await files.update('watcherExclude', undefined, vscode.ConfigurationTarget.Workspace);
    }
  });
});
