import * as assert from 'node:assert/strict';
import type { JsonValue } from '../../src/core/base/json';
import type { RecordedExample } from '../../src/core/protocol/types';
import type { EpisodeTranscript } from '../../src/core/tasks/checks/transcript';
import { findTaskFault } from '../../src/core/tasks/format/loader';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';
import { groundTask, referenceExamples } from '../../src/core/training/groundedTasks';

const task: TaskFile = {
  version: 1,
  id: 'grounded',
  turns: [{ user: 'What is my balance?' }],
  servers: { bank: { builtin: 'bank' } },
  checks: [{ kind: 'answer', contains: ['balance'] }],
};

const example = (n: number, result: JsonValue = { n }): RecordedExample => ({
  tool: 'get_account',
  arguments: { account_id: `A${n}` },
  result,
});

describe('grounded tasks: the reference as examples', () => {
  it('gives each answered call of a played reference as an example, the response as a policy reads it', () => {
    const transcript: EpisodeTranscript = {
      turns: [
        {
          user: 'u',
          calls: [
            {
              name: 'find',
              arguments: { phone: '1' },
              outcome: { response: { text: ['{"id": "C1"}'] } },
            },
            { name: 'note', arguments: {}, outcome: { response: { text: ['done, thanks'] } } },
            {
              name: 'state',
              arguments: { a: 1 },
              outcome: { response: { structured: { b: [1, 2] } } },
            },
            {
              name: 'slow',
              arguments: {},
              outcome: { error: { code: 'TOOL_TIMEOUT', message: 'no answer' } },
            },
            {
              name: 'refused',
              arguments: { x: 0 },
              outcome: { response: { text: ['{"error": "no such account"}'], isError: true } },
            },
          ],
          answer: 'ok',
        },
      ],
      snapshot: { ok: true, value: {} },
    };
    assert.deepEqual(referenceExamples(transcript), [
      { tool: 'find', arguments: { phone: '1' }, result: { id: 'C1' }, text: '{"id": "C1"}' },
      { tool: 'note', arguments: {}, result: 'done, thanks' },
      { tool: 'state', arguments: { a: 1 }, result: { b: [1, 2] }, text: '{"b":[1,2]}' },
      {
        tool: 'refused',
        arguments: { x: 0 },
        result: { error: 'no such account' },
        text: '{"error": "no such account"}',
      },
    ]);
  });

  it("keeps the task's own examples first, then adds the reference's it does not have", () => {
    const own = { ...task, examples: [example(1), example(2)] };
    const grounded = groundTask(own, [example(2), example(3), example(3), example(1, { n: 9 })]);
    assert.deepEqual(grounded.task.examples, [
      example(1),
      example(2),
      example(3),
      example(1, { n: 9 }),
    ]);
    assert.deepEqual([grounded.added, grounded.present, grounded.leftOut], [2, 2, undefined]);
    // Grounding what is grounded already changes nothing.
    const again = groundTask(grounded.task, [example(3)]);
    assert.equal(again.task, grounded.task);
    assert.deepEqual([again.added, again.present], [0, 1]);
  });

  it('leaves a task without examples as it was when the reference gives none', () => {
    const grounded = groundTask(task, []);
    assert.equal(grounded.task, task);
    assert.ok(!('examples' in grounded.task));
  });

  it('leaves out an example the task would not load with, keeps the others, and says which bound', () => {
    let deep: JsonValue = 1;
    for (let i = 0; i < 300; i++) deep = [deep];
    const grounded = groundTask(task, [example(1), example(2, deep), example(3)]);
    assert.deepEqual(grounded.task.examples, [example(1), example(3)]);
    assert.equal(grounded.added, 2);
    assert.equal(grounded.leftOut?.count, 1);
    assert.match(grounded.leftOut?.fault.message ?? '', /nests deeper than 256 levels/);
    assert.equal(findTaskFault(grounded.task), undefined);
  });
});
