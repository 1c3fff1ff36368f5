import { promises as fs } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BenchCaseResult } from '../registry';
import { benchSize, registerBenchCase, timingStats } from '../registry';
import { heldOutTasks, rehearse } from '../support/runs';

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

/** The delay of the test endpoint's every answer, as a busy remote server would take. */
const ENDPOINT_DELAY_MS = 200;

/**
 * An OpenAI-compatible endpoint that answers every request after {@link ENDPOINT_DELAY_MS}: an act
 * request calls the task's first tool and, once a tool answered, gives a final answer; a rehearse
 * request (no tools) rehearses `{"ok": true}`. Each episode makes three requests.
 */
async function slowEndpoint(): Promise<{ url: string; close: () => void; requests: () => number }> {
  let requests = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      requests++;
      const asked = JSON.parse(body) as {
        messages: { role: string }[];
        tools?: { function: { name: string } }[];
      };
      const message = !asked.tools?.length
        ? { role: 'assistant', content: '<execution_result>\n{"ok": true}\n</execution_result>' }
        : asked.messages.some((m) => m.role === 'tool')
          ? { role: 'assistant', content: 'Done.' }
          : {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'call_1',
                  type: 'function',
                  function: { name: asked.tools[0].function.name, arguments: '{}' },
                },
              ],
            };
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: `c${requests}`,
            object: 'chat.completion',
            created: 0,
            model: 'slow',
            choices: [
              {
                index: 0,
                message,
                finish_reason: 'tool_calls' in message ? 'tool_calls' : 'stop',
              },
            ],
            usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
          }),
        );
      }, ENDPOINT_DELAY_MS);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => server.close(),
    requests: () => requests,
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
        facts: { ...result.facts, 'requests answered': endpoint.requests() },
      };
    } finally {
      endpoint.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
});
