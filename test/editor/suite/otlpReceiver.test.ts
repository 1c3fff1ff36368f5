import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { OtlpReceiverAddress } from '../../../src/extension/features/traces/registerOtlpReceiver';
import { studio, waitForLibrary, workspaceFolder } from './helpers';

/** The repository's OTLP fixtures (this file runs from out/test/editor/suite). */
const OTLP = path.join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'otlp');

describe('OTLP receiver', () => {
  it('Receive OpenTelemetry Traces: a trace sent with the token appears in the Trace Explorer; one without is refused', async () => {
    const api = await studio();
    const runs = path.join(workspaceFolder(), '.rehearsal', 'runs');
    const before = new Set(await fs.readdir(runs));
    const started = await vscode.commands.executeCommand<OtlpReceiverAddress>(
      'rehearsal.startOtlpReceiver',
    );
    let written: string[] = [];
    try {
      assert.ok(started, 'the command returns where it listens');
      assert.match(started.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const body = await fs.readFile(path.join(OTLP, 'openai-v2-latest.json'));
      const send = (headers: Record<string, string>) =>
        fetch(`${started.url}/v1/traces`, {
          method: 'POST',
          body: new Uint8Array(body),
          headers: { 'content-type': 'application/json', ...headers },
        });
      assert.equal((await send({})).status, 401);
      assert.equal((await send({ authorization: `Bearer ${started.token}` })).status, 200);
      await waitForLibrary(api, 'the received trace in the Trace Explorer', async () => {
        written = (await fs.readdir(runs)).filter((r) => !before.has(r));
        assert.equal(written.length, 1);
        assert.ok(api.services.library.files.includes(path.join(runs, written[0], 'trace.jsonl')));
      });
    } finally {
      await vscode.commands.executeCommand('rehearsal.stopOtlpReceiver');
      // The fixture workspace's runs stay as the other suites expect them.
      for (const r of written) await fs.rm(path.join(runs, r), { recursive: true, force: true });
      await fs.rm(path.join(workspaceFolder(), '.rehearsal', 'imports', 'otlp-live'), {
        recursive: true,
        force: true,
      });
    }
  });
});
