// `rehearse run`, `rehearse replay` and `rehearse gpu check` through runCli, with real tasks, real
// servers and the scripted ONNX model in a real policy host.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ACT_PARSE_ERROR_CODES, REHEARSAL_PARSE_ERROR_CODES } from '../../src/core/protocol/codes';
import type { FidelityReport } from '../../src/core/report/fidelityReport';
import type { RunSummary } from '../../src/core/runner/runner';
import {
  ACT_ERROR_CASES,
  OK_CASE,
  REHEARSAL_ERROR_CASES,
  scriptedModel,
  writeProbeTasks,
} from '../support/scriptedModel';
import { ensurePolicyHostBundle, ensureServerBundles } from '../support/servers';
import { rehearse } from '../support/cli';
import { readCheckedTrace } from '../support/traceChecks';

const oneLine = (r: { code: number; out: string; errLines: string[] }, code: number): string => {
  assert.equal(r.code, code, r.errLines.join('\n'));
  assert.equal(r.errLines.length, 1, `one line on stderr, got:\n${r.errLines.join('\n')}`);
  assert.match(r.errLines[0], /^rehearse: /);
  return r.errLines[0];
};

describe('rehearse run / replay / gpu check', function () {
  this.timeout(120_000);
  let dir = '';
  let model = '';
  let okTask = '';
  before(async function () {
    this.timeout(600_000);
    ensureServerBundles();
    ensurePolicyHostBundle();
    model = await scriptedModel();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'runner-cli-'));
    [okTask] = await writeProbeTasks(path.join(dir, 'tasks'), [OK_CASE.case]);
  });
  after(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });
  const out = () => path.join(dir, 'runs');

  it('run: plays a task with a model folder and prints the summary table, the device it ran on and the trace', async () => {
    const r = await rehearse(
      'run',
      okTask,
      '--policy',
      model,
      '--out',
      out(),
      '--no-progress',
      '--device',
      'auto',
    );
    assert.equal(r.code, 0, r.err);
    assert.equal(r.err, '');
    const lines = r.out.split('\n');
    assert.ok(lines.includes('1 episode · success 100.0% (1/1) · mean reward 1.00'), r.out);
    assert.ok(lines.includes('2 turns · act parse validity 100.0%'), r.out);
    assert.ok(
      lines.includes('1 call · 1 rehearsed (parse validity 100.0%) · 1 with actual · 1 compared'),
      r.out,
    );
    assert.ok(
      lines.some((l) => /^probe\s+1\s+1\s+1\.00\b/.test(l)),
      `a row for the probe tool, exact 1.00:\n${r.out}`,
    );
    assert.equal(
      lines[1],
      `  shadow mode · 9 events · policy: model folder ${model} on cpu`,
      'the policy and device in plain words',
    );
    assert.match(lines[2], /^ {2}task probe-ok: case: ok\./, 'the task and its instruction');
    assert.doesNotMatch(r.out, /not used/, 'why other devices were not used only with --verbose');
    const traceFile = lines.find((l) => l.startsWith('trace: '))!.slice('trace: '.length);
    assert.ok(traceFile.startsWith(out()));
    const trace = await readCheckedTrace(traceFile);
    assert.deepEqual([trace.run.mode, trace.end.status], ['shadow', 'completed']);
    const tried = trace.run.policy.devices?.map((d) => d.device);
    assert.deepEqual(tried?.at(-1), 'cpu', 'the trace keeps every device tried');

    const verbose = await rehearse(
      'run',
      okTask,
      '--policy',
      model,
      '--out',
      out(),
      '--no-progress',
      '--device',
      'auto',
      '--verbose',
    );
    assert.equal(verbose.code, 0, verbose.err);
    const devices = verbose.out.split('\n').find((l) => l.startsWith('devices tried: '));
    assert.match(
      devices ?? '',
      /^devices tried: (cuda (used|not used: .+); )?(webgpu (used|not used: .+); )?cpu used$|^devices tried: .*(cuda|webgpu) used$/,
    );
  });

  it('run --json: the report counts all ten parse-error codes by code', async () => {
    const cases = [...Object.values(ACT_ERROR_CASES), ...Object.values(REHEARSAL_ERROR_CASES)].map(
      (c) => c.case,
    );
    const files = await writeProbeTasks(path.join(dir, 'parse-errors'), cases);
    const r = await rehearse(
      'run',
      ...files,
      '--policy',
      model,
      '--out',
      out(),
      '--no-progress',
      '--device',
      'cpu',
      '--json',
    );
    assert.equal(r.code, 0, r.err);
    const { run, report, policy } = JSON.parse(r.out) as {
      run: RunSummary;
      report: FidelityReport;
      policy: { kind: string; devices: { device: string; ok: boolean }[] };
    };
    assert.equal(run.episodes.length, 10);
    assert.deepEqual(report.parseErrors, {
      act: Object.fromEntries([...ACT_PARSE_ERROR_CODES].sort().map((c) => [c, 1])),
      rehearsal: Object.fromEntries([...REHEARSAL_PARSE_ERROR_CODES].sort().map((c) => [c, 1])),
    });
    assert.deepEqual([policy.kind, policy.devices], ['onnx', [{ device: 'cpu', ok: true }]]);
  });

  it('replay: re-rehearses a recorded run with a model folder, no tool run; prints the table', async () => {
    const recorded = await rehearse(
      'run',
      okTask,
      '--policy',
      model,
      '--out',
      out(),
      '--no-progress',
      '--device',
      'cpu',
    );
    const source = recorded.out
      .split('\n')
      .find((l) => l.startsWith('trace: '))!
      .slice('trace: '.length);
    const r = await rehearse(
      'replay',
      path.dirname(source),
      '--policy',
      model,
      '--out',
      out(),
      '--no-progress',
      '--device',
      'cpu',
    );
    assert.equal(r.code, 0, r.err);
    assert.ok(
      r.out.includes('1 call · 1 rehearsed (parse validity 100.0%) · 1 with actual · 1 compared'),
      r.out,
    );
    const replay = await readCheckedTrace(
      r.out
        .split('\n')
        .find((l) => l.startsWith('trace: '))!
        .slice('trace: '.length),
    );
    assert.deepEqual(
      [replay.run.mode, replay.run.source, replay.actuals[0].source],
      ['replay', source, 'replay'],
    );
  });

  it('bad arguments: one line on stderr, exit 2', async () => {
    const usage: [string[], RegExp][] = [
      [
        ['run', okTask, '--mode', 'dream'],
        /--mode must be shadow, imagine or private, not "dream"/,
      ],
      [
        ['run', okTask, '--episodes', '0'],
        /--episodes must be a whole number from 1 to 10,000, not "0"/,
      ],
      [['run', okTask, '--samples', 'many'], /--samples must be a whole number/],
      [
        ['run', okTask, '--order', 'random', '--mode', 'private'],
        /--order must be parallel or sequential/,
      ],
      [['run', okTask, '--audit'], /--audit goes with --mode imagine/],
      [
        ['run', okTask, '--temperature', '-1'],
        /--temperature must be a number from 0 to 2, not "-1"/,
      ],
      [['run', okTask, '--on-parse-error', 'ignore'], /--on-parse-error must be end or feedback/],
      [
        ['run', okTask, '--policy', model, '--device', 'tpu'],
        /--device must be one of auto, cpu, cuda, webgpu, not "tpu"/,
      ],
      [
        ['run', okTask, '--policy', model, '--threads', '0'],
        /--threads must be a whole number from 1 to 1,024, not "0"/,
      ],
      [
        ['run', okTask, '--policy', 'http://127.0.0.1:9/v1'],
        /An endpoint policy needs --model <name>/,
      ],
      [
        ['run', okTask, '--policy', 'reference', '--mode', 'imagine', '--out', out()],
        /The reference policy does not rehearse, so it cannot play imagine episodes/,
      ],
      [
        ['replay', okTask, '--policy', 'reference'],
        /The reference policy does not rehearse; replay needs a model folder or an endpoint/,
      ],
      [['run'], /missing required argument 'task'/],
      [['run', okTask, '--mood', 'happy'], /unknown option '--mood' \(Did you mean --mode\?\)/],
      [
        ['run', okTask, '--policy', 'defualt'],
        /Unknown policy "defualt" \(no such folder\)\. Did you mean --policy default\?/,
      ],
      [['run', okTask, '--policy', 'refrence'], /Did you mean --policy reference\?/],
      [
        ['run', okTask, '--policy', model, '--device', 'cdua'],
        /--device must be one of auto, cpu, cuda, webgpu, not "cdua"\. Did you mean cuda\?/,
      ],
      [
        ['run', okTask, '--samples', '100000'],
        /--samples must be a whole number from 1 to 16, not "100000"/,
      ],
      [
        ['run', okTask, '--episodes', '1000000'],
        /--episodes must be a whole number from 1 to 10,000, not "1000000"/,
      ],
      [
        ['run', okTask, '--policy', 'reference', '--out', okTask],
        /--out .*probe-ok\.task\.json is a file; pass a folder/,
      ],
      [['replay', okTask, '--policy', model, '--out', okTask], /--out .* is a file; pass a folder/],
    ];
    for (const [argv, message] of usage)
      assert.match(oneLine(await rehearse(...argv), 2), message, argv.join(' '));
  });

  it('an unloadable model folder: one line naming the missing file, exit 1', async () => {
    const broken = path.join(dir, 'broken-model');
    await fs.cp(model, broken, { recursive: true });
    await fs.rm(path.join(broken, 'tokenizer.json'));
    const line = oneLine(
      await rehearse('run', okTask, '--policy', broken, '--out', out(), '--no-progress'),
      1,
    );
    assert.match(
      line,
      new RegExp(
        `^rehearse: The model folder ${broken.replace(/[.]/g, '\\.')} has no tokenizer\\.json\\.`,
      ),
    );
    assert.match(
      oneLine(
        await rehearse(
          'run',
          okTask,
          '--policy',
          path.join(dir, 'no-such-model'),
          '--out',
          out(),
          '--no-progress',
        ),
        1,
      ),
      /No model folder at .*no-such-model/,
    );
    assert.match(
      oneLine(await rehearse('replay', path.join(dir, 'no-trace.jsonl'), '--policy', model), 1),
      /no-trace\.jsonl/,
    );
  });

  it('an unreadable task: one line, exit 1', async () => {
    const bad = path.join(dir, 'bad.task.json');
    await fs.writeFile(bad, '{"version": 1,');
    assert.match(
      oneLine(await rehearse('run', bad, '--policy', 'reference', '--out', out()), 1),
      /bad\.task\.json: \$ is not valid JSON/,
    );
    assert.match(
      oneLine(
        await rehearse('run', path.join(dir, 'missing.task.json'), '--policy', 'reference'),
        1,
      ),
      /missing\.task\.json does not exist\. Pass a task file \(\*\.task\.json\), a folder of them, or a sample task id: bank-0001, .*retail-0012/,
    );
    assert.match(
      oneLine(await rehearse('run', 'retial-0012', '--policy', 'reference'), 1),
      /^rehearse: retial-0012 does not exist\. Did you mean the sample task retail-0012\?$/,
    );
  });

  it('private rehearsal: the committed episode is reported apart from the imagined ones; imagine mode says which checks were not evaluated', async () => {
    const notEvaluated = 'state check not evaluated: an imagined trajectory has no real state';
    const priv = await rehearse(
      'run',
      okTask,
      '--policy',
      model,
      '--mode',
      'private',
      '--budget',
      '2',
      '--out',
      out(),
      '--no-progress',
      '--json',
    );
    assert.equal(priv.code, 0, priv.err);
    const { report, run } = JSON.parse(priv.out) as { report: FidelityReport; run: RunSummary };
    const trace = await readCheckedTrace(run.traceFile);
    const committed = trace.ends.at(-1)!;
    const imagined = trace.ends.slice(0, 2);
    assert.deepEqual(
      [report.episodes, report.graded, report.successes, report.meanReward],
      [1, 1, committed.success ? 1 : 0, committed.reward],
      "the run's figures are the committed episode's",
    );
    assert.deepEqual(report.notEvaluated, []);
    assert.deepEqual(
      [report.rehearsals?.episodes, report.rehearsals?.successes],
      [2, imagined.filter((e) => e.success).length],
    );
    assert.deepEqual(report.rehearsals?.notEvaluated, [
      {
        kind: 'state',
        reason: 'an imagined trajectory has no real state',
        detail: 'not evaluated: an imagined trajectory has no real state',
        count: 2,
      },
    ]);
    const text = (await rehearse('report', run.traceFile)).out.split('\n');
    assert.ok(
      text.some((l) =>
        /^1 committed episode · success \d+\.\d% \([01]\/1\) · mean reward \d\.\d\d$/.test(l),
      ),
      text.join('\n'),
    );
    const imaginedLine = new RegExp(
      `^2 imagined episodes \\(private rehearsal, not the run's result\\) · success \\d+\\.\\d% \\([0-2]/2\\) · mean reward \\d\\.\\d\\d over the checks evaluated \\(2 ${notEvaluated.replace('check', 'checks')}\\)$`,
    );
    assert.ok(
      text.some((l) => imaginedLine.test(l)),
      text.join('\n'),
    );
    const imagine = await rehearse(
      'run',
      okTask,
      '--policy',
      model,
      '--mode',
      'imagine',
      '--out',
      out(),
      '--no-progress',
    );
    assert.equal(imagine.code, 0, imagine.err);
    assert.ok(
      imagine.out
        .split('\n')
        .includes(
          `1 episode · success 100.0% (1/1) · mean reward 1.00 over the checks evaluated (1 ${notEvaluated})`,
        ),
      imagine.out,
    );
  });

  it('an episode that ends on a turn that does not parse: its answer check names that turn and the code', async () => {
    const [file] = await writeProbeTasks(path.join(dir, 'ends-early'), [
      ACT_ERROR_CASES.JSON_DECODE_ERROR.case,
    ]);
    const r = await rehearse('run', file, '--policy', model, '--out', out(), '--no-progress');
    assert.equal(r.code, 0, r.err);
    const trace = await readCheckedTrace(
      r.out
        .split('\n')
        .find((l) => l.startsWith('trace: '))!
        .slice('trace: '.length),
    );
    const answered = trace.ends[0].checks?.find((c) => c.id === 'answered');
    assert.deepEqual(answered, {
      id: 'answered',
      kind: 'answer',
      weight: 1,
      passed: false,
      detail: 'no final answer: the episode ended at turn e1.t1 with JSON_DECODE_ERROR',
    });
  });

  it('an episode that ends on an error scores 0 and is no success, although the checks it met are recorded as passed', async () => {
    // One act: the probe is called (its state and call checks pass), then the turn limit ends the
    // episode before any answer. Before, it scored 2/3 like a nearly finished episode.
    const [file] = await writeProbeTasks(path.join(dir, 'turn-limit'), [OK_CASE.case], {
      maxTurns: 1,
    });
    const r = await rehearse('run', file, '--policy', model, '--out', out(), '--no-progress');
    assert.equal(r.code, 0, r.err);
    const trace = await readCheckedTrace(
      r.out
        .split('\n')
        .find((l) => l.startsWith('trace: '))!
        .slice('trace: '.length),
    );
    const end = trace.ends[0];
    assert.deepEqual(
      [end.status, end.error?.code, end.reward, end.success],
      ['limit', 'TURN_LIMIT', 0, false],
    );
    assert.deepEqual(
      end.checks?.map((c) => [c.id, c.passed]),
      [
        ['probed', true],
        ['called', true],
        ['answered', false],
      ],
    );
  });

  it("rollout --rehearse-temperature: each role samples at its own temperature, and every row carries its role's and whether its episode finished", async () => {
    const rows = path.join(dir, 'two-temperature-rollouts', 'rows.jsonl');
    const r = await rehearse(
      'rollout',
      okTask,
      '--policy',
      model,
      '--episodes',
      '2',
      '--rehearse-temperature',
      '0.5',
      '--out',
      rows,
      '--runs',
      path.join(dir, 'two-temperature-runs'),
    );
    assert.equal(r.code, 0, r.err);
    const written = (await fs.readFile(rows, 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            role: string;
            temperature: number;
            finished: boolean;
            episode: string;
          },
      );
    const trace = await readCheckedTrace(/\(trace (.+)\)$/.exec(r.out)![1]);
    const sampling = (trace.run.settings as { sampling: Record<string, { temperature: number }> })
      .sampling;
    assert.deepEqual([sampling.act.temperature, sampling.rehearse.temperature], [1, 0.5]);
    assert.ok(written.some((w) => w.role === 'rehearse'));
    for (const w of written) assert.equal(w.temperature, w.role === 'act' ? 1 : 0.5, w.role);
    const statusOf = new Map(trace.ends.map((e) => [e.episodeId, e.status]));
    for (const w of written) assert.equal(w.finished, statusOf.get(w.episode) === 'completed');
  });

  it('rollout --real: the episodes play against the real tools, and only act rows are written (the baseline without world rehearsal)', async () => {
    const rows = path.join(dir, 'real-rollouts', 'rows.jsonl');
    const r = await rehearse(
      'rollout',
      okTask,
      '--policy',
      model,
      '--real',
      '--episodes',
      '2',
      '--out',
      rows,
      '--runs',
      path.join(dir, 'real-rollout-runs'),
    );
    assert.equal(r.code, 0, r.err);
    // Rollouts sample at temperature 1, so what the scripted model says is not its script (issue 39):
    // the assertions hold for whatever it samples. One act row per turn, as EnvACE's GRPO pools
    // per-step rows, each with its episode's reward from the real state; no rehearse row.
    const line =
      /^2 real episodes, mean reward (\d\.\d{3}); wrote (\d+) act and 0 rehearse rows to /.exec(
        r.out,
      );
    assert.ok(line, r.out);
    const written = (await fs.readFile(rows, 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) => JSON.parse(l) as { role: string; reward: number; group: string; episode: string },
      );
    const trace = await readCheckedTrace(/\(trace (.+)\)$/.exec(r.out)![1]);
    assert.equal(trace.run.mode, 'shadow');
    assert.equal(written.length, trace.turns.length, 'one act row per turn');
    assert.equal(Number(line[2]), written.length);
    const rewardOf = new Map(trace.ends.map((e) => [e.episodeId, e.reward]));
    const sorted = (list: unknown[][]) => list.map((x) => JSON.stringify(x)).sort();
    assert.deepEqual(
      sorted(written.map((w) => [w.role, w.reward, w.group])),
      sorted(trace.turns.map((t) => ['act', rewardOf.get(t.episodeId), 'probe-ok/rollout'])),
    );
    const mean = trace.ends.reduce((sum, e) => sum + (e.reward ?? 0), 0) / trace.ends.length;
    assert.equal(line[1], mean.toFixed(3));
    // Every call the policy made ran against the real probe, which counts them in its state.
    const calls = trace.turns.reduce(
      (n, t) => n + (t.parse.kind === 'calls' ? t.parse.calls.length : 0),
      0,
    );
    assert.equal(trace.actuals.length, calls, 'the real probe answered every call');
    assert.match(
      oneLine(
        await rehearse('rollout', okTask, '--policy', model, '--real', '--audit', '--out', rows),
        2,
      ),
      /--audit goes with imagined rollouts/,
    );
  });

  it('a task whose server cannot start is not a silent success: the report says so, stderr says why, exit 1', async () => {
    const task = path.join(dir, 'no-server', 'no-server.task.json');
    await fs.mkdir(path.dirname(task), { recursive: true });
    await fs.writeFile(
      task,
      JSON.stringify({
        version: 1,
        id: 'no-server',
        turns: [{ user: 'hello' }],
        servers: { x: { type: 'stdio', command: 'nodee-not-installed' } },
        checks: [{ kind: 'answer', contains: ['hi'] }],
      }),
    );
    const r = await rehearse('run', task, '--policy', 'reference', '--out', out(), '--no-progress');
    assert.equal(r.code, 1);
    assert.ok(r.out.split('\n').includes('errors: not played SERVER_START_FAILED ×1'), r.out);
    assert.match(
      oneLine(r, 1),
      /^rehearse: 1 of 1 episode could not be played: SERVER_START_FAILED: Server "x" could not be started: spawn nodee-not-installed ENOENT/,
    );
    const json = await rehearse(
      'run',
      task,
      '--policy',
      'reference',
      '--out',
      out(),
      '--no-progress',
      '--json',
    );
    assert.equal(json.code, 1);
    const { report } = JSON.parse(json.out) as { report: FidelityReport };
    assert.deepEqual(
      report.notPlayed.map((n) => [n.code, n.count]),
      [['SERVER_START_FAILED', 1]],
    );
  });

  it('a task file saved with a UTF-8 byte-order mark plays like any other', async () => {
    const withBom = path.join(dir, 'bom', 'probe-ok.task.json');
    await fs.mkdir(path.dirname(withBom), { recursive: true });
    await fs.writeFile(withBom, '\ufeff' + (await fs.readFile(okTask, 'utf8')));
    const r = await rehearse('run', withBom, '--policy', model, '--out', out(), '--no-progress');
    assert.equal(r.code, 0, r.err);
    assert.ok(r.out.includes('1 episode · success 100.0% (1/1) · mean reward 1.00'), r.out);
  });

  it('a built-in sample task by its id, as the editor lists the samples', async () => {
    const r = await rehearse(
      'run',
      'retail-0012',
      '--policy',
      'reference',
      '--out',
      out(),
      '--no-progress',
    );
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^ {2}task retail-0012: Cancel order #W3469890/m);
    assert.ok(r.out.includes('1 episode · success 100.0% (1/1) · mean reward 1.00'), r.out);
  });

  it('gpu check: names what the cuda device needs and what is missing here, exit 1', async () => {
    const r = await rehearse('gpu', 'check');
    assert.equal(r.code, 1);
    const lines = r.out.split('\n');
    assert.deepEqual(
      lines.map((l) => l.split(/\s{2,}/)[1]?.split(':')[0]),
      ['NVIDIA driver', 'CUDA 12 runtime', 'cuDNN 9', 'onnxruntime CUDA provider', undefined],
    );
    assert.ok(
      lines.some((l) =>
        /^MISSING {2}onnxruntime CUDA provider: missing in .*onnxruntime-node.*rehearse gpu install/.test(
          l,
        ),
      ),
      r.out,
    );
    assert.equal(
      lines.at(-1),
      'The cuda device is not ready; the policy runs on webgpu or cpu meanwhile (rehearsal.policy.device = auto).',
    );
  });
});
