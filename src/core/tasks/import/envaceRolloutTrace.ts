import * as path from 'node:path';
import type {
  CheckVerdict,
  EpisodeEndEvent,
  EpisodeStatus,
  NewTraceEvent,
  TurnParse,
} from '../../trace/format/schema';
import { rehearsalResult } from '../../trace/format/schema';
import { TRACE_FILE } from '../../trace/format/discover';
import {
  callId as makeCallId,
  episodeId as makeEpisodeId,
  newRunId,
  turnId as makeTurnId,
} from '../../trace/format/ids';
import { TraceWriter } from '../../trace/format/writer';
import type { RolloutEpisode, RolloutTurn } from './envaceRolloutEpisodes';
import { rebuildEpisodes, ROLLOUT_PARSE } from './envaceRolloutEpisodes';
import type { RolloutFile } from './envaceRolloutFiles';
import { writeRootOf } from '../../base/writePath';

/** What the import of one rollout file wrote. */
export interface RolloutTraceSummary {
  /** Absent when the file held no episode: no trace is written then. */
  runId?: string;
  traceFile?: string;
  rows: number;
  episodes: number;
  calls: number;
  rehearsals: number;
  actuals: number;
  /** Rows repeated verbatim (verl's padding copies), read once. */
  repeatedRows: number;
  /** Simulator rows that answered no call of a rebuilt episode. */
  unlinkedRehearsals: number;
}

/**
 * Writes the episodes of one rollout file (one EnvACE training step) as one imagine-mode run in
 * `<runsDir>/<runId>/trace.jsonl`: each caller turn with its act parse, the Tool Simulator Agent's
 * outputs as rehearsals, answers of EnvACE's tool layer as actual responses, EnvACE's score on
 * each episode's end.
 */
export async function writeRolloutTrace(
  rollout: RolloutFile,
  step: number | null,
  runsDir: string,
): Promise<RolloutTraceSummary> {
  const rebuilt = rebuildEpisodes(rollout.rows);
  const label =
    step !== null
      ? `step${step}`
      : path
          .basename(rollout.file, '.jsonl')
          .replace(/[^A-Za-z0-9_-]/g, '-')
          .slice(0, 40);
  const runId = newRunId(`envace-${label}`);
  const traceFile = path.join(runsDir, runId, TRACE_FILE);
  const counts = {
    rows: rollout.rows.length,
    episodes: rebuilt.episodes.length,
    calls: 0,
    rehearsals: 0,
    actuals: 0,
    repeatedRows: rebuilt.repeatedRows,
    unlinkedRehearsals: rebuilt.unlinkedRehearsals,
  };
  if (rebuilt.episodes.length === 0) return counts;
  const summary: RolloutTraceSummary = { runId, traceFile, ...counts };
  // Not synced event by event: an import interrupted by a crash is run again from its rollout files.
  const writer = await TraceWriter.open(traceFile, {
    durable: false,
    root: writeRootOf(runsDir),
  });
  try {
    const tasks = [...new Set(rebuilt.episodes.map((e) => taskId(label, e)))];
    await writer.append({
      type: 'run',
      runId,
      mode: 'imagine',
      policy: { kind: 'recorded', id: 'envace' },
      tasks,
      settings: {
        source: 'envace-rollouts',
        file: path.basename(rollout.file),
        // Parsed as EnvACE did: replays parse alike, exports write non-finite numbers back as literals.
        parse: ROLLOUT_PARSE.dialect!,
        ...(step !== null ? { step } : {}),
      },
    });
    for (const [index, episode] of rebuilt.episodes.entries()) {
      for (const event of episodeEvents(episode, index, label)) {
        if (event.type === 'call.rehearsal') summary.rehearsals++;
        if (event.type === 'call.actual') summary.actuals++;
        await writer.append(event);
      }
      summary.calls += episode.turns.reduce((n, t) => n + t.calls.length, 0);
    }
    await writer.append({ type: 'run.end', runId, status: 'completed' });
  } finally {
    await writer.close();
  }
  return summary;
}

function taskId(label: string, episode: RolloutEpisode): string {
  return `envace-${label}-prompt${episode.taskIndex + 1}`;
}

/** The events of one episode, in trace order. */
function episodeEvents(episode: RolloutEpisode, index: number, label: string): NewTraceEvent[] {
  const episodeId = makeEpisodeId(index);
  const events: NewTraceEvent[] = [
    {
      type: 'episode',
      episodeId,
      index,
      taskId: taskId(label, episode),
      mode: 'imagine',
      ...(episode.instruction !== undefined ? { instruction: episode.instruction } : {}),
      ...(episode.system !== undefined ? { system: episode.system } : {}),
      ...(episode.tools.length ? { tools: episode.tools } : {}),
    },
  ];
  for (const [i, turn] of episode.turns.entries()) events.push(...turnEvents(episodeId, i, turn));
  events.push(episodeEnd(episodeId, episode));
  return events;
}

function turnEvents(episodeId: string, index: number, turn: RolloutTurn): NewTraceEvent[] {
  const turnId = makeTurnId(episodeId, index);
  const parse: TurnParse =
    turn.parse.kind === 'calls'
      ? {
          kind: 'calls',
          calls: turn.calls.map((c, i) => ({
            callId: makeCallId(turnId, i),
            name: c.name,
            arguments: c.arguments,
          })),
        }
      : turn.parse.kind === 'final'
        ? { kind: 'final', answer: turn.parse.text }
        : { kind: 'error', code: turn.parse.error.code, message: turn.parse.error.message };
  const events: NewTraceEvent[] = [
    {
      type: 'turn',
      episodeId,
      turnId,
      index,
      ...(turn.user !== undefined ? { user: turn.user } : {}),
      text: turn.row.output,
      parse,
    },
  ];
  for (const [i, call] of turn.calls.entries()) {
    const callId = makeCallId(turnId, i);
    if (call.rehearsal) {
      const p = call.rehearsal.parse;
      events.push({
        type: 'call.rehearsal',
        episodeId,
        turnId,
        callId,
        tool: call.name,
        arguments: call.arguments,
        text: call.rehearsal.text,
        result: rehearsalResult(p),
      });
    }
    if (call.actual !== undefined) {
      events.push({
        type: 'call.actual',
        episodeId,
        turnId,
        callId,
        tool: call.name,
        source: 'replay',
        server: 'envace',
        response: { text: [call.actual] },
      });
    }
  }
  return events;
}

/**
 * How the episode ended, and EnvACE's score as its reward: any finite score, above 1 too (EnvACE's
 * reward is Σ passed weights per turn / turns, its weights not normalised); the check's detail
 * says how it was computed.
 */
function episodeEnd(episodeId: string, episode: RolloutEpisode): Omit<EpisodeEndEvent, 'v' | 'ts'> {
  const last = episode.turns[episode.turns.length - 1];
  const { score, step, numChecklists, maxNumTurns } = last.row;
  const rehearsalFailed = last.calls.some((c) => c.rehearsal && !c.rehearsal.parse.ok);
  const status: EpisodeStatus =
    last.parse.kind === 'final'
      ? 'completed'
      : last.parse.kind === 'error' || rehearsalFailed
        ? 'failed'
        : 'limit';
  const detail = `EnvACE score ${score ?? 'absent or not finite'}${numChecklists !== null && maxNumTurns !== null ? ` = episode reward / (${numChecklists} checklists × ${maxNumTurns} turns)` : ''}${step !== null ? `, training step ${step}` : ''}`;
  const check: CheckVerdict = {
    id: 'envace-score',
    kind: 'envace',
    weight: 1,
    passed: null,
    detail,
  };
  const error =
    last.parse.kind === 'error'
      ? {
          code: last.parse.error.code,
          message: `EnvACE ended the episode: ${last.parse.error.message}`,
        }
      : rehearsalFailed
        ? {
            code: 'REHEARSAL_PARSE_ERROR',
            message: 'EnvACE ended the episode: a simulated tool response could not be parsed.',
          }
        : status === 'limit'
          ? {
              code: 'ENDED_AFTER_CALLS',
              message:
                "EnvACE ended the episode after this turn's calls; its dump does not say why (a tool error, the step limit or the prompt length limit).",
            }
          : undefined;
  return {
    type: 'episode.end',
    episodeId,
    status,
    reward: score,
    success: null,
    checks: [check],
    ...(last.parse.kind === 'final' ? { answer: last.parse.text } : {}),
    ...(error ? { error } : {}),
  };
}
