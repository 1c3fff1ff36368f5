// A judge from the command line (issue 29, part 6): `--judge <url> [--judge-model <name>]` on `run`,
// `rollout` and `verify` reaches a real OpenAI-compatible endpoint, with its key from
// REHEARSAL_JUDGE_API_KEY, and the summary says how many judge items were not evaluated and why.
// Endpoints: small HTTP servers here whose answers are fixed (a verdict that follows the question, or
// a text that is no verdict), and `rehearse serve` over the embedded default policy (a real endpoint,
// whose answer, a verdict or not, depends on the machine's floats and is recorded either way).
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/program';
import { freePort } from '../../src/core/base/freePort';
import { judgeSummaryLines } from '../../src/cli/judgeArg';
import { notEvaluatedText } from '../../src/core/report/reportText';
import { JUDGE_API_KEY_ENV } from '../../src/core/tasks/checks/judgeEndpoint';
import { tallyNotEvaluated } from '../../src/core/tasks/checks/notEvaluated';
import type { CheckVerdict } from '../../src/core/trace/format/schema';
import { startChatServer } from '../support/chatServer';
import type { JudgeServer } from '../support/judgeServer';
import { startJudgeServer } from '../support/judgeServer';
import { ensurePolicyHostBundle, ensureServerBundles, fixtureServer } from '../support/servers';
import type { CliRun } from '../support/cli';
import { rehearse } from '../support/cli';
import { readCheckedTrace } from '../support/traceChecks';

const JUDGE_KEY = 'judge-key-0123456789abcdef';
/** A judge's answer that is no `{"answer": boolean}`. */
const NO_VERDICT = 'Yes, it probed.';

/**
 * Two user turns on the probe server, with their reference solution; judge items on each turn.
 * The judge below passes a question about a case the transcript probed, and fails "z".
 */
const TASK = {
  version: 1,
  id: 'judged-two-turns',
  seed: 1,
  turns: [{ user: 'Probe a.' }, { user: 'Probe b.' }],
  servers: { probe: fixtureServer('probe.mjs') },
  checks: [
    { id: 'judged-a', kind: 'judge', question: 'Did the agent probe a?', turn: 0, weight: 1 },
    { id: 'judged-b', kind: 'judge', question: 'Did the agent probe b?', turn: 1, weight: 1 },
    { id: 'judged-z', kind: 'judge', question: 'Did the agent probe z?', turn: 1, weight: 1 },
  ],
  reference: {
    turns: [
      { calls: [{ name: 'probe', arguments: { case: 'a' } }], answer: 'Done a.' },
      { calls: [{ name: 'probe', arguments: { case: 'b' } }], answer: 'Done b.' },
    ],
  },
};

describe('a judge from the command line: --judge <url> [--judge-model <name>]', function () {
  this.timeout(180_000);
  let dir = '';
  let taskFile = '';
  let judgeUrl = '';
  /** The models the judge lists (GET /v1/models). */
  let models = ['judge-7b'];
  /** What the judge was asked: the model and the question of each verdict. */
  let asked: JudgeServer['asked'] = [];
  let judge: JudgeServer;
  const savedKey = process.env[JUDGE_API_KEY_ENV];

  before(async () => {
    ensureServerBundles();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'judge-cli-'));
    taskFile = path.join(dir, 'judged-two-turns.task.json');
    await fs.writeFile(taskFile, JSON.stringify(TASK));
    // A verdict follows the question: true only when the transcript probed the asked case.
    const probedCase = (question: string) => /probe (\w)\?/.exec(question)?.[1] ?? '';
    judge = await startJudgeServer({
      key: JUDGE_KEY,
      models: () => models,
      answer: (question, prompt) =>
        new RegExp(`calls probe \\{"case":"${probedCase(question)}"\\}`).test(prompt),
      reasoning: (question, answer) => `probe ${probedCase(question)}: ${answer}`,
    });
    judgeUrl = judge.url;
  });
  beforeEach(() => {
    process.env[JUDGE_API_KEY_ENV] = JUDGE_KEY;
    models = ['judge-7b'];
    judge.asked.length = 0;
    asked = judge.asked;
  });
  after(async () => {
    if (savedKey === undefined) delete process.env[JUDGE_API_KEY_ENV];
    else process.env[JUDGE_API_KEY_ENV] = savedKey;
    await judge.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const runs = () => path.join(dir, 'runs');
  const run = (...extra: string[]) =>
    rehearse('run', taskFile, '--policy', 'reference', '--no-progress', '--out', runs(), ...extra);
  /** The verdicts of the run's one episode, by item id. */
  async function verdicts(r: CliRun): Promise<Record<string, CheckVerdict>> {
    assert.equal(r.code, 0, r.err);
    const traceFile = /^trace: (.*)$/m.exec(r.out)?.[1];
    assert.ok(traceFile, r.out);
    const trace = await readCheckedTrace(traceFile);
    assert.equal(trace.ends.length, 1);
    return Object.fromEntries((trace.ends[0].checks ?? []).map((c) => [c.id, c]));
  }

  it("run --judge: each item gets the judge's verdict, asked of the model the endpoint lists, with the key from the environment", async () => {
    const r = await run('--judge', judgeUrl);
    const v = await verdicts(r);
    assert.deepEqual(
      Object.values(v).map((c) => [c.id, c.passed]),
      [
        ['judged-a', true],
        ['judged-b', true],
        ['judged-z', false],
      ],
    );
    assert.match(v['judged-z'].detail!, /^judge: probe z: false/);
    assert.deepEqual(
      asked.map((a) => a.model),
      ['judge-7b', 'judge-7b', 'judge-7b'],
      'no --judge-model: the one model the endpoint lists',
    );
    assert.doesNotMatch(r.out, /not evaluated/);
    // --judge-model names it.
    const named = await run('--judge', judgeUrl, '--judge-model', 'other');
    assert.equal(named.code, 0, named.err);
    assert.deepEqual(
      asked.slice(3).map((a) => a.model),
      ['other', 'other', 'other'],
    );
  });

  it('run --judge with an endpoint that answers no verdict: each item is not evaluated, with the answer, and the summary counts them', async () => {
    const chat = await startChatServer(() => NO_VERDICT, { key: JUDGE_KEY });
    try {
      const r = await run('--judge', chat.url);
      const v = await verdicts(r);
      assert.equal(chat.requests.length, 3, 'one request per item');
      for (const c of Object.values(v)) {
        assert.equal(c.passed, null, c.id);
        assert.equal(
          c.detail,
          `not evaluated: the judge's verdict is not {"answer": boolean} (${NO_VERDICT})`,
        );
      }
      assert.match(
        r.out,
        /^3 judge items not evaluated: the judge's verdict is not \{"answer": boolean\} \(Yes, it probed\.\)$/m,
      );
    } finally {
      await chat.close();
    }
  });

  it('run without --judge: the summary says how many judge items were not evaluated and what to pass', async () => {
    const r = await run();
    const v = await verdicts(r);
    assert.deepEqual(
      Object.values(v).map((c) => c.passed),
      [null, null, null],
    );
    assert.match(
      r.out,
      /^3 judge items not evaluated: no judge endpoint is configured \(--judge <url>\)$/m,
    );
    assert.equal(asked.length, 0);
  });

  it('--reward envace: with a judge, the second user turn is played and graded; without one, the episode ends after the first', async () => {
    const judged = await verdicts(await run('--reward', 'envace', '--judge', judgeUrl));
    assert.deepEqual(
      Object.values(judged).map((c) => [c.id, c.passed]),
      [
        ['judged-a', true],
        ['judged-b', true],
        ['judged-z', false],
      ],
    );
    assert.deepEqual(
      asked.map((a) => a.question),
      ['Did the agent probe a?', 'Did the agent probe b?', 'Did the agent probe z?'],
    );
    const unjudged = await run('--reward', 'envace');
    const v = await verdicts(unjudged);
    assert.match(v['judged-b'].detail!, /user turn 2 was never graded \(EnvACE ended the episode/);
    assert.match(
      unjudged.out,
      /^1 judge item not evaluated: no judge endpoint is configured \(--judge <url>\)\n2 judge items not evaluated: user turn 2 was never graded \(EnvACE ended the episode after user turn 1\)$/m,
    );
  });

  it('rollout --judge: rewards come from the verdicts; without it the line says why they do not', async () => {
    const out = path.join(dir, 'rows.jsonl');
    const rollout = (...extra: string[]) =>
      rehearse(
        'rollout',
        taskFile,
        '--policy',
        'reference',
        '--real',
        '--episodes',
        '2',
        '--reward',
        'envace',
        '--act-rows',
        'episode',
        '--out',
        out,
        '--runs',
        runs(),
        ...extra,
      );
    const rewards = async () =>
      (await fs.readFile(out, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { reward: number }).reward);
    const judged = await rollout('--judge', judgeUrl);
    assert.equal(judged.code, 0, judged.err);
    assert.doesNotMatch(judged.out, /not evaluated/);
    // EnvACE's score: (1 + 1) passed weights over 2 user turns.
    assert.deepEqual(await rewards(), [1, 1]);
    const unjudged = await rollout();
    assert.equal(unjudged.code, 0, unjudged.err);
    assert.deepEqual(await rewards(), [0, 0]);
    assert.match(
      unjudged.out,
      /^2 judge items not evaluated: no judge endpoint is configured \(--judge <url>\)$/m,
    );
  });

  it('verify --judge grades the reference solution with the verdicts; without it, the line says what to pass', async () => {
    const judged = await rehearse('verify', taskFile, '--judge', judgeUrl, '--judge-model', 'j');
    assert.equal(judged.code, 1, 'the reference does not probe z: the task fails its own check');
    assert.match(judged.out, /^FAIL +judged-two-turns +reward 0\.666667$/m);
    assert.match(judged.out, /^ +judged-z: judge: probe z: false$/m);
    assert.doesNotMatch(judged.out, /not evaluated/);
    const unjudged = await rehearse('verify', taskFile, '--json');
    const json = JSON.parse(unjudged.out) as {
      notEvaluated: { kind: string; reason: string; count: number }[];
    };
    assert.deepEqual(
      json.notEvaluated.map((n) => [n.kind, n.reason, n.count]),
      [['judge', 'no judge endpoint is configured', 3]],
    );
    const text = await rehearse('verify', taskFile);
    assert.match(
      text.out,
      /^3 judge items not evaluated: no judge endpoint is configured \(--judge <url>\)$/m,
    );
    // A named model skips the endpoint's list: a judge that is not there costs each item, with why.
    const gone = `http://127.0.0.1:${await freePort()}/v1`;
    const unreachable = await rehearse('verify', taskFile, '--judge', gone, '--judge-model', 'j');
    assert.match(
      unreachable.out,
      new RegExp(
        `^3 judge items not evaluated: the judge at ${gone.replace(/\./g, '\\.')} failed \\(Connection error\\.\\)$`,
        'm',
      ),
    );
  });

  it('refuses a URL that is not http(s), credentials in the URL, a model without a judge, and an endpoint of several models: exit 2, one line', async () => {
    const refused = async (argv: string[], pattern: RegExp) => {
      const r = await run(...argv);
      assert.deepEqual([r.code, r.errLines.length], [2, 1], r.err);
      assert.match(r.errLines[0], pattern);
    };
    await refused(
      ['--judge', 'ftp://127.0.0.1/v1'],
      /--judge "ftp:\/\/127\.0\.0\.1\/v1" is not an http\(s\) URL; give --judge the base URL/,
    );
    await refused(['--judge', 'judge.local'], /is not an http\(s\) URL/);
    await refused(
      ['--judge', 'http://me:secret@127.0.0.1/v1'],
      /holds credentials; .* put its key in REHEARSAL_JUDGE_API_KEY/,
    );
    await refused(['--judge-model', 'm'], /--judge-model goes with --judge <url>/);
    models = ['big', 'small'];
    await refused(
      ['--judge', judgeUrl],
      /serves 2 models \(big, small\): name one with --judge-model/,
    );
    models = ['judge-7b'];
    process.env[JUDGE_API_KEY_ENV] = 'not-the-key';
    const r = await run('--judge', judgeUrl);
    assert.equal(r.code, 1);
    assert.match(
      r.err,
      /The judge at .* refused the API key \(401\): set it in REHEARSAL_JUDGE_API_KEY/,
    );
    assert.equal(asked.length, 0);
  });
});

describe("a judge from the command line: `rehearse serve`'s endpoint as judge", function () {
  this.timeout(600_000);
  let dir = '';
  const saved = {
    serve: process.env['REHEARSAL_SERVE_API_KEY'],
    judge: process.env[JUDGE_API_KEY_ENV],
  };
  before(async () => {
    ensureServerBundles();
    ensurePolicyHostBundle();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'judge-serve-'));
    process.env['REHEARSAL_SERVE_API_KEY'] = JUDGE_KEY;
    process.env[JUDGE_API_KEY_ENV] = JUDGE_KEY;
  });
  after(async () => {
    for (const [name, value] of [
      ['REHEARSAL_SERVE_API_KEY', saved.serve],
      [JUDGE_API_KEY_ENV, saved.judge],
    ] as const)
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('judge items reach the served policy and get its verdict, or are not evaluated for an unreadable one, never for a missing or failed judge', async () => {
    const out: string[] = [];
    const serving = runCli(['serve', '--policy', 'default', '--port', '0'], {
      out: (s) => out.push(s),
      err: () => undefined,
      color: false,
    });
    try {
      for (let i = 0; i < 1200 && out.length === 0; i++)
        await new Promise((r) => setTimeout(r, 50));
      const url = /at (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(out[0] ?? '')?.[1];
      assert.ok(url, `serve printed: ${out.join('\n')}`);
      const taskFile = path.join(dir, 'judged.task.json');
      await fs.writeFile(taskFile, JSON.stringify({ ...TASK, checks: TASK.checks.slice(0, 1) }));
      // No --judge-model: the one model `rehearse serve` lists.
      const r = await rehearse(
        'run',
        taskFile,
        '--policy',
        'reference',
        '--no-progress',
        '--out',
        path.join(dir, 'runs'),
        '--judge',
        url,
      );
      assert.equal(r.code, 0, r.err);
      const traceFile = /^trace: (.*)$/m.exec(r.out)?.[1];
      const trace = await readCheckedTrace(traceFile!);
      const item = trace.ends[0].checks!.find((c) => c.id === 'judged-a')!;
      // The default policy's greedy answer may differ by machine: either it is a verdict (recorded
      // as one) or it is not (recorded as not evaluated, with the text). What an answer that is no
      // verdict gives is asserted exactly above, with a fixed one.
      if (item.passed === null) {
        assert.match(
          item.detail!,
          /^not evaluated: the judge's verdict is not \{"answer": boolean\} \(/,
        );
        assert.match(
          r.out,
          /^1 judge item not evaluated: the judge's verdict is not \{"answer": boolean\} \(.*\)$/m,
        );
      } else {
        assert.equal(typeof item.passed, 'boolean');
        assert.match(item.detail!, /^judge: /);
        assert.doesNotMatch(r.out, /not evaluated/);
      }
    } finally {
      process.emit('SIGINT');
      assert.equal(await serving, 0);
    }
  });
});

describe('judge items not evaluated, counted by reason', () => {
  it("counts items that failed alike together (each verdict's text apart), and shows the first's particulars", () => {
    const verdict = (id: string, detail: string): CheckVerdict => ({
      id,
      kind: 'judge',
      weight: 1,
      passed: null,
      detail,
    });
    const groups = tallyNotEvaluated(
      [],
      [
        verdict('a', `not evaluated: the judge's verdict is not {"answer": boolean} (maybe (yes)`),
        verdict('b', `not evaluated: the judge's verdict is not {"answer": boolean} ()`),
        verdict('c', 'not evaluated: no judge endpoint is configured'),
        {
          id: 'd',
          kind: 'state',
          weight: 1,
          passed: null,
          detail: 'not evaluated: no judge endpoint is configured',
        },
        { id: 'e', kind: 'judge', weight: 1, passed: true },
      ],
    );
    assert.deepEqual(
      groups.map((g) => [g.kind, g.reason, g.count, g.varied ?? false]),
      [
        ['judge', `the judge's verdict is not {"answer": boolean}`, 2, true],
        ['judge', 'no judge endpoint is configured', 1, false],
        ['state', 'no judge endpoint is configured', 1, false],
      ],
    );
    assert.equal(
      notEvaluatedText(groups[0]),
      `the judge's verdict is not {"answer": boolean} (first: maybe (yes)`,
    );
    assert.equal(notEvaluatedText(groups[1]), 'no judge endpoint is configured');
    assert.deepEqual(judgeSummaryLines(groups), [
      `2 judge items not evaluated: the judge's verdict is not {"answer": boolean} (first: maybe (yes)`,
      '1 judge item not evaluated: no judge endpoint is configured (--judge <url>)',
    ]);
  });
});
