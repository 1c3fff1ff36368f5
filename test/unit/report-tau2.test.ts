import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { Tau2Report } from '../../src/core/report/tau2Metrics';
import { passHatK, tau2Domain } from '../../src/core/report/tau2Metrics';
import type { CheckVerdict, EpisodeStatus, RunEvent } from '../../src/core/trace/format/schema';
import { TraceBuilder } from '../builders/traceBuilder';
import { cliWrites } from '../support/cli';
import { useTempDir } from '../support/tempDir';

/** A `tau2` item with τ²'s reward (null: not evaluated); an `answer` item for another task. */
function item(task: string, reward: number | null): CheckVerdict {
  return {
    id: 'tau2',
    kind: task.startsWith('tau2_') ? 'tau2' : 'answer',
    weight: 1,
    passed: reward === null ? null : reward === 1,
    ...(reward === null ? {} : { score: reward }),
  };
}

/** One run: each [task, τ²'s reward, status] an episode of it. */
function run(
  runId: string,
  episodes: [string, number | null, EpisodeStatus?][],
  user?: RunEvent['user'],
): TraceBuilder {
  const t = new TraceBuilder(runId, 'shadow', 'http://127.0.0.1:8000/v1 agent');
  if (user) (t.events[0] as RunEvent).user = user;
  for (const [task, reward, status] of episodes)
    t.episode(task).end({ status: status ?? 'completed', checks: [item(task, reward)] });
  return t.end();
}

async function report(...files: string[]): Promise<{ json: Tau2Report; text: string }> {
  const read = async (json: boolean) => {
    const r = await cliWrites([
      'report',
      '--format',
      'tau2',
      ...(json ? ['--json'] : []),
      ...files,
    ]);
    assert.equal(r.code, 0);
    return r.out.join('\n');
  };
  return { json: JSON.parse(await read(true)) as Tau2Report, text: await read(false) };
}

describe('rehearse report --format tau2 (pass^k as τ² computes it)', () => {
  const tmp = useTempDir();

  it('pass^k of a task is C(successes, k) / C(trials, k)', () => {
    assert.equal(passHatK(4, 2, 1), 0.5);
    assert.equal(passHatK(4, 2, 2), 1 / 6);
    assert.equal(passHatK(4, 4, 4), 1);
    assert.equal(passHatK(3, 1, 2), 0);
    assert.throws(() => passHatK(2, 2, 3), /1 ≤ k ≤ trials \(2\)/);
  });

  it('names the domain from the importer’s ids', () => {
    assert.equal(tau2Domain('tau2_retail_5'), 'retail');
    assert.equal(tau2Domain('tau2_mock_create_task_1'), 'mock');
    assert.equal(tau2Domain('retail-0012'), 'unknown');
  });

  it('per domain: the mean reward over trials, pass^k up to the fewest trials, the user model', async () => {
    const user = { endpoint: 'http://127.0.0.1:9000/v1', model: 'qwen3-8b-user' };
    const a = path.join(tmp(), 'a.jsonl');
    await run(
      'a',
      [
        // retail 1: 3 trials, 2 successes; retail 2: 2 trials, 1 success, one a limit whose item said 1
        ['tau2_retail_1', 1],
        ['tau2_retail_1', 1],
        ['tau2_retail_1', 0],
        ['tau2_retail_2', 1],
        ['tau2_retail_2', 1, 'limit'],
        // airline 7: one trial, half its reward; one not evaluated (left out, counted)
        ['tau2_airline_7', 0.5],
        ['tau2_airline_7', null],
        ['retail-0012', null],
      ],
      user,
    ).write(a);
    const b = path.join(tmp(), 'b.jsonl');
    await run('b', [['tau2_mock_create_task_1', 1]]).write(b);
    const { json, text } = await report(a, b);
    const retail = json.domains.find((d) => d.domain === 'retail')!;
    assert.deepEqual(
      [retail.tasks, retail.trials, retail.maxK, retail.averageReward],
      [2, 5, 2, 3 / 5],
    );
    assert.deepEqual(retail.passHatK, [
      { k: 1, value: (2 / 3 + 1 / 2) / 2 },
      { k: 2, value: (1 / 3 + 0) / 2 },
    ]);
    const airline = json.domains.find((d) => d.domain === 'airline')!;
    assert.deepEqual(
      [airline.trials, airline.averageReward, airline.passHatK, airline.notEvaluated],
      [1, 0.5, [{ k: 1, value: 0 }], 1],
    );
    assert.deepEqual(
      json.domains.map((d) => d.domain),
      ['airline', 'mock', 'retail'],
    );
    assert.deepEqual(json.users, { played: [{ ...user, episodes: 6 }], unplayed: 1 });
    assert.equal(json.otherEpisodes, 1);
    assert.match(text, /^retail +2 +5 +0\.600 +0\.583 +0\.167$/m);
    assert.match(
      text,
      /user simulator: qwen3-8b-user at http:\/\/127\.0\.0\.1:9000\/v1 \(6 episode/,
    );
    assert.match(text, /1 episode\(s\) ran without --user-endpoint/);
  });

  it('says when no episode is of a τ² task', async () => {
    const file = path.join(tmp(), 'c.jsonl');
    await run('c', [['retail-0012', 1]]).write(file);
    const { text } = await report(file);
    assert.match(text, /no episode of a τ² task in these traces/);
  });
});
