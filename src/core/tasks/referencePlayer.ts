import { StudioError, errorMessage } from '../base/errors';
import { envError } from '../env/errors';
import type { CallOutcome, Environment } from '../env/types';
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
 * plays it as the "reference policy", the agent: the user's own calls (`by: "user"`) are the user's
 * to make. A task without a reference is a StudioError NO_REFERENCE.
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
    const agents = ref.calls.filter((c) => c.by !== 'user');
    return {
      user: t.user,
      acts: [
        ...agents.map((c) => formatToolCalls([{ name: c.name, arguments: c.arguments }])),
        ref.answer,
      ],
    };
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
 * seed), then grades the result with the task's checks. The user's own calls (`by: "user"`, τ²'s
 * telecom user on its phone) run as the user's tools, in the same state, at their place among the
 * agent's calls. Call failures are kept in the transcript (and fail the checks that need them); only
 * a server that cannot start rejects.
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
      const byUser = call.by === 'user';
      const callOptions = { timeoutMs, signal: options.signal };
      const outcome: Pick<CallOutcome, 'response' | 'error'> = byUser
        ? env.callUserTool
          ? await env.callUserTool(call.name, call.arguments, callOptions)
          : {
              error: envError(
                'UNKNOWN_TOOL',
                `The environment runs no tools of the user (${call.name}).`,
              ),
            }
        : await env.call(call.name, call.arguments, callOptions);
      const made = {
        name: call.name,
        arguments: call.arguments,
        outcome: {
          ...(outcome.response ? { response: outcome.response } : {}),
          ...(outcome.error ? { error: outcome.error } : {}),
        },
      };
      if (byUser) (turn.userCalls ??= []).push({ ...made, at: turn.calls.length });
      else turn.calls.push(made);
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
