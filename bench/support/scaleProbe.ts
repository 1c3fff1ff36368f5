import { mulberry32 } from '../../src/core/base/random';
import { loadCallView } from '../../src/core/trace/index/callView';
import { saveIndexSnapshot } from '../../src/core/trace/index/indexSnapshot';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';

/** What one probe of a large trace measured. */
export interface ScaleProbeResult {
  /** `build`: the index built from nothing, then saved; `open`: the explorer's open (the saved index read back when usable). */
  mode: 'build' | 'open';
  indexMs: number;
  /** Milliseconds to save the index beside the trace (`build` only). */
  saveMs?: number;
  /** Bytes of the trace whose index came from the saved index (`open`). */
  restoredBytes: number;
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
 * `node out/bench/support/scaleProbe.js <trace> [samples] [seed] [build|open]`: indexes a trace as
 * told (`build`: from nothing, then saves the index beside it; `open`: as the explorer opens it),
 * then opens `samples` random calls, in a process of its own so that its resident memory is the
 * index's alone. Prints a {@link ScaleProbeResult} as JSON.
 */
async function main(): Promise<void> {
  const [file, samplesText = '1000', seedText = '7', modeText = 'build'] = process.argv.slice(2);
  const mode = modeText === 'open' ? 'open' : 'build';
  const t0 = performance.now();
  const index =
    mode === 'open' ? await TraceIndex.open(file, { save: false }) : await TraceIndex.build(file);
  const indexMs = performance.now() - t0;
  let saveMs: number | undefined;
  if (mode === 'build') {
    const t1 = performance.now();
    await saveIndexSnapshot(index);
    saveMs = performance.now() - t1;
  }
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
  const result: ScaleProbeResult = {
    mode,
    indexMs,
    saveMs,
    restoredBytes: index.restoredBytes,
    events: index.eventCount,
    calls: calls.length,
    openMs,
    rssMb,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    heapMb,
  };
  process.stdout.write(JSON.stringify(result) + '\n');
}

void main();
