// Grounded imagination, as EnvACE grounds its simulator: a task's reference calls with their real
// results become the task's few-shot examples, so the policy's rehearse role imagines the world the
// task was drawn in rather than a random one (`rehearse verify --examples-out`).
import { canonicalJson } from '../base/canonicalJson';
import type { RecordedCall } from '../env/replayRecording';
import type { RecordedExample } from '../protocol/types';
import { actualToolText } from '../runner/toolMessages';
import type { EpisodeTranscript } from '../tasks/checks/transcript';
import type { TaskFault } from '../tasks/format/loader';
import { findTaskFault } from '../tasks/format/loader';
import type { TaskFile } from '../tasks/format/taskFile';
import { examplePairs } from '../tasks/import/conversation';

/**
 * A played reference's calls with their real responses, as few-shot examples in the order they were
 * made: each response as the text a policy reads in shadow mode ({@link actualToolText}), read back
 * as an import reads a tool message ({@link examplePairs}: its JSON with the text, else the text).
 * A call the environment never answered (a timeout, a server that crashed) gives no example.
 */
export function referenceExamples(transcript: EpisodeTranscript): RecordedExample[] {
  const calls: RecordedCall[] = [];
  for (const turn of transcript.turns)
    for (const call of turn.calls) {
      const response = call.outcome?.response;
      if (response)
        calls.push({
          tool: call.name,
          arguments: call.arguments,
          response: { text: [actualToolText(response)] },
        });
    }
  return examplePairs(calls);
}

/** What {@link groundTask} made of a task. */
export interface GroundedTask {
  /** The task with the examples that fit (the task itself when none was added). */
  task: TaskFile;
  /** Examples added after the task's own. */
  added: number;
  /** Examples the task had already (the same call with the same result): not added again. */
  present: number;
  /** Examples left out because the task would no longer load with them, and the first reason. */
  leftOut?: { count: number; fault: TaskFault };
}

/** One example's identity: the call (tool and arguments) and its result. */
function exampleKey(e: RecordedExample): string {
  return canonicalJson([e.tool, e.arguments, e.result]);
}

/**
 * The task with `examples` after its own (those come first, as written): each one it does not have
 * already, as long as the task still loads (the loader's own bounds, `findTaskFault`: the task
 * file's numbers, its schema, the nesting of tool values); one that would break it is left out and
 * counted, and the next is still tried, so as many as fit are kept.
 */
export function groundTask(task: TaskFile, examples: readonly RecordedExample[]): GroundedTask {
  const kept = [...(task.examples ?? [])];
  const seen = new Set(kept.map(exampleKey));
  const out: GroundedTask = { task, added: 0, present: 0 };
  for (const example of examples) {
    const key = exampleKey(example);
    if (seen.has(key)) {
      out.present++;
      continue;
    }
    const fault = findTaskFault({ ...task, examples: [...kept, example] });
    if (fault) {
      out.leftOut = { count: (out.leftOut?.count ?? 0) + 1, fault: out.leftOut?.fault ?? fault };
      continue;
    }
    kept.push(example);
    seen.add(key);
    out.added++;
  }
  if (out.added) out.task = { ...task, examples: kept };
  return out;
}
