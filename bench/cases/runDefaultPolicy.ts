import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { benchSize, registerBenchCase, timingStats } from '../registry';
import { defaultPolicyRun, heldOutTasks, rehearse } from '../support/runs';

const TASKS_PER_DOMAIN = benchSize(8, 1);
const ROUNDS = benchSize(3, 1);

/** The arms, played in this order every round: the KV cache (slots or copy) and --concurrency. */
const ARMS = [
  { kvCache: 'slots', n: 1 },
  { kvCache: 'slots', n: 8 },
  { kvCache: 'copy', n: 1 },
  { kvCache: 'copy', n: 8 },
] as const;
type Arm = (typeof ARMS)[number];
const label = (a: Arm) => `${a.kvCache}, N = ${a.n}`;

interface Played {
  /** Wall time of the whole command (policy host start, servers, episodes). */
  wallMs: number;
  /** From the first episode's start to the last one's end, in the trace. */
  episodesMs: number;
  /** Each task's outcome: status, reward, success. */
  outcomes: Map<string, string>;
}

/** Plays the tasks once and reads the outcomes and the episodes' span from the run's output and trace. */
async function play(tasks: string, out: string, arm: Arm): Promise<Played> {
  const t0 = performance.now();
  const json = await rehearse(...defaultPolicyRun(tasks, out, arm.kvCache, arm.n), '--json');
  const wallMs = performance.now() - t0;
  const run = (
    JSON.parse(json) as {
      run: {
        traceFile: string;
        episodes: { taskId: string; status: string; reward?: number; success?: boolean }[];
      };
    }
  ).run;
  const times: { type: string; ts: string }[] = (await fs.readFile(run.traceFile, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; ts: string })
    .filter((e) => e.type === 'episode' || e.type === 'episode.end');
  const at = (type: string) => times.filter((e) => e.type === type).map((e) => Date.parse(e.ts));
  return {
    wallMs,
    episodesMs: Math.max(...at('episode.end')) - Math.min(...at('episode')),
    outcomes: new Map(
      run.episodes.map((e) => [e.taskId, `${e.status} ${e.reward} ${e.success}`] as const),
    ),
  };
}

/** Episodes whose outcome differs between two plays of the same tasks. */
function differing(a: Played, b: Played): number {
  let n = 0;
  for (const [task, outcome] of a.outcomes) if (b.outcomes.get(task) !== outcome) n++;
  return n + Math.abs(a.outcomes.size - b.outcomes.size);
}

const medianOf = (values: number[]) =>
  [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];

registerBenchCase({
  name: 'runs: episodes per minute at N = 1 and 8 with the default policy, KV cache in place or copied',
  description: `\`rehearse run\` of ${2 * TASKS_PER_DOMAIN} held-out tasks (test split, ${TASKS_PER_DOMAIN} retail and ${TASKS_PER_DOMAIN} bank) in shadow mode, greedy, with the embedded default policy on CPU and the real built-in servers, at --concurrency 1 and 8, with --kv-cache slots (model_slots.onnx: each sequence's cache read in place) and copy (model.onnx: the cache copied each step, rows padded to the longest); the four arms alternate over ${ROUNDS} round(s), medians. "whole command": the command's wall time (policy host start and servers included); "episodes": the trace's first episode start to its last episode end. Outcomes (status, reward, success of every task) are compared between the arms`,
  targets: [
    { fact: 'N = 8 / N = 1, slots, episodes', atLeast: 3 },
    { fact: 'slots / copy at N = 1, whole command', atLeast: 1 },
    { fact: 'tasks whose outcome differs, N = 8 vs N = 1', atMost: 0 },
    { fact: 'tasks whose outcome differs, slots vs copy', atMost: 0 },
  ],
  async run() {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-default-runs-'));
    try {
      const tasks = await heldOutTasks(dir, TASKS_PER_DOMAIN);
      const played = new Map<Arm, Played[]>(ARMS.map((a) => [a, []]));
      for (let r = 0; r < ROUNDS; r++)
        for (const arm of ARMS)
          played
            .get(arm)!
            .push(await play(tasks, path.join(dir, `runs-${arm.kvCache}-${arm.n}-${r}`), arm));
      const episodes = 2 * TASKS_PER_DOMAIN;
      const perMinute = (arm: Arm, key: 'wallMs' | 'episodesMs') =>
        (episodes * 60_000) / medianOf(played.get(arm)!.map((p) => p[key]));
      const [slots1, slots8, copy1, copy8] = ARMS;
      const first = (arm: Arm) => played.get(arm)![0];
      const facts: Record<string, number> = {};
      for (const arm of ARMS) {
        facts[`episodes per minute, ${label(arm)}, whole command`] = round(
          perMinute(arm, 'wallMs'),
        );
        facts[`episodes per minute, ${label(arm)}, episodes`] = round(perMinute(arm, 'episodesMs'));
      }
      for (const key of ['wallMs', 'episodesMs'] as const) {
        const what = key === 'wallMs' ? 'whole command' : 'episodes';
        facts[`N = 8 / N = 1, slots, ${what}`] = round(
          perMinute(slots8, key) / perMinute(slots1, key),
        );
        facts[`N = 8 / N = 1, copy, ${what}`] = round(
          perMinute(copy8, key) / perMinute(copy1, key),
        );
        facts[`slots / copy at N = 1, ${what}`] = round(
          perMinute(slots1, key) / perMinute(copy1, key),
        );
        facts[`slots N = 8 / copy N = 8, ${what}`] = round(
          perMinute(slots8, key) / perMinute(copy8, key),
        );
      }
      facts['tasks whose outcome differs, N = 8 vs N = 1'] =
        differing(first(slots1), first(slots8)) + differing(first(copy1), first(copy8));
      facts['tasks whose outcome differs, slots vs copy'] = differing(first(slots1), first(copy1));
      facts.tasks = episodes;
      return {
        baseline: label(slots1),
        measurements: Object.fromEntries(
          ARMS.map((a) => [label(a), timingStats(played.get(a)!.map((p) => p.wallMs))]),
        ),
        facts,
      };
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
});

function round(x: number): number {
  return Number(x.toFixed(2));
}
