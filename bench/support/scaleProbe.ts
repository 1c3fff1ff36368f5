import { mulberry32 } from '../../src/core/base/random';
import { loadCallView } from '../../src/core/trace/callView';
import { TraceIndex } from '../../src/core/trace/traceIndex';

/** What one probe of a large trace measured. */
export interface ScaleProbeResult {
  indexMs: number;
  events: number;
  calls: number;
  /** Milliseconds to open each sampled call (its turn, rehearsal and actual events read and compared). */
  openMs: number[];
  /** Resident memory once indexed, and the peak over the whole probe, in MB. */
  rssMb: number;
  peakRssMb: number;
  heapMb: number;
}

/**
 * `node out/bench/support/scaleProbe.js <trace> [samples] [seed]`: builds the explorer's index of a
 * trace, then opens `samples` random calls, in a process of its own so that its resident memory is
 * the index's alone. Prints a {@link ScaleProbeResult} as JSON.
 */
async function main(): Promise<void> {
  const [file, samplesText = '1000', seedText = '7'] = process.argv.slice(2);
  const t0 = performance.now();
  const index = await TraceIndex.build(file);
  const indexMs = performance.now() - t0;
  const rssMb = process.memoryUsage().rss / 1024 / 1024;
  const heapMb = process.memoryUsage().heapUsed / 1024 / 1024;
  // Ids only: entries are built when asked for, and building a million would measure the probe.
  const calls = index.callIds();
  const random = mulberry32(Number(seedText));
  const openMs: number[] = [];
  for (let i = 0; i < Number(samplesText) && calls.length; i++) {
    const id = calls[Math.floor(random() * calls.length)];
    const t = performance.now();
    await loadCallView(index, id);
    openMs.push(performance.now() - t);
  }
  const result: ScaleProbeResult = { indexMs, events: index.eventCount, calls: calls.length, openMs, rssMb, peakRssMb: process.resourceUsage().maxRSS / 1024, heapMb };
  process.stdout.write(JSON.stringify(result) + '\n');
}

void main();
