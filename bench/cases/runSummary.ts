import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runSummary } from '../../src/core/report/runSummary';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import { TraceBuilder } from '../../test/builders/traceBuilder';
import { benchSize, measure, registerBenchCase } from '../registry';

/** Episodes of the generated run: BENCH_SUMMARY_EPISODES, 100,000 unless told. */
const EPISODES = Number(process.env.BENCH_SUMMARY_EPISODES ?? benchSize(100_000, 100));

/** A shadow run of `EPISODES` short retail episodes: a lookup (rehearsed, answered, scored), then an answer. */
async function writeRun(file: string): Promise<void> {
  const handle = await fs.open(file, 'w');
  try {
    // One builder (episode ids run on), its events written and dropped every few thousand episodes.
    const trace = new TraceBuilder('summary-bench', 'shadow');
    for (let k = 0; k < EPISODES; k++) {
      const ep = trace.episode(`retail-test-${String(k).padStart(6, '0')}`);
      const order = `#W${String(1_000_000 + k)}`;
      ep.turn(
        `\n<tool_call>\n{"name": "get_order_details", "arguments": {"order_id": "${order}"}}\n</tool_call>`,
      )
        .rehearse(0, { order_id: order, status: k % 3 ? 'delivered' : 'pending' })
        .actual(0, {
          json: { order_id: order, status: 'delivered', items: [{ item_id: String(k) }] },
        });
      ep.turn(`Your order ${order} was delivered.`);
      ep.end({ reward: k % 4 ? 1 : 0, success: k % 4 !== 0, answer: 'delivered' });
      if (k % 5_000 === 4_999 || k === EPISODES - 1) {
        if (k === EPISODES - 1) trace.end();
        await handle.write(trace.text());
        trace.events.length = 0;
      }
    }
  } finally {
    await handle.close();
  }
}

registerBenchCase({
  name: `run summary: ${EPISODES.toLocaleString('en')} episodes`,
  description:
    "The Run Summary panel's host side on a generated shadow run of BENCH_SUMMARY_EPISODES (default 100,000) episodes (a rehearsed, answered and scored lookup and an answer each): the snapshot built from the explorer's index (metrics, fidelity per tool, a row per episode) and serialised as postMessage does. The panel draws only the rows in view, so its own cost does not grow with the run. Indexing the trace, which the Trace Explorer has done before the summary opens, is reported as a fact.",
  targets: [{ measurement: 'open: snapshot + serialisation', stat: 'medianMs', belowMs: 2000 }],
  async run(settings) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-bench-summary-'));
    try {
      const file = path.join(dir, 'trace.jsonl');
      await writeRun(file);
      const t0 = performance.now();
      const index = await TraceIndex.build(file);
      const indexMs = performance.now() - t0;
      let bytes = 0;
      const open = await measure(() => {
        bytes = JSON.stringify(runSummary(index)).length;
      }, settings);
      const snapshot = await measure(() => runSummary(index), settings);
      return {
        measurements: { 'open: snapshot + serialisation': open, 'snapshot alone': snapshot },
        facts: {
          episodes: index.episodeCount,
          calls: index.callCount,
          'trace MB': Math.round((await fs.stat(file)).size / 2 ** 20),
          'index build ms (done by the explorer before)': Math.round(indexMs),
          'snapshot bytes': bytes,
        },
      };
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
});
