import { StudioError, errorMessage } from '../base/errors';
import type { Environment } from '../env/types';
import { formatToolCalls } from '../protocol/actParser';
import type { Grade, GradeOptions } from './checks/grade';
import { gradeEpisode } from './checks/grade';
import type { EpisodeTranscript, TranscriptTurn } from './checks/transcript';
import type { TaskFile } from './format/taskFile';

/** What the reference policy says in answer to one user turn: one act per call, then the final answer. */
export interface ReferenceScriptTurn {
  user: string;
  /** Raw assistant texts in order: tool-call blocks (formatToolCalls), the last one the final answer. */
  acts: string[];
}

/**
 * The reference solution as the raw texts a policy would emit, one list per user turn. The runner
 * plays it as the "reference policy". A task without a reference is a StudioError NO_REFERENCE.
 */
export function referenceScript(task: TaskFile): ReferenceScriptTurn[] {
  const { reference } = task;
  if (!reference)
    throw new StudioError(
      'NO_REFERENCE',
      `Task ${task.id} has no reference solution; add "reference" to the task file.`,
    );
  return task.turns.map((t, i) => {
    const ref = reference.turns[i];
    return { user: t.user, acts: [...ref.calls.map((c) => formatToolCalls([c])), ref.answer] };
  });
}

/** What playing a reference solution gave. */
export interface ReferencePlay {
  transcript: EpisodeTranscript;
  grade: Grade;
}

/** Options of {@link playReference}. */
export interface PlayReferenceOptions extends GradeOptions {
  /** Per-call timeout (default: the task's, else the environment's). */
  callTimeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Executes a task's reference calls against a real environment (a fresh episode with the task's
 * seed), then grades the result with the task's checks. Call failures are kept in the transcript
 * (and fail the checks that need them); only a server that cannot start rejects.
 */
export async function playReference(
  task: TaskFile,
  env: Environment,
  options: PlayReferenceOptions = {},
): Promise<ReferencePlay> {
  if (!task.reference)
    throw new StudioError(
      'NO_REFERENCE',
      `Task ${task.id} has no reference solution; add "reference" to the task file.`,
    );
  await env.startEpisode(task.seed);
  const timeoutMs = options.callTimeoutMs ?? task.limits?.callTimeoutMs;
  const turns: TranscriptTurn[] = [];
  for (let i = 0; i < task.turns.length; i++) {
    const ref = task.reference.turns[i];
    const turn: TranscriptTurn = { user: task.turns[i].user, calls: [] };
    for (const call of ref.calls) {
      const outcome = await env.call(call.name, call.arguments, {
        timeoutMs,
        signal: options.signal,
      });
      turn.calls.push({
        name: call.name,
        arguments: call.arguments,
        outcome: {
          ...(outcome.response ? { response: outcome.response } : {}),
          ...(outcome.error ? { error: outcome.error } : {}),
        },
      });
    }
    turn.answer = ref.answer;
    turns.push(turn);
  }
  let snapshot: EpisodeTranscript['snapshot'];
  try {
    snapshot = { ok: true, value: await env.snapshot() };
  } catch (err) {
    snapshot = { ok: false, error: errorMessage(err) };
  }
  const transcript: EpisodeTranscript = { turns, snapshot };
  return { transcript, grade: await gradeEpisode(task, transcript, options) };
}
