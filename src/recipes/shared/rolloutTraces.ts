import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import * as path from 'node:path';
import { isRehearsalParseCode } from '../../core/protocol/codes';
import { scoreVerdicts, withoutStateItems } from '../../core/tasks/checks/grade';
import { readTrace } from '../../core/trace/format/reader';
import type { CheckVerdict, EpisodeStatus } from '../../core/trace/format/schema';

// What the rollouts of a GRPO arm or of the fidelity comparison did, read from their traces.

/** One rollout episode, as its trace's `episode` and `episode.end` events tell it. */
export interface RolloutEpisode {
  task: string;
  status: EpisodeStatus;
  /** The code of the error the episode ended on, if it ended on one. */
  code?: string;
  /** The verdicts the runner graded it with (state items not evaluated in an imagined episode). */
  checks?: CheckVerdict[];
  /** Its success as the runner graded it (a real episode: on the real state too). */
  success: boolean | null;
}

/** Every episode that ended in the runs under `runsDir`, and the real tool calls they made. */
export async function rolloutEpisodes(
  runsDir: string,
): Promise<{ episodes: RolloutEpisode[]; realToolCalls: number }> {
  const episodes: RolloutEpisode[] = [];
  let realToolCalls = 0;
  if (!existsSync(runsDir)) return { episodes, realToolCalls };
  for (const run of (await readdir(runsDir)).sort()) {
    const trace = path.join(runsDir, run, 'trace.jsonl');
    if (!existsSync(trace)) continue;
    const taskOf = new Map<string, string>();
    await readTrace(trace, {
      onEvent: (e) => {
        if (e.type === 'episode') taskOf.set(e.episodeId, e.taskId);
        else if (e.type === 'call.actual') realToolCalls++;
        else if (e.type === 'episode.end')
          episodes.push({
            task: taskOf.get(e.episodeId) ?? e.episodeId,
            status: e.status,
            ...(e.error ? { code: e.error.code } : {}),
            ...(e.checks ? { checks: e.checks } : {}),
            success: e.success,
          });
      },
    });
  }
  return { episodes, realToolCalls };
}

/**
 * Whether an episode ended on a rehearsal that did not parse: an imagined call's rehearsal ends its
 * episode as failed with the rehearsal parser's code (`runner/episode.ts`, `imaginedCallResult`);
 * a real episode continues on the actual response, so it never ends so.
 */
export function endedOnUnparsableRehearsal(e: RolloutEpisode): boolean {
  return e.status === 'failed' && isRehearsalParseCode(e.code);
}

/**
 * An episode's grade by its trajectory items alone (its state items not evaluated), as an imagined
 * episode is graded, so that imagined and real episodes are compared under one grader; an episode
 * that ended on an error scores 0 as the runner scores it. Null when cancelled or ungraded.
 */
export function trajectoryGrade(e: RolloutEpisode): { reward: number; success: boolean } | null {
  if (e.status === 'cancelled') return null;
  if (e.status === 'failed' || e.status === 'limit') return { reward: 0, success: false };
  if (!e.checks) return null;
  const grade = withoutStateItems(scoreVerdicts(e.checks), 'graded by trajectory items only');
  return grade.reward === null || grade.success === null
    ? null
    : { reward: grade.reward, success: grade.success };
}

/** What a GRPO arm's rollouts cost and how often a rehearsal ended one (trace events). */
export async function rolloutCompute(runsDir: string) {
  const { episodes, realToolCalls } = await rolloutEpisodes(runsDir);
  return {
    episodes: episodes.length,
    realToolCalls,
    unparsableRehearsalEnds: episodes.filter(endedOnUnparsableRehearsal).length,
  };
}
