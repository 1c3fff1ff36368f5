import * as assert from 'node:assert/strict';
import { canonicalJson } from '../../src/core/base/canonicalJson';
import type { JsonValue } from '../../src/core/base/json';
import type { TaskGenerator } from '../../src/core/tasks/generator';
import { generateTasks, splitOfSeed } from '../../src/core/tasks/generator';
import { findTaskFault } from '../../src/core/tasks/format/loader';
import { BANK_GENERATOR } from '../../src/servers/bank/generator';
import { RETAIL_GENERATOR } from '../../src/servers/retail/generator';
import { TASKS_PER_DOMAIN } from '../support/servers';

for (const generator of [RETAIL_GENERATOR, BANK_GENERATOR] as TaskGenerator[]) {
  describe(`tasks: the ${generator.domain} generator`, () => {
    const tasks = generateTasks(generator, { count: TASKS_PER_DOMAIN });

    it(`gives ${TASKS_PER_DOMAIN} valid tasks with unique ids and distinct instructions and solutions`, () => {
      for (const t of tasks)
        assert.equal(findTaskFault(t), undefined, `${t.id}: ${JSON.stringify(findTaskFault(t))}`);
      assert.equal(new Set(tasks.map((t) => t.id)).size, TASKS_PER_DOMAIN);
      assert.equal(
        new Set(tasks.map((t) => canonicalJson(t.turns as unknown as JsonValue))).size,
        TASKS_PER_DOMAIN,
        'user turns repeat',
      );
      assert.equal(
        new Set(tasks.map((t) => canonicalJson(t.reference as unknown as JsonValue))).size,
        TASKS_PER_DOMAIN,
        'reference solutions repeat',
      );
    });

    it('splits by seed: seed % 10 of 0-7 train, 8 validation, 9 test', () => {
      const counts: Record<string, number> = {};
      for (const t of tasks) {
        assert.equal(t.split, splitOfSeed(t.seed!));
        counts[t.split!] = (counts[t.split!] ?? 0) + 1;
      }
      assert.deepEqual(counts, { train: 400, validation: 50, test: 50 });
      const test = generateTasks(generator, { count: 20, split: 'test' });
      assert.ok(test.every((t) => t.split === 'test' && t.seed! % 10 === 9));
    });

    it('is deterministic: the same seed gives the same task', () => {
      assert.deepEqual(generator.generate(123), generator.generate(123));
      assert.notDeepEqual(generator.generate(123), generator.generate(124));
    });

    it('varies: many templates, policy refusals, multi-turn tasks, several check kinds', () => {
      const templates = new Set(tasks.map((t) => t.tags![0]));
      assert.ok(templates.size >= 10, [...templates].join(', '));
      const refusals = tasks.filter((t) => t.tags!.includes('policy-refusal')).length;
      assert.ok(
        refusals >= 0.15 * TASKS_PER_DOMAIN && refusals <= 0.5 * TASKS_PER_DOMAIN,
        `${refusals} refusals`,
      );
      const multi = tasks.filter((t) => t.turns.length > 1).length;
      assert.ok(multi >= 0.05 * TASKS_PER_DOMAIN, `${multi} multi-turn tasks`);
      const kinds = new Set(tasks.flatMap((t) => t.checks.map((c) => c.kind)));
      assert.deepEqual([...kinds].sort(), ['answer', 'call', 'no_call', 'state']);
      for (const t of tasks.filter((x) => x.tags!.includes('policy-refusal'))) {
        assert.ok(
          t.checks.some((c) => c.kind === 'no_call'),
          `${t.id}: a refusal task forbids the refused call`,
        );
        assert.ok(
          t.checks.some(
            (c) =>
              c.kind === 'state' &&
              c.path === '$.writes' &&
              Array.isArray(c.equals) &&
              c.equals.length === 0,
          ),
          `${t.id}: a refusal task asserts that nothing changed`,
        );
      }
    });
  });
}
