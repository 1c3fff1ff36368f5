import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { snapshotFileOf } from '../../src/core/trace/index/indexSnapshot';
import { compactEpisodeTemplate, largeTraceWorkspace } from '../data/largeTrace';
import { benchSize, registerBenchCase, timingStats } from '../registry';
import type { ScaleProbeResult } from '../support/scaleProbe';

/** Calls in the generated trace: BENCH_SCALE_CALLS, a million unless told. */
const CALLS = Number(process.env.BENCH_SCALE_CALLS ?? benchSize(1_000_000, 1_000));
const CALLS_PER_EPISODE = 10;
/** Random calls opened once the index is built. */
const SAMPLES = benchSize(2000, 20);

registerBenchCase({
  name: `reliability: scale, a ${CALLS.toLocaleString('en')}-call trace`,
  description:
    "A shadow-mode trace of about BENCH_SCALE_CALLS (default 1,000,000) calls, ~1.3 KB each (compact retail episodes of 10 lookups, two per turn), written to a temporary folder and deleted after. Two processes of their own, one after the other: the first builds the explorer's index from nothing (every line parsed) and saves it beside the trace (trace.index); the second opens the trace as the explorer does (the saved index read back and checked against the trace). Each then opens 2,000 random calls (turn, rehearsal and actual read by their byte locations and compared); resident memory is per process. The targets are for the explorer's open of a trace it has indexed before (or that the studio saved an index of); the build from nothing is reported beside it",
  targets: [
    { measurement: 'index (open, saved index)', stat: 'medianMs', belowMs: 10_000 },
    { measurement: 'open a random call', stat: 'p95Ms', belowMs: 50 },
    { fact: 'slowest call opened (ms)', atMost: 50 },
    { fact: 'peak resident memory, open (MB)', atMost: 300 },
  ],
  async run() {
    const template = compactEpisodeTemplate(CALLS_PER_EPISODE);
    const episodeBytes = template.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    // Numbered ids make lines a little longer than the template's: aim a few percent over.
    const made = await largeTraceWorkspace(
      (1.03 * Math.ceil(CALLS / CALLS_PER_EPISODE) * episodeBytes) / (1024 * 1024),
      template,
    );
    try {
      const probe = path.join(__dirname, '..', 'support', 'scaleProbe.js');
      const runProbe = async (mode: 'build' | 'open') => {
        const { stdout } = await promisify(execFile)(
          process.execPath,
          [probe, made.file, String(SAMPLES), '7', mode],
          { maxBuffer: 64 << 20 },
        );
        return JSON.parse(stdout) as ScaleProbeResult;
      };
      const built = await runProbe('build');
      const opened = await runProbe('open');
      if (opened.restoredBytes === 0)
        throw new Error('the open did not use the index saved by the build');
      if (opened.calls !== built.calls || opened.events !== built.events)
        throw new Error(
          `the saved index disagrees with the build: ${opened.calls} vs ${built.calls} calls`,
        );
      const open = timingStats([...built.openMs, ...opened.openMs]);
      return {
        measurements: {
          'index (build from nothing)': timingStats([built.indexMs]),
          'index (open, saved index)': timingStats([opened.indexMs]),
          'open a random call': open,
        },
        facts: {
          'trace bytes': (await fs.stat(made.file)).size,
          'trace events': built.events,
          calls: built.calls,
          'trace written in (s)': Number(made.writeSeconds.toFixed(1)),
          'index build from nothing (s)': Number((built.indexMs / 1000).toFixed(1)),
          'index saved in (s)': Number(((built.saveMs ?? 0) / 1000).toFixed(1)),
          'saved index bytes': (await fs.stat(snapshotFileOf(made.file))).size,
          'index open from saved (s)': Number((opened.indexMs / 1000).toFixed(1)),
          'call open p50 (ms)': Number(open.medianMs.toFixed(2)),
          'call open p95 (ms)': Number(open.p95Ms.toFixed(2)),
          'slowest call opened (ms)': Number(open.maxMs.toFixed(2)),
          'resident memory once indexed, build (MB)': Math.round(built.rssMb),
          'peak resident memory, build (MB)': Math.round(built.peakRssMb),
          'heap once indexed, build (MB)': Math.round(built.heapMb),
          'resident memory once indexed, open (MB)': Math.round(opened.rssMb),
          'peak resident memory, open (MB)': Math.round(opened.peakRssMb),
          'heap once indexed, open (MB)': Math.round(opened.heapMb),
        },
      };
    } finally {
      await made.dispose();
    }
  },
});
