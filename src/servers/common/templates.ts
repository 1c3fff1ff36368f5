import type { ParsedToolCall } from '../../core/protocol/actParser';
import type { TaskGenerator } from '../../core/tasks/generator';
import { splitOfSeed } from '../../core/tasks/generator';
import type { CheckSpec, TaskFile } from '../../core/tasks/format/taskFile';
import { Random } from './random';
import type { WriteToolSpec } from './trajectoryItems';
import { trajectoryItems } from './trajectoryItems';

/** One user turn of a generated task: what the user says, the reference calls, the reference answer. */
export interface TaskStep {
  user: string;
  calls: ParsedToolCall[];
  answer: string;
}

/** What a template makes of a world: the task's turns, checks and reference solution. */
export interface TaskDraft {
  template: string;
  description: string;
  steps: TaskStep[];
  checks: CheckSpec[];
  /** The right behaviour is to refuse (the request breaks the domain's policy). */
  refusal?: boolean;
}

/** A template: its name, its weight in the draw, and the draft it makes (undefined when the world does not fit). */
export type TaskTemplate<W> = [
  name: string,
  weight: number,
  make: (c: { world: W; rng: Random }) => TaskDraft | undefined,
];

/** A built-in domain's task generator, from its world and templates. */
export interface TemplatedDomain<W> {
  domain: string;
  /** The agent's system prompt (the domain's policy). */
  policy: string;
  toolNames: string[];
  /** The tools that change the state: every task gets trajectory items over them. */
  writeTools: WriteToolSpec[];
  createWorld(seed: number): W;
  templates: TaskTemplate<W>[];
  /** Mixes the seed into the template draw, so domains do not draw alike. */
  salt: { multiply: number; add: number };
}

/**
 * The task file of a draft: split by seed, the domain's server, policy, tools and limits; after the
 * draft's checks, the trajectory items that stand for its state checks ({@link trajectoryItems}).
 */
export function draftToTask<W>(d: TemplatedDomain<W>, seed: number, draft: TaskDraft): TaskFile {
  return {
    $schema: '../../schemas/task.schema.json',
    version: 1,
    id: `${d.domain}-${String(seed).padStart(4, '0')}`,
    description: draft.description,
    domain: d.domain,
    split: splitOfSeed(seed),
    seed,
    tags: [
      draft.template,
      ...(draft.refusal ? ['policy-refusal'] : []),
      ...(draft.steps.length > 1 ? ['multi-turn'] : []),
    ],
    system: d.policy,
    turns: draft.steps.map((s) => ({ user: s.user })),
    servers: { [d.domain]: { builtin: d.domain } },
    tools: d.toolNames,
    checks: [...draft.checks, ...trajectoryItems(draft.steps, d.writeTools)],
    limits: { maxTurns: 20, maxCallsPerTurn: 4, callTimeoutMs: 10_000 },
    reference: { turns: draft.steps.map((s) => ({ calls: s.calls, answer: s.answer })) },
  };
}

/**
 * A seeded generator: the world of the seed, then a template drawn by weight; when the world does not
 * fit it, the next template is tried, so every seed gives a task.
 */
export function templatedGenerator<W>(d: TemplatedDomain<W>): TaskGenerator {
  return {
    domain: d.domain,
    generate(seed: number): TaskFile {
      const world = d.createWorld(seed);
      const rng = new Random(seed * d.salt.multiply + d.salt.add);
      const first = rng.weighted(d.templates.map((t, i) => [i, t[1]] as const));
      for (let k = 0; k < d.templates.length; k++) {
        const draft = d.templates[(first + k) % d.templates.length][2]({ world, rng });
        if (draft) return draftToTask(d, seed, draft);
      }
      throw new Error(`no ${d.domain} template fits the world of seed ${seed}`);
    },
  };
}
