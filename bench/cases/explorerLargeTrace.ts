import { monitorEventLoopDelay } from 'node:perf_hooks';
import { findRunTraces } from '../../src/core/trace/format/discover';
import { TraceLibrary } from '../../src/core/trace/index/library';
import { traceTreeChildren } from '../../src/core/explorer/tree';
import type { LargeTraceWorkspace } from '../data/largeTrace';
import { largeTraceWorkspace } from '../data/largeTrace';
import { retailDocument } from '../data/retail';
import type { BenchCaseResult, BenchSettings, TimingStats } from '../registry';
import { benchSize, measure, quantile, registerBenchCase } from '../registry';

/** Size of the generated trace: BENCH_LARGE_TRACE_MB, 1 GB unless told. */
const MEGABYTES = Number(process.env.BENCH_LARGE_TRACE_MB ?? benchSize(1024, 2));

function stats(samples: number[]): TimingStats {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    runs: sorted.length,
    medianMs: quantile(sorted, 0.5),
    p95Ms: quantile(sorted, 0.95),
    minMs: sorted[0] ?? Number.NaN,
    maxMs: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** What the Trace Explorer does when it opens: find the runs, read their heads, build the first level. */
async function openExplorer(workspace: string): Promise<{ library: TraceLibrary; rows: number }> {
  const library = new TraceLibrary();
  await library.setFiles(await findRunTraces(workspace));
  return { library, rows: traceTreeChildren(library).length };
}

registerBenchCase({
  name: `explorer: open on a ${MEGABYTES >= 1024 ? `${MEGABYTES / 1024} GB` : `${MEGABYTES} MB`} trace`,
  description:
    "Trace Explorer on a workspace whose run trace is about BENCH_LARGE_TRACE_MB (default 1024) MB of realistic shadow-mode retail episodes, written to a temporary folder and deleted after: the first level (find runs, read each trace's first and last lines, build the run rows), then opening the run (indexing it in the background) while the event loop is sampled every 10 ms and the first level is rebuilt every 250 ms; JSON.parse of a 1 MB retail response as the machine baseline",
  targets: [
    { measurement: 'first level (runs)', stat: 'medianMs', belowMs: 2000 },
    { measurement: 'event-loop delay while indexing', stat: 'p95Ms', belowMs: 100 },
  ],
  async run(settings) {
    const made = await largeTraceWorkspace(MEGABYTES);
    try {
      return await measureExplorer(made, settings);
    } finally {
      await made.dispose();
    }
  },
});

/** The measurements of the case on a workspace made for it. */
async function measureExplorer(
  made: LargeTraceWorkspace,
  settings: BenchSettings,
): Promise<BenchCaseResult> {
  const firstLevel = await measure(async () => {
    const { library } = await openExplorer(made.workspace);
    library.dispose();
  }, settings);
  const baselineText = JSON.stringify(retailDocument(1024 * 1024));
  const baseline = await measure(() => JSON.parse(baselineText), settings);

  // Opening the run: the index is built in the background; the editor must stay responsive.
  const { library, rows } = await openExplorer(made.workspace);
  const delay = monitorEventLoopDelay({ resolution: 10 });
  const rowTimes: number[] = [];
  const started = performance.now();
  delay.enable();
  const indexing = library.ensureIndex(made.file);
  let done = false;
  void indexing.finally(() => {
    done = true;
  });
  while (!done) {
    await new Promise((r) => setTimeout(r, 250));
    const t0 = performance.now();
    traceTreeChildren(library);
    rowTimes.push(performance.now() - t0);
  }
  const index = await indexing;
  delay.disable();
  const indexSeconds = (performance.now() - started) / 1000;
  const runNode = traceTreeChildren(library)[0];
  let episodes = traceTreeChildren(library, runNode);
  const episodeRows = await measure(() => {
    episodes = traceTreeChildren(library, runNode);
  }, settings);
  const worstCalls = await measure(
    () => traceTreeChildren(library, runNode, { sort: 'fidelity' }),
    { warmup: 0, runs: Math.min(3, settings.runs) },
  );
  const heapMb = Math.round(process.memoryUsage().heapUsed / 1024 / 1024);
  library.dispose();
  // Opening the run again (a new window, the next session): the index saved beside the trace is read back.
  const again = await openExplorer(made.workspace);
  const reopenStarted = performance.now();
  const reopened = await again.library.ensureIndex(made.file);
  const reopenSeconds = (performance.now() - reopenStarted) / 1000;
  again.library.dispose();
  const ns = (p: number) => delay.percentile(p) / 1e6;
  return {
    baseline: 'JSON.parse 1 MB (baseline)',
    measurements: {
      'first level (runs)': firstLevel,
      'event-loop delay while indexing': {
        runs: delay.count,
        medianMs: ns(50),
        p95Ms: ns(95),
        minMs: delay.min / 1e6,
        maxMs: delay.max / 1e6,
      },
      'first level while indexing': stats(rowTimes),
      'run opened: first page of episodes': episodeRows,
      'run sorted by fidelity: first page of calls': worstCalls,
      'JSON.parse 1 MB (baseline)': baseline,
    },
    facts: {
      'trace bytes': index ? index.scannedBytes : 0,
      'trace events': index?.eventCount ?? 0,
      episodes: made.episodes,
      calls: index?.callCount ?? 0,
      'runs listed': rows,
      'index build (s, in the background; saved beside the trace after)': Number(
        indexSeconds.toFixed(1),
      ),
      'index on reopening (s, read back from trace.index)': Number(reopenSeconds.toFixed(2)),
      'reopened index read from trace.index': reopened?.restoredBytes ? 'yes' : 'no',
      'rows in the first page': episodes.length,
      'heap after indexing (MB)': heapMb,
      'trace written in (s)': Number(made.writeSeconds.toFixed(1)),
    },
  };
}
