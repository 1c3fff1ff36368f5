import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { compactEpisodeTemplate, largeTraceWorkspace } from '../data/largeTrace';
import { registerBenchCase, timingStats } from '../registry';
import type { ScaleProbeResult } from '../support/scaleProbe';

/** Calls in the generated trace: BENCH_SCALE_CALLS, a million unless told. */
const CALLS = Number(process.env.BENCH_SCALE_CALLS ?? 1_000_000);
const CALLS_PER_EPISODE = 10;
/** Random calls opened once the index is built. */
const SAMPLES = 2000;

registerBenchCase({
  name: `reliability: scale, a ${CALLS.toLocaleString('en')}-call trace`,
  description: 'A shadow-mode trace of about BENCH_SCALE_CALLS (default 1,000,000) calls, ~1.3 KB each (compact retail episodes of 10 lookups, two per turn), written to a temporary folder and deleted after; in a process of its own: the explorer\'s index built from nothing, then 2,000 random calls opened (turn, rehearsal and actual read by their byte locations and compared), with the resident memory of that process',
  targets: [
    { measurement: 'index build', stat: 'medianMs', belowMs: 10_000 },
    { measurement: 'open a random call', stat: 'p95Ms', belowMs: 50 },
    { fact: 'slowest call opened (ms)', atMost: 50 },
    { fact: 'peak resident memory (MB)', atMost: 300 },
  ],
  async run() {
    const template = compactEpisodeTemplate(CALLS_PER_EPISODE);
    const episodeBytes = template.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    // Numbered ids make lines a little longer than the template's: aim a few percent over.
    const made = await largeTraceWorkspace((1.03 * Math.ceil(CALLS / CALLS_PER_EPISODE) * episodeBytes) / (1024 * 1024), template);
    try {
      const probe = path.join(__dirname, '..', 'support', 'scaleProbe.js');
      const { stdout } = await promisify(execFile)(process.execPath, [probe, made.file, String(SAMPLES)], { maxBuffer: 64 << 20 });
      const r = JSON.parse(stdout) as ScaleProbeResult;
      const open = timingStats(r.openMs);
      return {
        measurements: { 'index build': timingStats([r.indexMs]), 'open a random call': open },
        facts: {
          'trace bytes': (await fs.stat(made.file)).size,
          'trace events': r.events,
          'calls': r.calls,
          'trace written in (s)': Number(made.writeSeconds.toFixed(1)),
          'index build (s)': Number((r.indexMs / 1000).toFixed(1)),
          'call open p50 (ms)': Number(open.medianMs.toFixed(2)),
          'call open p95 (ms)': Number(open.p95Ms.toFixed(2)),
          'slowest call opened (ms)': Number(open.maxMs.toFixed(2)),
          'resident memory once indexed (MB)': Math.round(r.rssMb),
          'peak resident memory (MB)': Math.round(r.peakRssMb),
          'heap once indexed (MB)': Math.round(r.heapMb),
        },
      };
    } finally {
      await made.dispose();
    }
  },
});
