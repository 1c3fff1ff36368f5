// One bound, two answers (issue 39): the loaders refuse a number outside its documented range, and
// the schemas the editor validates the same files with (package.json, jsonValidation) state the
// same bounds. The bounds are enumerated from the loaders' own lists, which are the rows of
// OUTSIDE_NUMBERS with their error code, so a bound added there is checked here without an edit.
import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { schemaCheck } from '../../src/core/base/jsonSchema';
import { EVERY_ITEM, numberNameSteps } from '../../src/core/base/numberPlaces';
import type { OutsideNumberSpec } from '../../src/core/base/numbers';
import { OUTSIDE_NUMBERS } from '../../src/core/base/outsideNumbers';
import { findTaskFault, TASK_FILE_NUMBERS } from '../../src/core/tasks/format/loader';
import { RUN_FILE_NUMBERS, runSpecFaults } from '../../src/core/training/launch/runSpec';
import { fromRoot } from '../support/paths';
import { schemaBoundFaults, withSchemaBounds } from '../support/schemaBounds';

type Json = Record<string, unknown>;

function readJson(...parts: string[]): Json {
  return JSON.parse(readFileSync(fromRoot(...parts), 'utf8')) as Json;
}

/** Every concrete path of a number's name in `doc` (`[i]`: each item there is), fields created. */
function concretePaths(doc: Json, name: string): (string | number)[][] {
  let paths: (string | number)[][] = [[]];
  for (const step of numberNameSteps(name) ?? []) {
    if (step !== EVERY_ITEM) {
      paths = paths.map((p) => [...p, step]);
      continue;
    }
    paths = paths.flatMap((p) => {
      const items = p.reduce<unknown>((v, k) => (v as Json | undefined)?.[k as string], doc);
      return Array.isArray(items) ? items.map((_, i) => [...p, i]) : [];
    });
  }
  return paths;
}

/** A copy of `doc` with `value` at `at` (objects made on the way). */
function withValue(doc: Json, at: (string | number)[], value: number): Json {
  const copy = structuredClone(doc);
  let node = copy as Record<string | number, unknown>;
  for (const key of at.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string | number, unknown>;
  }
  node[at[at.length - 1]] = value;
  return copy;
}

/** The greatest value in range and the least above it (a share below 1 takes 0.5 and refuses 1). */
function edges(spec: OutsideNumberSpec): { inside: number; outside: number } {
  if (spec.maxExcluded) return { inside: (spec.min + spec.max) / 2, outside: spec.max };
  return { inside: spec.max, outside: spec.integer ? spec.max + 1 : spec.max * 2 };
}

interface FileKind {
  what: string;
  schemaFile: string;
  numbers: readonly OutsideNumberSpec[];
  /** Valid files to place each number in (the first that has a place for it is taken). */
  examples: string[][];
  /** The loader's faults of a parsed file, empty when it takes it. */
  loaderFaults: (value: unknown) => string[];
}

const KINDS: FileKind[] = [
  {
    what: 'task',
    schemaFile: 'task.schema.json',
    numbers: TASK_FILE_NUMBERS,
    examples: [
      ['examples', 'tasks', 'bank-0001.task.json'],
      ['test', 'fixtures', 'tasks', 'user-loop.task.json'],
      ['test', 'fixtures', 'tasks', 'user-tools.task.json'],
    ],
    loaderFaults: (v) => {
      const fault = findTaskFault(v);
      return fault ? [`${fault.path} ${fault.message}`] : [];
    },
  },
  {
    what: 'training run',
    schemaFile: 'training-run.schema.json',
    numbers: RUN_FILE_NUMBERS,
    examples: [
      ['examples', 'training', 'envace.run.json'],
      ['examples', 'training', 'sft.run.json'],
      ['examples', 'training', 'qwen3-lora.run.json'],
    ],
    loaderFaults: runSpecFaults,
  },
];

describe('schema bounds: the loaders and the editor schemas state one range per number', () => {
  for (const kind of KINDS) {
    describe(`${kind.what} files (schemas/${kind.schemaFile})`, () => {
      const schema = () => readJson('schemas', kind.schemaFile);

      it(`states every bound the ${kind.what} loader enforces, with the same value`, () => {
        assert.ok(kind.numbers.length > 0, 'the loader enforces no bound: the list is wrong');
        if (process.env.UPDATE_GOLDENS === '1' && kind.schemaFile === 'task.schema.json')
          writeFileSync(
            fromRoot('schemas', kind.schemaFile),
            `${JSON.stringify(withSchemaBounds(schema(), kind.numbers), null, 2)}\n`,
          );
        assert.deepEqual(
          schemaBoundFaults(schema(), kind.numbers),
          [],
          `schemas/${kind.schemaFile} disagrees with src/core/base/outsideNumbers.ts (state the loader's bounds there)`,
        );
      });

      it(`takes each bound's greatest value and refuses the next, in the loader and the schema alike`, () => {
        const examples = kind.examples.map((parts) => readJson(...parts));
        const check = schemaCheck(schema(), { discriminator: true });
        for (const example of examples)
          assert.deepEqual(kind.loaderFaults(example), [], 'an example itself is refused');
        for (const spec of kind.numbers) {
          const { inside, outside } = edges(spec);
          // The first place the schema lets the field be (a check's min: only a call check's).
          const placed = examples
            .flatMap((doc) => concretePaths(doc, spec.name).map((at) => ({ doc, at })))
            .find(({ doc, at }) => check(withValue(doc, at, inside)).ok);
          assert.ok(placed, `${spec.name}: no place in the examples takes ${inside}`);
          const { doc: example, at } = placed;
          // Only its range is asked here (a check's min of 10,000 is above its max: another rule).
          const ranges = kind
            .loaderFaults(withValue(example, at, inside))
            .filter((f) => / must be /.test(f));
          assert.deepEqual(ranges, [], spec.name);
          const refused = withValue(example, at, outside);
          assert.equal(check(refused).ok, false, `${spec.name}: the schema takes ${outside}`);
          const faults = kind.loaderFaults(refused);
          assert.equal(faults.length, 1, `${spec.name}: ${faults.join('; ')}`);
          assert.match(faults[0], /must be (a whole number|a number) (from|above) /, spec.name);
        }
      });
    });
  }

  it('a bound the schema does not state, or states otherwise, is named (the check can fail)', () => {
    const schema = readJson('schemas', 'task.schema.json');
    const spec = OUTSIDE_NUMBERS.taskEpisodeTimeoutMs;
    assert.deepEqual(schemaBoundFaults(schema, [spec]), []);
    assert.deepEqual(schemaBoundFaults(schema, [{ ...spec, max: 60_000 }]), [
      '$.limits.episodeTimeoutMs: the loader takes {"minimum":1,"maximum":60000}, the schema says {"minimum":1,"maximum":86400000}',
    ]);
    assert.deepEqual(schemaBoundFaults(schema, [{ ...spec, name: '$.limits.stepTimeoutMs' }]), [
      '$.limits.stepTimeoutMs: the schema has no place for it',
    ]);
    // The check holds in every kind of check that has the field.
    assert.deepEqual(
      schemaBoundFaults(schema, [{ ...OUTSIDE_NUMBERS.taskCheckWeight, max: 5 }]).length,
      (schema['definitions'] as { check: { oneOf: unknown[] } }).check.oneOf.length,
    );
  });
});
