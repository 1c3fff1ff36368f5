import * as assert from 'node:assert/strict';
import { generateTasks } from '../../src/core/tasks/generator';
import { BANK_DOMAIN } from '../../src/servers/bank/domain';
import { RETAIL_DOMAIN } from '../../src/servers/retail/domain';
import { ensureServerBundles } from '../support/servers';
import type { AgreementEpisode } from '../support/trajectoryAgreement';
import {
  STUDY_DOMAINS,
  VARIANTS,
  formatReport,
  studyDomain,
  summarize,
} from '../support/trajectoryAgreement';

/** Train tasks per domain played here; `npm run measure:trajectory-agreement` plays 250 each. */
const TASKS_PER_DOMAIN = 30;

describe('tasks: trajectory items grade an episode on what it did, as its state checks grade it', function () {
  this.timeout(300_000);

  it("the write tools the items cover are exactly the domains' tools that change the state", () => {
    for (const [domain, study] of [
      [RETAIL_DOMAIN, STUDY_DOMAINS[0]],
      [BANK_DOMAIN, STUDY_DOMAINS[1]],
    ] as const) {
      const writers = domain.tools.filter((t) => t.target).map((t) => t.name);
      assert.deepEqual(study.writeTools.map((w) => w.tool).sort(), writers.sort());
    }
  });

  it('every generated task has a call item (ok) per reference write and a no_call item per write tool', () => {
    for (const { generator, writeTools } of STUDY_DOMAINS) {
      for (const task of generateTasks(generator, { count: 100 })) {
        const writes = task.reference!.turns.flatMap((t) =>
          t.calls.filter((c) => writeTools.some((w) => w.tool === c.name)),
        );
        const calls = task.checks.filter((c) => c.kind === 'call' && c.id?.startsWith('write-'));
        assert.equal(calls.length, writes.length, task.id);
        assert.ok(
          calls.every((c) => c.kind === 'call' && c.ok === true),
          task.id,
        );
        const guarded = task.checks.flatMap((c) => (c.kind === 'no_call' ? [c.tool] : []));
        assert.deepEqual(
          [...new Set(guarded)].sort(),
          writeTools.map((w) => w.tool).sort(),
          task.id,
        );
      }
    }
  });

  describe(`${TASKS_PER_DOMAIN} train tasks per domain, played for real: the reference and its perturbations`, () => {
    let episodes: AgreementEpisode[];

    before(async () => {
      const dir = ensureServerBundles();
      const runs = await Promise.all(
        STUDY_DOMAINS.map((d) => studyDomain(d, TASKS_PER_DOMAIN, dir)),
      );
      episodes = runs.flat();
    });

    it('the reference solution passes its state checks and gets the full imagined reward (1)', () => {
      const reference = episodes.filter((e) => e.variant === 'reference');
      assert.equal(reference.length, 2 * TASKS_PER_DOMAIN);
      const wrong = reference.filter(
        (e) => !e.stateSuccess || !e.trajectorySuccess || e.trajectoryReward !== 1,
      );
      assert.deepEqual(wrong, []);
    });

    it('a wrong id or value in a write, a missing write and an extra write fail both grades', () => {
      for (const v of ['wrong-id', 'wrong-value', 'missing-write', 'extra-write'] as const) {
        const s = summarize(episodes.filter((e) => e.variant === v));
        assert.ok(s.episodes >= TASKS_PER_DOMAIN / 2, `${v}: only ${s.episodes} episodes`);
        assert.equal(s.trajectorySuccesses, 0, `${v}\n${formatReport(episodes)}`);
        assert.equal(s.stateSuccesses, 0, `${v}\n${formatReport(episodes)}`);
      }
    });

    it('probes: a repeated write fails both when it changed the state twice; a refused attempt fails the items only', () => {
      const repeated = episodes.filter((e) => e.variant === 'repeated-write');
      assert.ok(repeated.length > 0);
      assert.ok(repeated.every((e) => e.stateSuccess === e.trajectorySuccess));
      // A forbidden write the server refused changed nothing, but the trajectory tried it.
      const refused = episodes.filter((e) => e.variant === 'refused-attempt');
      assert.ok(refused.length > 0);
      assert.ok(
        refused.every((e) => e.refused.length === 1 && e.stateSuccess && !e.trajectorySuccess),
      );
    });

    it('the two grades give the same success verdict on at least 95% of episodes', () => {
      const s = summarize(episodes.filter((e) => VARIANTS.includes(e.variant)));
      assert.ok(s.agree >= 0.95 * s.episodes, formatReport(episodes));
    });
  });
});
