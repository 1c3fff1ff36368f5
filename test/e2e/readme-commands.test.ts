// Every command line of the README, and of the docs pages its longer sections moved to, run as a
// newcomer would: in a workspace that starts with no .rehearsal folder, with the embedded default
// policy, real built-in servers and the sample tasks. A line without an entry here fails the test, so
// these pages cannot gain an untried command.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/program';
import { formatRehearsal } from '../../src/core/protocol/rehearsalParser';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import { startChatServer } from '../support/chatServer';
import { ensurePolicyHostBundle, ensureServerBundles, FIXTURES, REPO } from '../support/servers';
import type { CliRun } from '../support/cli';
import { rehearse } from '../support/cli';

/** The README and the docs pages whose command lines are run here as the README's are. */
const COMMAND_PAGES = ['README.md', 'docs/bfcl.md', 'docs/training.md'];

/** The `rehearse` lines of the pages' code blocks (continuation lines joined), without comments. */
function readmeCommandLines(): string[] {
  const lines: string[] = [];
  let inBlock = false;
  const text = COMMAND_PAGES.map((page) => readFileSync(path.join(REPO, page), 'utf8')).join('\n');
  for (const raw of text.split('\n')) {
    if (raw.startsWith('```')) {
      inBlock = !inBlock;
      continue;
    }
    if (!inBlock) continue;
    const text = raw.replace(/\s+#.*$/, '').trim();
    if (text.startsWith('rehearse ')) lines.push(text);
    else if (/^\s+\[/.test(raw) && lines.length) lines[lines.length - 1] += ` ${text}`;
  }
  return lines;
}

/** The workspace's one trace in its runs folder written by the last `run`, from its `trace: ` line. */
const traceOf = (r: CliRun): string => {
  const line = r.out.split('\n').find((l) => l.startsWith('trace: '));
  assert.ok(line, `no trace line in:\n${r.out}`);
  return line.slice('trace: '.length);
};

/** The `call` and `tool` of each row of a `--calls` list, in id order. */
function callListRows(out: string): [string, string][] {
  const lines = out.split('\n');
  const header = lines.findIndex((l) => /^call +tool +field F1 +outcome$/.test(l));
  assert.notEqual(header, -1, `no call list in:\n${out}`);
  const end = lines.findIndex((l, i) => i > header && l === '');
  return lines
    .slice(header + 2, end === -1 ? undefined : end)
    .map((l) => l.split(/ +/).slice(0, 2) as [string, string])
    .sort(([a], [b]) => a.localeCompare(b));
}

/** Each call of a trace that has a rehearsal or an actual response, with its tool, in id order. */
async function callsOf(trace: string): Promise<[string, string][]> {
  const calls = new Map<string, string>();
  for (const e of (await readTraceEvents(trace)).events)
    if (e.type === 'call.rehearsal' || e.type === 'call.actual') calls.set(e.callId, e.tool);
  return [...calls].sort(([a], [b]) => a.localeCompare(b));
}

const ok = (r: CliRun, what: string): CliRun => {
  assert.equal(r.code, 0, `${what} exited ${r.code}:\n${r.err}\n${r.out}`);
  assert.doesNotMatch(r.err, /internal error/);
  return r;
};

describe("the README's command lines, run in a fresh workspace", function () {
  this.timeout(300_000);
  let ws = '';
  let cwd = '';
  const model = path.join(REPO, 'models', 'default');
  /** Traces of the default policy (rehearsed calls) and of the reference policy. */
  let policyTrace = '';
  let referenceTrace = '';
  const inWorkspace = async (...argv: string[]): Promise<CliRun> => {
    process.chdir(ws);
    try {
      return await rehearse(...argv);
    } finally {
      process.chdir(cwd);
    }
  };

  before(async function () {
    this.timeout(600_000);
    ensureServerBundles();
    ensurePolicyHostBundle();
    cwd = process.cwd();
    ws = await fs.mkdtemp(path.join(os.tmpdir(), 'readme-ws-'));
    // The run files name their base model and rows relative to examples/training, as in a clone.
    await fs.mkdir(path.join(ws, 'examples', 'training'), { recursive: true });
    for (const f of ['sft.run.json', 'envace.run.json'])
      await fs.copyFile(
        path.join(REPO, 'examples', 'training', f),
        path.join(ws, 'examples', 'training', f),
      );
    await fs.symlink(path.join(REPO, 'models'), path.join(ws, 'models'));
  });
  after(async () => {
    process.chdir(cwd);
    await fs.rm(ws, { recursive: true, force: true });
  });

  /**
   * Each README line and what this test runs for it, in order (later lines use earlier traces). A
   * line the test cannot run as written says why its stand-in is enough.
   */
  const steps: [readme: string, run: () => Promise<void>][] = [
    [
      'rehearse generate <retail|bank|bank-choice|bank-foresight> --split test',
      async () => {
        const choice = ok(
          await inWorkspace('generate', 'bank-choice', '--split', 'test', '--count', '2'),
          'generate bank-choice',
        );
        assert.match(choice.out, /^wrote 2 bank-choice tasks to /);
        const foresight = ok(
          await inWorkspace('generate', 'bank-foresight', '--split', 'test', '--count', '2'),
          'generate bank-foresight',
        );
        assert.match(foresight.out, /^wrote 2 bank-foresight tasks to /);
        const r = ok(await inWorkspace('generate', 'retail', '--split', 'test'), 'generate');
        assert.match(r.out, /^wrote 50 retail tasks to \.rehearsal[/\\]tasks[/\\]retail-test$/);
        const files = await fs.readdir(path.join(ws, '.rehearsal', 'tasks', 'retail-test'));
        assert.equal(files.length, 50);
        assert.ok(
          files.every((f) => /^retail-\d{3}9\.task\.json$/.test(f)),
          'test-split seeds end in 9',
        );
      },
    ],
    [
      'rehearse verify <task...>',
      async () => {
        const r = ok(
          await inWorkspace(
            'verify',
            'retail-0012',
            '.rehearsal/tasks/retail-test/retail-0009.task.json',
          ),
          'verify',
        );
        assert.match(r.out, /retail-0012/);
      },
    ],
    [
      'rehearse run <task...> --policy default|reference|<model-dir>|<http(s) endpoint> --mode shadow|imagine|private [--audit] [--episodes K] [--concurrency N] [--samples N] [--budget N --order parallel|sequential] [--device auto|cpu|cuda|webgpu] [--out dir] [--calls] [--json] [--verbose]',
      async () => {
        // Into the workspace's .rehearsal/runs, which does not exist yet.
        const reference = ok(
          await inWorkspace(
            'run',
            'retail-0012',
            '--policy',
            'reference',
            '--mode',
            'shadow',
            '--no-progress',
          ),
          'run --policy reference',
        );
        referenceTrace = traceOf(reference);
        assert.ok(referenceTrace.startsWith(path.join(ws, '.rehearsal', 'runs')), referenceTrace);
        const shadow = ok(
          await inWorkspace(
            'run',
            'retail-0012',
            'bank-0017',
            '--policy',
            'default',
            '--mode',
            'shadow',
            '--concurrency',
            '2',
            '--no-progress',
            '--calls',
            '--verbose',
          ),
          'run --policy default',
        );
        policyTrace = traceOf(shadow);
        assert.match(shadow.out, /policy: the default policy \(models\/default\) on cpu/);
        assert.match(shadow.out, /^devices tried: .*cpu used$/m);
        // The call list: a row for each call the default policy made, whatever its greedy choices
        // on this machine (none at all is a list with no rows).
        assert.deepEqual(callListRows(shadow.out), await callsOf(policyTrace), 'the call list');
        assert.match(shadow.out, /^  task retail-0012: Cancel order #W3469890/m);
        const imagine = ok(
          await inWorkspace(
            'run',
            'bank-0017',
            '--policy',
            model,
            '--mode',
            'imagine',
            '--audit',
            '--out',
            path.join(ws, 'other', 'runs'),
            '--json',
            '--no-progress',
          ),
          'run --mode imagine --audit',
        );
        assert.equal(
          (JSON.parse(imagine.out) as { run: { status: string } }).run.status,
          'completed',
        );
        const priv = ok(
          await inWorkspace(
            'run',
            'retail-0012',
            '--mode',
            'private',
            '--budget',
            '1',
            '--order',
            'parallel',
            '--device',
            'cpu',
            '--no-progress',
            '--out',
            path.join(ws, 'other', 'runs'),
          ),
          'run --mode private',
        );
        assert.match(priv.out, /^1 committed episode · /m);
        assert.match(priv.out, /^1 imagined episode \(private rehearsal/m);
      },
    ],
    [
      'rehearse report <trace...> [--calls] [--json]',
      async () => {
        const text = ok(
          await inWorkspace('report', policyTrace, referenceTrace, '--calls'),
          'report --calls',
        );
        assert.match(text.out, /^call +tool +field F1 +outcome +run$/m);
        const json = ok(await inWorkspace('report', '.rehearsal/runs', '--json'), 'report --json');
        assert.equal((JSON.parse(json.out) as { traces: unknown[] }).traces.length, 2);
      },
    ],
    [
      'rehearse diff <trace> --call <id> | --worst',
      async () => {
        // Traces whose calls do not hang on the default policy's choices: the reference policy's
        // (its first call is the task's), and its replay by an endpoint that always rehearses the
        // same wrong user, so that every call is compared.
        const call = ok(
          await inWorkspace('diff', referenceTrace, '--call', 'e1.t1.c1'),
          'diff --call',
        );
        assert.match(
          call.out,
          /^call e1\.t1\.c1 +find_user_id_by_email +rehearsal \(−\) vs actual/m,
        );
        const endpoint = await startChatServer(() =>
          formatRehearsal(JSON.stringify({ user_id: 'nobody_0000' })),
        );
        let replayed: CliRun;
        try {
          replayed = ok(
            await inWorkspace(
              'replay',
              referenceTrace,
              '--policy',
              endpoint.url,
              '--model',
              'm',
              '--out',
              path.join(ws, 'other', 'replays'),
              '--no-progress',
            ),
            'replay with an endpoint',
          );
        } finally {
          await endpoint.close();
        }
        const worst = ok(
          await inWorkspace('diff', path.dirname(traceOf(replayed)), '--worst'),
          'diff --worst',
        );
        assert.match(worst.out, /rehearsal \(−\) vs actual \(\+\)/);
        assert.match(worst.out, /nobody_0000/);
      },
    ],
    [
      'rehearse replay <trace> --policy <model-dir>',
      async () => {
        const r = ok(
          await inWorkspace(
            'replay',
            referenceTrace,
            '--policy',
            'models/default',
            '--no-progress',
          ),
          'replay',
        );
        assert.match(r.out, /^\d+ calls? · \d+ rehearsed/m);
      },
    ],
    [
      'rehearse annotate <trace> --mismatches',
      async () => {
        const r = ok(
          await inWorkspace('annotate', policyTrace, '--mismatches', '--author', 'newcomer'),
          'annotate',
        );
        assert.match(r.out, /marked/);
        assert.ok(existsSync(path.join(path.dirname(policyTrace), 'annotations.jsonl')));
      },
    ],
    [
      'rehearse export <trace...> --out rows.jsonl',
      async () => {
        ok(await inWorkspace('export', policyTrace, '--out', 'exports/new/rows.jsonl'), 'export');
        assert.ok(
          (await fs.readFile(path.join(ws, 'exports', 'new', 'rows.jsonl'), 'utf8')).split('\n')
            .length > 2,
        );
      },
    ],
    [
      'rehearse export .rehearsal/runs --out .rehearsal/datasets/rows.jsonl --only-mismatches --split-by-task 0.2',
      async () => {
        ok(
          await inWorkspace(
            'export',
            '.rehearsal/runs',
            '--out',
            '.rehearsal/datasets/rows.jsonl',
            '--only-mismatches',
            '--split-by-task',
            '0.2',
          ),
          'export --split-by-task',
        );
        assert.ok(existsSync(path.join(ws, '.rehearsal', 'datasets', 'rows.train.jsonl')));
      },
    ],
    [
      'rehearse rollout <task...> --policy <dir> --out rows.jsonl',
      async () => {
        const r = ok(
          await inWorkspace(
            'rollout',
            'retail-0012',
            '--policy',
            'models/default',
            '--episodes',
            '2',
            '--out',
            'rollouts/rows.jsonl',
          ),
          'rollout',
        );
        assert.match(r.out, /^2 imagined episodes, mean reward/);
      },
    ],
    [
      'rehearse import envace|chat <file>',
      async () => {
        const chat = ok(
          await inWorkspace('import', 'chat', path.join(FIXTURES, 'import', 'chat-sample.jsonl')),
          'import chat',
        );
        assert.match(chat.out, /into \.rehearsal[/\\]imports[/\\]chat-sample /);
        ok(
          await inWorkspace(
            'import',
            'envace',
            path.join(FIXTURES, 'import', 'envace-sample.json'),
            '--out',
            'imported/envace',
          ),
          'import envace',
        );
        assert.ok((await fs.readdir(path.join(ws, 'imported', 'envace', 'tasks'))).length > 0);
      },
    ],
    [
      'rehearse compare <held-out trace> --policy models/default --policy .rehearsal/training/retail-grounding/final',
      async () => {
        // No training run here (the train line below is a dry run): both sides are the default policy.
        const r = ok(
          await inWorkspace(
            'compare',
            referenceTrace,
            '--policy',
            'models/default',
            '--policy',
            model,
            '--no-progress',
          ),
          'compare',
        );
        assert.match(r.out, /get_order_details|find_user_id_by_email/);
      },
    ],
    [
      'rehearse train --config examples/training/sft.run.json',
      async () => {
        // Fifty real steps take minutes; training itself is run by training-launch-processes.test.ts. The dry run
        // resolves the same file, base model and rows and prints the command it would start.
        const r = ok(
          await inWorkspace('train', '--config', 'examples/training/sft.run.json', '--dry-run'),
          'train --dry-run',
        );
        assert.match(r.out, /would start from the base model/);
      },
    ],
    [
      'rehearse train --config examples/training/envace.run.json --backend envace',
      async () => {
        const r = ok(
          await inWorkspace(
            'train',
            '--config',
            'examples/training/envace.run.json',
            '--backend',
            'envace',
          ),
          'train --backend envace',
        );
        assert.match(r.out, /Not started here: EnvACE trains on a Ray cluster/);
        assert.ok(
          existsSync(path.join(ws, '.rehearsal', 'training', 'retail-envace', 'launch-envace.sh')),
          "the launch script is in the workspace's .rehearsal",
        );
      },
    ],
    [
      'rehearse serve --policy <model-dir> --port 8000',
      async () => {
        const out: string[] = [];
        const serving = runCli(['serve', '--policy', 'default', '--port', '0'], {
          out: (s) => out.push(s),
          err: () => undefined,
          color: false,
        });
        for (let i = 0; i < 400 && out.length === 0; i++)
          await new Promise((r) => setTimeout(r, 50));
        const url = /at (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(out[0] ?? '')?.[1];
        assert.ok(url, `serve printed: ${out.join('\n')}`);
        const key = /API key for this launch .*: (\S+)$/.exec(out[1] ?? '')?.[1];
        const models = (await (
          await fetch(`${url}/models`, { headers: { authorization: `Bearer ${key}` } })
        ).json()) as { data: { id: string }[] };
        assert.equal(models.data.length, 1);
        process.emit('SIGINT');
        assert.equal(await serving, 0);
      },
    ],
    [
      'rehearse gpu check | install',
      async () => {
        const check = await inWorkspace('gpu', 'check');
        assert.ok(check.code === 0 || check.code === 1, check.err);
        assert.match(check.out, /onnxruntime CUDA provider/);
        // install downloads hundreds of megabytes from NuGet: only its help is run here.
        ok(await inWorkspace('gpu', 'install', '--help'), 'gpu install --help');
      },
    ],
    [
      'rehearse import bfcl base',
      async () => {
        const r = ok(await inWorkspace('import', 'bfcl', 'base'), 'import bfcl base');
        assert.match(r.out, /^wrote 200 task\(s\) to \S+\.rehearsal\/imports\/bfcl-base\/tasks/);
      },
    ],
    [
      'rehearse verify .rehearsal/imports/bfcl-base/tasks',
      async () => {
        // All 200 take minutes (the README gives the time); three of them, as the line runs them.
        const some = path.join(ws, 'bfcl-some');
        await fs.mkdir(some);
        for (const id of ['multi_turn_base_0', 'multi_turn_base_1', 'multi_turn_base_2'])
          await fs.copyFile(
            path.join(ws, '.rehearsal', 'imports', 'bfcl-base', 'tasks', `${id}.task.json`),
            path.join(some, `${id}.task.json`),
          );
        const r = ok(await inWorkspace('verify', some), 'verify bfcl');
        assert.match(r.out, /3 of 3 tasks pass their own checks/);
      },
    ],
    [
      'rehearse run .rehearsal/imports/bfcl-base/tasks --policy <model folder | http://host:port/v1 --model <name>>',
      async () => {
        // Two tasks with the default policy's folder (an endpoint takes --model the same way).
        const task = (id: string) =>
          path.join('.rehearsal', 'imports', 'bfcl-base', 'tasks', `${id}.task.json`);
        const r = ok(
          await inWorkspace(
            'run',
            task('multi_turn_base_0'),
            task('multi_turn_base_1'),
            '--policy',
            model,
            '--no-progress',
          ),
          'run bfcl',
        );
        assert.match(r.out, /^trace: /m);
      },
    ],
    [
      'rehearse report --format bfcl .rehearsal/runs',
      async () => {
        const r = ok(
          await inWorkspace('report', '--format', 'bfcl', '.rehearsal/runs'),
          'report --format bfcl',
        );
        assert.match(r.out, /^multi_turn_base\s+2\s+\d\s+\d+\.\d%$/m);
        assert.match(r.out, /^overall \(mean of the categories\): \d+\.\d%$/m);
      },
    ],
    [
      'rehearse import tau2 --domain retail',
      async () => {
        const r = ok(await inWorkspace('import', 'tau2', '--domain', 'retail'), 'import tau2');
        assert.match(r.out, /^wrote 114 task\(s\) to \S+\.rehearsal\/imports\/tau2-retail\/tasks/);
      },
    ],
    [
      'rehearse run .rehearsal/imports/tau2-retail/tasks --policy http://127.0.0.1:8000/v1 --model Qwen/Qwen3-8B --user-endpoint http://127.0.0.1:8001/v1 --user-model Qwen/Qwen3-32B --episodes 4 --concurrency 8',
      async () => {
        // The two vLLM servers are stand-ins (the agent answers without a call, the user opens and
        // then stops), on two of the 114 tasks, two episodes each, so that pass^2 has its trials.
        const agent = await startChatServer(() => 'I can look into that for you.', {
          models: () => ['Qwen/Qwen3-8B'],
        });
        const user = await startChatServer(
          (request) =>
            request.messages.length <= 2 ? 'Hi, I want to return an item.' : 'Thanks. ###STOP###',
          { models: () => ['Qwen/Qwen3-32B'] },
        );
        const tasks = path.join('.rehearsal', 'imports', 'tau2-retail', 'tasks');
        try {
          const r = ok(
            await inWorkspace(
              'run',
              path.join(tasks, 'tau2_retail_0.task.json'),
              path.join(tasks, 'tau2_retail_1.task.json'),
              ...['--policy', agent.url, '--model', 'Qwen/Qwen3-8B'],
              ...['--user-endpoint', user.url, '--user-model', 'Qwen/Qwen3-32B'],
              ...['--episodes', '2', '--concurrency', '2', '--no-progress'],
            ),
            'run tau2 with a user endpoint',
          );
          const ends = (await readTraceEvents(traceOf(r))).events.filter(
            (e) => e.type === 'episode.end',
          );
          assert.deepEqual(
            ends.map((e) => e.userEnd?.by),
            ['stop', 'stop', 'stop', 'stop'],
          );
        } finally {
          await agent.close();
          await user.close();
        }
      },
    ],
    [
      'rehearse report --format tau2 .rehearsal/runs',
      async () => {
        const r = ok(
          await inWorkspace('report', '--format', 'tau2', '.rehearsal/runs'),
          'report --format tau2',
        );
        // Nothing was done for the users, so τ² rewards no trial.
        assert.match(r.out, /^retail +2 +4 +0\.000 +0\.000 +0\.000$/m);
        assert.match(
          r.out,
          /^user simulator: Qwen\/Qwen3-32B at http:\/\/127\.0\.0\.1:\d+\/v1 \(4 episode\(s\)\)$/m,
        );
      },
    ],
  ];

  it('every command line of the README and its command pages has a step here, and every step a line', () => {
    assert.deepEqual([...readmeCommandLines()].sort(), steps.map(([line]) => line).sort());
  });

  for (const [line, run] of steps) it(line, run);

  it('the two commands at the top of the README are the ones .ci/run proves', () => {
    const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const ci = readFileSync(path.join(REPO, '.ci', 'run'), 'utf8');
    for (const command of ['npm ci && npm run demo', 'npm ci && npm test'])
      assert.ok(readme.includes(`\n${command} `), `README: ${command}`);
    assert.match(ci, /^npm test$/m);
    assert.match(ci, /^npm run demo$/m);
    const scripts = (
      JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
        scripts: Record<string, string>;
      }
    ).scripts;
    for (const page of COMMAND_PAGES)
      for (const [, name] of readFileSync(path.join(REPO, page), 'utf8').matchAll(
        /`npm run ([\w:-]+)/g,
      ))
        assert.ok(scripts[name], `${page} names npm run ${name}, which package.json lacks`);
  });
});
