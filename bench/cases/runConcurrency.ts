import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BenchCaseResult } from '../registry';
import { benchSize, registerBenchCase, timingStats } from '../registry';
import { heldOutTasks, rehearse } from '../support/runs';
import { ENDPOINT_DELAY_MS, slowEndpoint } from '../support/slowEndpoint';

const TASKS_PER_DOMAIN = benchSize(20, 1);

/**
 * Plays the tasks once per level, levels alternating over `rounds`, and returns each level's wall
 * times and episodes per minute (the median).
 */
async function byLevel(
  levels: readonly number[],
  rounds: number,
  episodes: number,
  play: (n: number, round: number) => Promise<void>,
): Promise<{ times: Map<number, number[]>; perMinute: Map<number, number> }> {
  const times = new Map<number, number[]>(levels.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++)
    for (const n of levels) {
      const t0 = performance.now();
      await play(n, r);
      times.get(n)!.push(performance.now() - t0);
    }
  const perMinute = new Map<number, number>();
  for (const [n, t] of times) {
    const median = [...t].sort((a, b) => a - b)[Math.floor(t.length / 2)];
    perMinute.set(n, (episodes * 60_000) / median);
  }
  return { times, perMinute };
}

function figures(
  levels: readonly number[],
  times: Map<number, number[]>,
  perMinute: Map<number, number>,
): Pick<BenchCaseResult, 'measurements' | 'facts'> {
  const one = perMinute.get(1)!;
  return {
    measurements: Object.fromEntries(
      [...times].map(([n, t]) => [`--concurrency ${n}`, timingStats(t)]),
    ),
    facts: Object.fromEntries(
      levels.flatMap((n) => [
        [`episodes per minute, N = ${n}`, Number(perMinute.get(n)!.toFixed(1))],
        ...(n > 1 ? [[`N = ${n} / N = 1`, Number((perMinute.get(n)! / one).toFixed(2))]] : []),
      ]),
    ),
  };
}

/** Levels of the endpoint case: one episode at a time, the default of a model folder, and many. */
const ENDPOINT_LEVELS = benchSize([1, 8, 32], [1, 2]);
/**
 * Episodes of each task in the endpoint case: 160 in all, five whole rounds of 32, so that no level
 * ends on a round of a few episodes (80 would leave N = 32 a third round of 16, capping it at 26.7).
 */
const ENDPOINT_EPISODES_PER_TASK = benchSize(4, 2);

registerBenchCase({
  name: `runs: episodes per minute at N = 1, 8, 32 against an endpoint that answers in ${ENDPOINT_DELAY_MS} ms`,
  description: `\`rehearse run\` of ${2 * TASKS_PER_DOMAIN} held-out tasks x ${ENDPOINT_EPISODES_PER_TASK} episodes in shadow mode against a local OpenAI-compatible endpoint whose every answer takes ${ENDPOINT_DELAY_MS} ms (act: one tool call, then a final answer; one rehearsal per call: three requests an episode) and the real built-in servers, at --concurrency ${ENDPOINT_LEVELS.join(', ')}; wall time of the whole command; levels alternate, medians. The ideal is N times N = 1`,
  targets: ENDPOINT_LEVELS.filter((n) => n > 1).map((n) => ({
    fact: `N = ${n} / N = 1`,
    atLeast: Number((0.85 * n).toFixed(2)),
  })),
  async run(settings) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-endpoint-'));
    const endpoint = await slowEndpoint();
    try {
      const tasks = await heldOutTasks(dir, TASKS_PER_DOMAIN);
      const episodes = 2 * TASKS_PER_DOMAIN * ENDPOINT_EPISODES_PER_TASK;
      const { times, perMinute } = await byLevel(
        ENDPOINT_LEVELS,
        Math.max(1, Math.min(settings.runs, 2)),
        episodes,
        async (n, r) => {
          await rehearse(
            'run',
            tasks,
            '--policy',
            endpoint.url,
            '--model',
            'slow',
            '--episodes',
            String(ENDPOINT_EPISODES_PER_TASK),
            '--concurrency',
            String(n),
            '--out',
            path.join(dir, `runs-${n}-${r}`),
            '--no-progress',
            '--json',
          );
        },
      );
      const result = figures(ENDPOINT_LEVELS, times, perMinute);
      return {
        baseline: '--concurrency 1',
        ...result,
        facts: { ...result.facts, 'requests answered': await endpoint.requests() },
      };
    } finally {
      await endpoint.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
});
