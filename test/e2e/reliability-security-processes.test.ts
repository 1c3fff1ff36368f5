// Security promises that need real MCP servers or a launched process: an id that could leave the
// runs folder is refused before a run or replay writes anything; an endpoint key goes to the
// endpoint and never into a trace; the training preview is exactly what runs. The others are unit
// tests (test/unit/reliability-security.test.ts).
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { spawn } from 'node:child_process';
import { StudioError } from '../../src/core/base/errors';
import { openPolicyFor } from '../../src/core/runner/policyChoice';
import { replayTrace } from '../../src/core/runner/replay';
import { runTasks } from '../../src/core/runner/runner';
import { loadTaskFile } from '../../src/core/tasks/format/loader';
import { openTaskEnvironment } from '../../src/core/tasks/taskEnvironment';
import { planLaunch } from '../../src/core/training/launch/backends';
import { formatCommand } from '../../src/core/training/launch/launchPlan';
import { parseRunSpec } from '../../src/core/training/launch/runSpec';
import type { TrainerEvent } from '../../src/core/training/launch/supervisor';
import { TrainingProcess } from '../../src/core/training/launch/supervisor';
import { sampleShadowRun } from '../builders/samples';
import { startChatServer } from '../support/chatServer';
import { ensureServerBundles } from '../support/servers';
import { rehearse } from '../support/cli';
import { repoRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';

const REPO = repoRoot();

describe('security: ids never name a path outside .rehearsal/', () => {
  const tmp = useTempDir('rehearsal-ids-');

  it('a run or replay given an id that could leave the runs folder is refused (INVALID_ID) before anything is written', async () => {
    ensureServerBundles();
    const runsDir = path.join(tmp(), 'ws', '.rehearsal', 'runs');
    const task = await loadTaskFile(path.join(REPO, 'examples', 'tasks', 'retail-0000.task.json'));
    const policy = await openPolicyFor({ kind: 'reference' }, { tasks: [task.task] });
    const source = path.join(tmp(), 'source', 'trace.jsonl');
    await sampleShadowRun().write(source);
    for (const runId of ['../escape', '/tmp/escape', '..', 'e1\uff0f..']) {
      const run = runTasks({
        runsDir,
        runId,
        tasks: [task],
        policy,
        openEnvironment: (t) => openTaskEnvironment(t, { workspaceFolder: REPO }),
      });
      await assert.rejects(
        run,
        (e: unknown) => e instanceof StudioError && e.code === 'INVALID_ID',
      );
      await assert.rejects(
        replayTrace({ source, runsDir, runId, policy }),
        (e: unknown) => e instanceof StudioError && e.code === 'INVALID_ID',
      );
    }
    assert.deepEqual(await fs.readdir(tmp()), ['source'], 'no folder was made anywhere');
  });
});

describe('security: the endpoint key', () => {
  const tmp = useTempDir('rehearsal-key-');

  it('the key goes to the endpoint as a bearer token and never into the trace or the run summary', async () => {
    ensureServerBundles();
    const KEY = 'sk-test-7f3a9c2e51d0';
    const server = await startChatServer(() => 'Your order is on its way.');
    try {
      const url = server.url;
      const task = await loadTaskFile(
        path.join(REPO, 'examples', 'tasks', 'retail-0000.task.json'),
      );
      const policy = await openPolicyFor({ kind: 'endpoint', url, model: 'm' }, { apiKey: KEY });
      const summary = await runTasks({
        runsDir: tmp(),
        tasks: [task],
        policy,
        openEnvironment: (t) => openTaskEnvironment(t, { workspaceFolder: REPO }),
      });
      const seen = server.requests.map((r) => r.authorization);
      assert.ok(seen.length >= 1 && seen.every((h) => h === `Bearer ${KEY}`), JSON.stringify(seen));
      assert.ok(
        !(await fs.readFile(summary.traceFile, 'utf8')).includes(KEY),
        'the key is in the trace',
      );
      assert.ok(!JSON.stringify(summary).includes(KEY));
      assert.equal(JSON.stringify(policy.info).includes(KEY), false);
    } finally {
      await server.close();
    }
  });
});

describe('security: the training launch preview is exactly what runs', () => {
  const tmp = useTempDir("rehearsal preview 'q' ");

  it('the command `rehearse train --dry-run` shows, pasted into a shell, runs the argv and environment the launcher spawns', async () => {
    // A stand-in for Python that reports how it was started, then ends like a trainer.
    const fake = path.join(tmp(), 'fake python');
    await fs.writeFile(
      fake,
      `#!${process.execPath}\nconsole.log(JSON.stringify({ event: 'argv', argv: process.argv.slice(2), env: { PYTHONPATH: process.env.PYTHONPATH, OMP_WAIT_POLICY: process.env.OMP_WAIT_POLICY }, cwd: process.cwd() }));\nconsole.log(JSON.stringify({ event: 'done' }));\n`,
      { mode: 0o755 },
    );
    await fs.writeFile(path.join(tmp(), 'rows.jsonl'), '');
    // The base is a model folder (the launch checks that it is there), named to tempt a shell.
    const base = path.join(tmp(), 'models', 'base $HOME `x`');
    await fs.mkdir(base, { recursive: true });
    await fs.writeFile(path.join(base, 'config.json'), '{}');
    const runFile = path.join(tmp(), 'run.json');
    await fs.writeFile(
      runFile,
      JSON.stringify({
        objective: 'sft',
        base: 'models/base $HOME `x`',
        data: { train: ['rows.jsonl'] },
        hardware: { device: 'cpu', python: fake },
      }),
    );

    const dry = await rehearse('train', '--config', runFile, '--dry-run');
    assert.equal(dry.code, 0, dry.err);
    const preview = /^command: (.*)$/m.exec(dry.out)![1];
    const cwd = /^cwd: (.*)$/m.exec(dry.out)![1];

    const plan = planLaunch(parseRunSpec(await fs.readFile(runFile, 'utf8'), runFile), 'local');
    assert.equal(preview, formatCommand(plan));
    const proc = await TrainingProcess.start(plan);
    const events: TrainerEvent[] = [];
    proc.onEvent((e) => events.push(e));
    assert.equal((await proc.done).status, 'done');
    const spawned = events.find((e) => e.event === 'argv')!;

    const shell = spawn('/bin/sh', ['-c', preview], {
      cwd,
      env: { PATH: process.env['PATH'] ?? '' },
    });
    let out = '';
    shell.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    await new Promise((r) => shell.on('close', r));
    const pasted = JSON.parse(out.split('\n')[0]) as TrainerEvent;

    assert.deepEqual(spawned['argv'], plan.argv.slice(1));
    assert.deepEqual(pasted['argv'], spawned['argv'], 'the pasted preview runs the same arguments');
    assert.deepEqual(pasted['env'], spawned['env'], 'and the same variables');
    assert.equal(spawned['cwd'], cwd);
  });
});
