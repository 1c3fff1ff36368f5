// Issue 40, part 2: imagination grounded as EnvACE grounds it. `rehearse verify --examples-out`
// gives each task its reference's calls with the real servers' responses as examples, and an
// imagined rollout with `--max-examples` shows them to the world model in its rehearse prompts.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { actualValue } from '../../src/core/fidelity/responseValue';
import { buildRehearsePrompt } from '../../src/core/protocol/rehearsePrompt';
import { actualToolText } from '../../src/core/runner/toolMessages';
import { loadTasks } from '../../src/core/tasks/format/loader';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import { rehearse } from '../support/cli';
import { REPO, ensurePolicyHostBundle, ensureServerBundles } from '../support/servers';
import { OK_CASE, scriptedModel, writeProbeTasks } from '../support/scriptedModel';
import { useTempDir } from '../support/tempDir';
import { readCheckedTrace } from '../support/traceChecks';

/** Two train-split bank tasks of seeds no recipe uses, generated into `dir`. */
async function bankTasks(dir: string): Promise<string> {
  const tasks = path.join(dir, 'tasks');
  const g = await rehearse(
    ...['generate', 'bank', '--split', 'train', '--start', '20000', '--count', '2'],
    ...['--out', tasks],
  );
  assert.equal(g.code, 0, g.err);
  return tasks;
}

/** The reference's calls of a task, in order. */
const referenceCalls = (task: TaskFile) =>
  (task.reference?.turns ?? []).flatMap((t) => t.calls.map((c) => [c.name, c.arguments]));

describe('rehearse verify --examples-out: grounded imagination (issue 40)', function () {
  this.timeout(300_000);
  const tmp = useTempDir('rehearsal-grounded-');
  before(() => {
    ensureServerBundles();
    ensurePolicyHostBundle();
  });

  it("writes each task again with its reference's calls and the real servers' responses as examples", async () => {
    const tasks = await bankTasks(tmp());
    const grounded = path.join(tmp(), 'grounded');
    const v = await rehearse('verify', tasks, '--examples-out', grounded);
    assert.equal(v.code, 0, v.out + v.err);
    assert.match(v.out, /^2 tasks written with examples, 0 without \(in .+grounded\)$/m);
    const inputs = await loadTasks([tasks]);
    const written = await loadTasks([grounded]);
    assert.deepEqual(
      written.map((w) => path.basename(w.file)),
      inputs.map((i) => path.basename(i.file)),
    );
    for (const [i, { task }] of written.entries()) {
      // The same task, with its reference's calls (in order) as examples; nothing else changed.
      const { examples, $schema, ...rest } = task;
      const { $schema: inputSchema, ...input } = inputs[i].task;
      assert.deepEqual(rest, input);
      assert.equal(
        path.resolve(grounded, $schema!),
        path.resolve(tasks, inputSchema!),
        '$schema still names the schema',
      );
      assert.deepEqual(
        examples?.map((e) => [e.tool, e.arguments]),
        referenceCalls(input as TaskFile),
      );
    }

    // Each example's response is the real server's: a reference run of the written tasks gets the
    // same answers, call for call (the servers are reset with the task's seed).
    const runs = path.join(tmp(), 'runs');
    const r = await rehearse(
      ...['run', grounded, '--policy', 'reference', '--out', runs, '--no-progress', '--json'],
    );
    assert.equal(r.code, 0, r.err);
    const trace = await readCheckedTrace(
      (JSON.parse(r.out) as { run: { traceFile: string } }).run.traceFile,
    );
    assert.equal(trace.episodes.length, 2);
    for (const episode of trace.episodes) {
      const task = written.find((w) => w.task.id === episode.taskId)!.task;
      const actuals = trace.actuals.filter((a) => a.episodeId === episode.episodeId);
      assert.equal(actuals.length, task.examples!.length, episode.taskId);
      for (const [k, actual] of actuals.entries()) {
        const example = task.examples![k];
        assert.equal(example.tool, actual.tool);
        assert.equal(example.text, actualToolText(actual.response));
        const value = actualValue(actual.response!);
        assert.equal(value.kind, 'json');
        assert.deepEqual(example.result, value.kind === 'json' ? value.value : undefined);
      }
    }
  });

  it('an imagined rollout with --max-examples shows those examples in its rehearse prompts', async () => {
    // The scripted test model calls the probe tool on this task's prompt (class a, test/README.md):
    // the act prompt holds no examples, so they cannot change the call it was trained to make.
    const dir = tmp();
    const [file] = await writeProbeTasks(path.join(dir, 'tasks'), [OK_CASE.case]);
    const task = JSON.parse(await fs.readFile(file, 'utf8')) as TaskFile;
    task.reference = {
      turns: [{ calls: [{ name: 'probe', arguments: { case: OK_CASE.case } }], answer: 'done' }],
    };
    await fs.writeFile(file, JSON.stringify(task));
    const grounded = path.join(dir, 'grounded');
    const v = await rehearse('verify', path.dirname(file), '--examples-out', grounded);
    assert.equal(v.code, 0, v.out + v.err);
    const [loaded] = await loadTasks([grounded]);
    assert.equal(loaded.task.examples?.length, 1);
    const rollout = async (name: string, ...extra: string[]) => {
      const rows = path.join(dir, name, 'rows.jsonl');
      const r = await rehearse(
        ...['rollout', loaded.file, '--policy', await scriptedModel(), '--episodes', '2'],
        ...['--out', rows, '--runs', path.join(dir, name, 'runs'), ...extra],
      );
      assert.equal(r.code, 0, r.err);
      const trace = await readCheckedTrace(/\(trace (.+)\)$/m.exec(r.out)![1]);
      const rehearseRows = (await fs.readFile(rows, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as DatasetRow)
        .filter((row) => row.role === 'rehearse' && !row.id.includes('rejected'));
      assert.ok(rehearseRows.length > 0, 'the scripted model made no call: no rehearse prompt');
      return { trace, rehearseRows };
    };
    const shown = await rollout('with-examples', '--max-examples', '4');
    const settings = shown.trace.run.settings as { rehearsePrompt: { maxExamples?: number } };
    assert.equal(settings.rehearsePrompt.maxExamples, 4);
    // The prompt each rehearsal was sampled with is the prompt the studio builds with the example.
    const expected = buildRehearsePrompt(
      {
        tools: [],
        examples: loaded.task.examples,
        call: { name: 'probe', arguments: { case: OK_CASE.case } },
      },
      { ...settings.rehearsePrompt, includeHistory: false },
    );
    // The examples block of that prompt: its heading to the next blank line.
    const built = expected[1].content;
    const from = built.indexOf('Recorded calls with their real results');
    assert.ok(from >= 0, built);
    const section = built.slice(from, built.indexOf('\n\n', from));
    assert.ok(section.includes(loaded.task.examples![0].text!), section);
    for (const row of shown.rehearseRows)
      assert.ok(row.messages[1].content.includes(section), row.messages[1].content);
    // Without the flag, the scripted model's own prompt shows none of them.
    const hidden = await rollout('without-examples', '--max-examples', '0');
    for (const row of hidden.rehearseRows)
      assert.ok(!row.messages.some((m) => m.content.includes('Recorded calls')), row.id);
  });

  it('refuses an --examples-out that would overwrite an input task file, before anything plays', async () => {
    const tasks = await bankTasks(tmp());
    const [first] = await loadTasks([tasks]);
    const before = await fs.readFile(first.file, 'utf8');
    const same = await rehearse('verify', tasks, '--examples-out', tasks);
    assert.equal(same.code, 2);
    assert.match(
      same.err,
      /^rehearse: --examples-out .+ would overwrite the input task file .+\.task\.json\. Name another folder\.$/,
    );
    assert.equal(same.out, '', 'nothing was played');
    // Through a link to the input folder as well.
    const link = path.join(tmp(), 'link');
    await fs.symlink(tasks, link);
    const linked = await rehearse('verify', first.file, '--examples-out', link);
    assert.equal(linked.code, 2);
    assert.match(linked.err, /would overwrite the input task file/);
    assert.equal(await fs.readFile(first.file, 'utf8'), before);
    // Two inputs of the same name would be written to one file: refused too.
    const other = path.join(tmp(), 'other', path.basename(first.file));
    await fs.mkdir(path.dirname(other));
    await fs.writeFile(other, before.replace(`"id": "${first.task.id}"`, '"id": "bank-other"'));
    const both = await rehearse(
      'verify',
      first.file,
      other,
      '--examples-out',
      path.join(tmp(), 'out'),
    );
    assert.equal(both.code, 2);
    assert.match(both.err, /would both be written to .+\. Verify them into separate folders/);
  });

  it("refuses --max-examples for a policy whose rehearse prompt is EnvACE's (it shows every example)", async () => {
    const model = path.join(tmp(), 'envace-model');
    await fs.cp(path.join(REPO, 'models', 'default'), model, { recursive: true });
    await fs.writeFile(
      path.join(model, 'rehearsal_config.json'),
      JSON.stringify({ rehearsePrompt: { profile: 'envace' } }),
    );
    const tasks = await bankTasks(tmp());
    const r = await rehearse(
      ...['rollout', tasks, '--policy', model, '--max-examples', '4'],
      ...['--out', path.join(tmp(), 'rows.jsonl')],
    );
    assert.equal(r.code, 2, r.out);
    assert.match(
      r.err,
      /--max-examples does not apply to this policy: its rehearse prompt is EnvACE's/,
    );
  });
});
