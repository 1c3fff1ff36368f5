import { mixSeed } from '../base/random';
import { canonicalJson } from '../base/canonicalJson';
import { clipBytes } from '../base/clip';
import { counted } from '../base/counted';
import type { Environment } from '../env/types';
import type { GradeOptions } from '../tasks/checks/grade';
import type { OpenUser } from '../tasks/taskUser';
import type { EpisodeTranscript } from '../tasks/checks/transcript';
import type { TaskFile } from '../tasks/format/taskFile';
import type { Policy } from '../policy/types';
import { episodeId as makeEpisodeId } from '../trace/format/ids';
import type { EmitEvent, EpisodeOutcome, EpisodeProgress } from './episode';
import { playEpisode } from './episode';
import { outcomesMemory } from './outcomesMemory';
import type { RunSettings } from './settings';

/** The instruction that asks the policy to condense its imagined attempts. */
export const MEMORY_SYSTEM_PROMPT = [
  'You rehearsed a task in imagination before doing it for real. Below are your imagined attempts: the calls you made, the responses you imagined, and your answers.',
  'Write a short rehearsal memory for the real attempt: the plan that worked, the tools and arguments to use, what to check first, and the mistakes to avoid. Plain text, at most ten lines.',
].join('\n');

/** The line before the memory in the committed episode's context (its start event's `context`). */
export const MEMORY_CONTEXT_HEADING =
  'Rehearsal memory (from your private rehearsal of this task):';

/**
 * The system message a committed episode reads: its rehearsal memory after a line that says what it
 * is. Training rows read a memory the same way (`rehearse export --memory-file`).
 */
export function memoryContext(memory: string): string {
  return `${MEMORY_CONTEXT_HEADING}\n${memory}`;
}

/**
 * At most this many UTF-8 bytes of imagined attempts go into a prompt (the memory's, and in sequence
 * each later attempt's), shared equally by the attempts, and at most {@link MAX_LINE_BYTES} per line.
 * Unbounded, four attempts of a small model outgrew its 4,096 positions and failed the run.
 */
export const MAX_ATTEMPTS_BYTES = 4000;
const MAX_LINE_BYTES = 240;

/** The imagined attempts as text the policy can read, within {@link MAX_ATTEMPTS_BYTES}. */
export function describeAttempts(
  transcripts: readonly EpisodeTranscript[],
  maxBytes = MAX_ATTEMPTS_BYTES,
): string {
  const share = Math.floor(maxBytes / Math.max(1, transcripts.length)) - 2;
  return transcripts
    .map((t, i) => {
      const lines = [`Attempt ${i + 1}:`];
      for (const turn of t.turns) {
        lines.push(`User: ${turn.user}`);
        for (const c of turn.calls) {
          const response =
            c.outcome?.response?.text?.join('\n') ??
            (c.outcome?.error ? `error ${c.outcome.error.code}` : '(no response)');
          lines.push(`Call ${c.name} ${canonicalJson(c.arguments ?? null)} -> ${response}`);
        }
        lines.push(`Answer: ${turn.answer ?? '(none)'}`);
      }
      // Each line bounded, then the attempt: its first lines are kept, the rest counted.
      const kept: string[] = [];
      let used = 0;
      for (const [n, line] of lines
        .map((l) => clipBytes(l.replace(/\s+/g, ' '), MAX_LINE_BYTES))
        .entries()) {
        const size = Buffer.byteLength(line, 'utf8') + 1;
        const reserve = n === lines.length - 1 ? 0 : 24; // room for the "(N more lines)" that may follow
        if (used + size + reserve > share) {
          kept.push(`(${counted(lines.length - n, 'more line')})`);
          break;
        }
        kept.push(line);
        used += size;
      }
      return kept.join('\n');
    })
    .join('\n\n');
}

/** What private rehearsal needs. */
export interface PrivateRehearsalContext {
  task: TaskFile;
  /** Index of the first episode this task's rehearsal uses. */
  firstIndex: number;
  policy: Policy;
  env: Environment;
  settings: RunSettings;
  emit: EmitEvent;
  grade?: GradeOptions;
  /** Opens the task's user in the loop (EpisodeContext.openUser). */
  openUser?: OpenUser;
  signal?: AbortSignal;
  onProgress?: (p: EpisodeProgress) => void;
}

/** The policy's own memory of its attempts: one act without tools over them (EnvACE's condensation). */
async function condense(ctx: PrivateRehearsalContext, attempts: string): Promise<string> {
  const condensed = await ctx.policy.act({
    messages: [
      { role: 'system', content: MEMORY_SYSTEM_PROMPT },
      {
        role: 'user',
        content: `Task: ${ctx.task.turns.map((t) => t.user).join('\n')}\n\n${attempts}`,
      },
    ],
    tools: [],
    sampling: ctx.settings.sampling.act,
    maxTokens: ctx.settings.maxTokens.act,
    signal: ctx.signal,
  });
  return condensed.text.trim();
}

/** The memory of the kind the settings name, from the imagined attempts. */
async function memoryOf(
  ctx: PrivateRehearsalContext,
  transcripts: readonly EpisodeTranscript[],
  readOnlyHints: ReadonlyMap<string, boolean> | undefined,
): Promise<string> {
  const kind = ctx.settings.privateRehearsal.memory ?? 'condensed';
  if (kind === 'outcomes') return outcomesMemory(transcripts, readOnlyHints);
  const attempts = describeAttempts(transcripts);
  return kind === 'attempts' ? attempts : await condense(ctx, attempts);
}

/**
 * Test-time scaling by private rehearsal: N imagined episodes (in parallel, or in sequence where each
 * sees the earlier ones), made into a rehearsal memory (condensed by the policy, the attempts
 * themselves, or their imagined writes' outcomes: `settings.privateRehearsal.memory`), then one
 * committed shadow episode conditioned on that memory. Every episode is in the trace; the memory is
 * on the committed episode's end event.
 */
export async function playPrivateRehearsal(
  ctx: PrivateRehearsalContext,
): Promise<{ committed: EpisodeOutcome; committedId: string; nextIndex: number; memory: string }> {
  const { budget, order } = ctx.settings.privateRehearsal;
  let index = ctx.firstIndex;
  // The servers list the tools once; the imagined episodes (possibly at the same time) call none of them.
  await ctx.env.startEpisode(ctx.task.seed);
  const tools = ctx.env.tools();
  const readOnlyHints = ctx.env.readOnlyHints?.();
  const temperature = ctx.settings.privateRehearsal.temperature;
  let attempt = 0;
  const imagine = (context?: string) => {
    const i = index++;
    const n = ++attempt;
    const { act, rehearse } = ctx.settings.sampling;
    const sampling =
      temperature === undefined
        ? ctx.settings.sampling
        : {
            act: { ...act, temperature, seed: mixSeed(act.seed ?? 0, 'imagined act', n) },
            rehearse: {
              ...rehearse,
              temperature,
              seed: mixSeed(rehearse.seed ?? 0, 'imagined rehearse', n),
            },
          };
    return playEpisode({
      task: ctx.task,
      episodeId: makeEpisodeId(i),
      index: i,
      mode: 'imagine',
      role: 'imagined',
      policy: ctx.policy,
      tools,
      settings: { ...ctx.settings, audit: false, sampling },
      emit: ctx.emit,
      grade: ctx.grade,
      openUser: ctx.openUser,
      context,
      signal: ctx.signal,
      onProgress: ctx.onProgress,
    });
  };
  const imagined: EpisodeOutcome[] = [];
  if (order === 'parallel') {
    imagined.push(...(await Promise.all(Array.from({ length: budget }, () => imagine()))));
  } else {
    for (let n = 0; n < budget; n++) {
      const earlier = imagined.length
        ? `Your earlier imagined attempts at this task:\n${describeAttempts(imagined.map((o) => o.transcript))}`
        : undefined;
      imagined.push(await imagine(earlier));
    }
  }
  const memory = await memoryOf(
    ctx,
    imagined.map((o) => o.transcript),
    readOnlyHints,
  );
  const committedIndex = index++;
  const committedId = makeEpisodeId(committedIndex);
  const committed = await playEpisode({
    task: ctx.task,
    episodeId: committedId,
    index: committedIndex,
    mode: 'shadow',
    role: 'committed',
    policy: ctx.policy,
    env: ctx.env,
    settings: ctx.settings,
    emit: ctx.emit,
    grade: ctx.grade,
    openUser: ctx.openUser,
    context: memoryContext(memory),
    memory,
    signal: ctx.signal,
    onProgress: ctx.onProgress,
  });
  return { committed, committedId, nextIndex: index, memory };
}
