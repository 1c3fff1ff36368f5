// Issue 29, breaks 1, 2 and 5: an exported EnvACE dataset carries the reward the studio computes.
// The sample tasks are played under `--reward envace` by the embedded default policy and by the
// reference policy against their real servers, exported with `--format envace --tasks`, and the
// exported records are scored by EnvACE's reward formula (test/fixtures/envace/checklist_reward.py,
// written from EnvACE's envs.py, interaction.py and reward_manager/checklist.py at 173e941) with a
// judge that answers each item as the studio graded it: the score equals the recorded reward.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { EnvaceRecord } from '../../src/core/training/envaceExport';
import type { EpisodeEndEvent } from '../../src/core/trace/format/schema';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import { loadTasks } from '../../src/core/tasks/format/loader';
import { ensureServerBundles } from '../support/servers';
import { rehearse } from '../support/cli';
import { useTempDir } from '../support/tempDir';
import { trainerPython } from '../support/trainerPython';

const SAMPLES = ['retail-0000', 'bank-0058', 'memory-remember-colleague'].map((id) =>
  path.join('examples', 'tasks', `${id}.task.json`),
);
const FORMULA = path.join('test', 'fixtures', 'envace', 'checklist_reward.py');

type Verdicts = Record<string, Record<string, { passed: boolean | null; kind: string }>>;

/** EnvACE's score of each exported record (by the studio's episode id), from the Python formula. */
function envaceScores(records: EnvaceRecord[], verdicts: Verdicts): Record<string, number> {
  const out = execFileSync(trainerPython(), [FORMULA], {
    input: JSON.stringify({ records, verdicts }),
    encoding: 'utf8',
  });
  return JSON.parse(out) as Record<string, number>;
}

describe('--format envace carries the reward of --reward envace (issue 29)', function () {
  this.timeout(300_000);
  const dir = useTempDir('envace-export-reward-');
  before(() => ensureServerBundles());

  async function playAndExport(policy: string[]): Promise<{
    records: EnvaceRecord[];
    ends: EpisodeEndEvent[];
    verdicts: Verdicts;
  }> {
    const runs = path.join(dir(), policy.join('-') || 'default', 'runs');
    const r = await rehearse(
      'run',
      ...SAMPLES,
      ...policy,
      '--reward',
      'envace',
      '--out',
      runs,
      '--no-progress',
    );
    assert.equal(r.code, 0, r.err);
    const out = path.join(dir(), policy.join('-') || 'default', 'envace.json');
    const e = await rehearse(
      'export',
      runs,
      '--format',
      'envace',
      '--tasks',
      'examples/tasks',
      '--out',
      out,
    );
    assert.equal(e.code, 0, e.err);
    assert.doesNotMatch(e.out, /without its task's checks|recorded call/);
    const [run] = await fs.readdir(runs);
    const { events } = await readTraceEvents(path.join(runs, run, 'trace.jsonl'));
    const ends = events.filter((x): x is EpisodeEndEvent => x.type === 'episode.end');
    const verdicts: Verdicts = Object.fromEntries(
      ends.map((end) => [
        end.episodeId,
        Object.fromEntries(
          (end.checks ?? []).map((c) => [c.id, { passed: c.passed, kind: c.kind }]),
        ),
      ]),
    );
    return {
      records: JSON.parse(await fs.readFile(out, 'utf8')) as EnvaceRecord[],
      ends,
      verdicts,
    };
  }

  for (const [name, policy] of [
    ['the default policy', []],
    ['the reference policy', ['--policy', 'reference']],
  ] as const) {
    it(`${name}: EnvACE's formula over each exported record gives the recorded reward, and no turn is empty`, async () => {
      const { records, ends, verdicts } = await playAndExport([...policy]);
      const exported = new Set(records.map((r) => r.extra_info.studio_episode));
      // Every episode is exported, whatever the policy did: one whose act did not parse ends on its
      // error_tool_call, as EnvACE records it (issue 39).
      assert.equal(records.length, ends.length, 'every episode exported');
      const scores = envaceScores(records, verdicts);
      for (const record of records) {
        const episode = record.extra_info.studio_episode;
        const end = ends.find((x) => x.episodeId === episode)!;
        const checklist = record.extra_info.interaction_kwargs.checklist_list[0];
        assert.ok(
          checklist.every((turn) => turn.length > 0),
          `${record.extra_info.studio_task}: a turn with no item`,
        );
        // One item per check of the task (plus a weight-0 item in a turn with none).
        const ids = checklist.flat().map((i) => i.id);
        for (const c of end.checks ?? []) assert.ok(ids.includes(c.id), `${c.id} is not exported`);
        // The record carries every user turn of the task, played or not.
        const users = record.extra_info.messages.filter((m) => m.role === 'user').length;
        assert.equal(users, checklist.length);
        assert.ok(
          Math.abs(scores[episode] - (end.reward ?? NaN)) < 1e-6,
          `${record.extra_info.studio_task} (${episode}): EnvACE ${scores[episode]}, studio ${end.reward}`,
        );
      }
      assert.ok(exported.size === records.length);
    });
  }

  it('import envace of the export gives back the checklist as the checks, once: same ids, weights and turns, no derived call checks', async () => {
    const { records } = await playAndExport(['--policy', 'reference']);
    const source = path.join(dir(), 'reimport.json');
    await fs.writeFile(source, JSON.stringify(records));
    const out = path.join(dir(), 'reimported');
    const r = await rehearse('import', 'envace', source, '--out', out);
    assert.equal(r.code, 0, r.err);
    const tasks = await loadTasks([path.join(out, 'tasks')]);
    assert.equal(tasks.length, records.length);
    for (const [k, { task }] of tasks.entries()) {
      const items = records[k].extra_info.interaction_kwargs.checklist_list[0].flatMap((turn, t) =>
        turn.map((i) => [i.id, i.weight, t]),
      );
      assert.deepEqual(
        task.checks.map((c) => [c.id, c.weight, 'turn' in c ? c.turn : undefined]),
        items,
      );
      assert.ok(task.checks.every((c) => c.kind === 'judge'));
    }
  });

  it("the formula's empty turn: EnvACE's interaction raises on it and the turn scores 0", () => {
    // The memory record as the export wrote it before (issue 29: `[[helpful], []]`).
    const item = (id: string) => ({
      id,
      question: 'q',
      focus_on: 'assistant.content.user_visible_reply',
      pass_condition: '',
      failure_examples: [],
      evidence: [],
      required_for_next_turn: false,
      weight: 1,
    });
    const record = (checklist: ReturnType<typeof item>[][]) =>
      ({
        extra_info: {
          studio_episode: 'e1',
          interaction_kwargs: { checklist_list: [checklist] },
          messages: [
            { role: 'user', content: 'one' },
            { role: 'assistant', content: 'ok' },
            { role: 'user', content: 'two' },
            { role: 'assistant', content: 'done' },
          ],
        },
      }) as unknown as EnvaceRecord;
    const verdicts = {
      e1: { a: { passed: true, kind: 'judge' }, b: { passed: true, kind: 'judge' } },
    };
    assert.equal(envaceScores([record([[item('a')], []])], verdicts)['e1'], 0.5);
    assert.equal(envaceScores([record([[item('a')], [item('b')]])], verdicts)['e1'], 1);
  });
});
