import type { Grade, GradeOptions } from '../tasks/checks/grade';
import { checkId, gradeItems } from '../tasks/checks/grade';
import {
  checkTurn,
  envaceEpisodeReward,
  envaceTurnEnd,
  envaceTurnScore,
  isErrorToolCall,
} from '../tasks/checks/envaceReward';
import type { EpisodeTranscript, TranscriptCall, TranscriptTurn } from '../tasks/checks/transcript';
import type { TaskFile } from '../tasks/format/taskFile';
import type { CheckVerdict, EpisodeStatus } from '../trace/format/schema';

/** Why an imagined episode's state items are not evaluated. */
export const NO_REAL_STATE = 'an imagined trajectory has no real state';

/**
 * Grades an episode as EnvACE's checklist environment does while it plays (`--reward envace`): each
 * user turn's items when the agent answers that turn, a turn's reward of 0 after a tool failure, and
 * the end of the episode after a turn whose `required_for_next_turn` item did not pass. The rules
 * and their sources are in `tasks/checks/envaceReward.ts`.
 */
export class EnvaceGrader {
  private readonly verdicts = new Map<number, CheckVerdict>();
  private readonly turnRewards: number[] = [];
  private toolFailed = false;
  private endedAfter: number | undefined;

  constructor(
    private readonly task: TaskFile,
    private readonly real: boolean,
    private readonly options: GradeOptions = {},
  ) {}

  /** A tool failed (envs.py's `_last_tool_failed`): no later turn scores. */
  noteToolFailure(): void {
    this.toolFailed = true;
  }

  /**
   * Grades the items of user turn `turn` (0-based) once the agent answered it; returns why EnvACE
   * ends the episode there, or undefined when it goes on. `snapshot` is taken only when a state item
   * of the turn needs it.
   */
  async afterAnswer(
    turn: number,
    turns: TranscriptTurn[],
    snapshot: () => Promise<EpisodeTranscript['snapshot']>,
  ): Promise<string | undefined> {
    const indexes = this.task.checks
      .map((c, i) => (checkTurn(c, this.task.turns.length) === turn ? i : -1))
      .filter((i) => i >= 0);
    const needsState = this.real && indexes.some((i) => this.task.checks[i].kind === 'state');
    const transcript: EpisodeTranscript = {
      turns,
      snapshot: needsState ? await snapshot() : { ok: false, error: NO_REAL_STATE },
    };
    const graded = await gradeItems(this.task, transcript, this.options, (i) =>
      indexes.includes(i),
    );
    const items = indexes.map((index, k) => ({
      index,
      spec: this.task.checks[index],
      verdict: this.withoutImaginedState(graded[k]),
    }));
    this.turnRewards.push(this.toolFailed ? 0 : envaceTurnScore(items.map((c) => c.verdict)));
    const end = envaceTurnEnd(items);
    for (const c of items) this.verdicts.set(c.index, c.verdict);
    if (end && turn < this.task.turns.length - 1) this.endedAfter = turn;
    return end;
  }

  /** The episode's grade: EnvACE's score, and every item's verdict (items of unanswered turns not evaluated). */
  grade(status: EpisodeStatus): Grade {
    const checks = this.task.checks.map(
      (c, i) =>
        this.verdicts.get(i) ??
        this.unanswered(c.kind, checkId(c, i), c.weight ?? 1, checkTurn(c, this.task.turns.length)),
    );
    const notEvaluated = checks.filter((c) => c.passed === null).length;
    if (!checks.length) return { reward: null, success: null, checks, notEvaluated };
    const success =
      status === 'completed' &&
      this.endedAfter === undefined &&
      checks.every((c) => c.passed === true);
    return {
      reward: envaceEpisodeReward(this.turnRewards, this.task),
      success,
      checks,
      notEvaluated,
    };
  }

  private withoutImaginedState(v: CheckVerdict): CheckVerdict {
    return !this.real && v.kind === 'state'
      ? { ...v, passed: null, detail: `not evaluated: ${NO_REAL_STATE}` }
      : v;
  }

  private unanswered(kind: string, id: string, weight: number, turn: number): CheckVerdict {
    const why =
      this.endedAfter !== undefined
        ? `EnvACE ended the episode after user turn ${this.endedAfter + 1}`
        : 'the episode ended before the agent answered it';
    return {
      id,
      kind,
      weight,
      passed: null,
      detail: `not evaluated: user turn ${turn + 1} was never graded (${why})`,
    };
  }
}

/**
 * A call's tool failure as envs.py sees one (`error_tool_call` in the tool message, or a tool that
 * gave no response: `success: False`), with its code; undefined when the call succeeded.
 */
export function envaceToolFailure(
  call: TranscriptCall,
  toolText: string,
): { code: string; message: string } | undefined {
  if (call.outcome?.error)
    return { code: call.outcome.error.code, message: call.outcome.error.message };
  if (!isErrorToolCall(toolText)) return undefined;
  const inner = (JSON.parse(toolText) as { error_tool_call: unknown }).error_tool_call;
  const code =
    typeof inner === 'object' &&
    inner !== null &&
    typeof (inner as { code?: unknown }).code === 'string'
      ? (inner as { code: string }).code
      : 'ERROR_TOOL_CALL';
  return { code, message: toolText.slice(0, 300) };
}
