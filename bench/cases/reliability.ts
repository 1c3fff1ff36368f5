import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { crashAnnotations } from '../../test/support/crash/annotationCrash';
import type { CrashReport } from '../../test/support/crash/kill';
import { crashRunner } from '../../test/support/crash/runnerCrash';
import { crashTraining } from '../../test/support/crash/trainingCrash';
import { fuzzTargets, runFuzzTarget, runsFor } from '../../test/support/fuzz/targets';
import type { BenchCaseResult, TimingStats } from '../registry';
import { benchSize, registerBenchCase, timingStats } from '../registry';

/** Inputs per fuzz target: BENCH_FUZZ_RUNS, 100,000 unless told. */
const FUZZ_RUNS = Number(process.env.BENCH_FUZZ_RUNS ?? benchSize(100_000, 20));
/** Kills per crash campaign: BENCH_CRASH_KILLS, 100 unless told. */
const KILLS = Number(process.env.BENCH_CRASH_KILLS ?? benchSize(100, 1));
/** The campaigns' seed: BENCH_CRASH_SEED replays one. */
const SEED = Number(process.env.BENCH_CRASH_SEED ?? Date.now() % 1_000_000);

async function inScratch<T>(prefix: string, body: (dir: string) => Promise<T>): Promise<T> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  try {
    return await body(dir);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

registerBenchCase({
  name: `reliability: fuzzing, ${FUZZ_RUNS.toLocaleString('en')} inputs per parser`,
  description:
    "The fuzz targets of test/support/fuzz (act and rehearsal parsers, trace line decoder, trace reader and explorer index on files, saved trace index, task loader, EnvACE and chat importers with what they write, annotation reader; the CLI's argument vectors, serve's HTTP requests, MCP server behaviour over time, model folder configs; the numbers reader, the write path and terminal text) with BENCH_FUZZ_RUNS generated and mutated inputs each (the last four their share of it: they start processes or load graphs); a failure prints its seed, input and error",
  targets: [{ fact: 'targets with an uncoded exception or a broken invariant', atMost: 0 }],
  async run(): Promise<BenchCaseResult> {
    return inScratch('rehearsal-bench-fuzz-', async (scratch) => {
      const measurements: Record<string, TimingStats> = {};
      const facts: Record<string, number | string> = { 'inputs per target': FUZZ_RUNS };
      let failed = 0;
      for (const target of fuzzTargets()) {
        const outcome = await runFuzzTarget(target, scratch, runsFor(target, FUZZ_RUNS));
        facts[`${target.name}: inputs`] = outcome.runs;
        measurements[`${target.name} (ms per 1,000 inputs)`] = timingStats([
          (outcome.ms * 1000) / Math.max(1, outcome.runs),
        ]);
        if (outcome.failed) {
          failed++;
          console.log(`  ${target.name}: ${outcome.report}`);
        }
      }
      facts['targets with an uncoded exception or a broken invariant'] = failed;
      return { measurements, facts };
    });
  },
});

function crashFacts(report: CrashReport): Record<string, number> {
  for (const v of report.violations.slice(0, 20)) console.log(`  violation: ${v}`);
  return {
    kills: report.kills,
    'kills before anything was written': report.killedBeforeWriting,
    'records checked after the kills': report.recordsChecked,
    'torn last lines skipped': report.tornLines,
    violations: report.violations.length,
  };
}

registerBenchCase({
  name: `reliability: crash consistency, ${KILLS} kills each`,
  description:
    "SIGKILL at BENCH_CRASH_KILLS random moments (seed BENCH_CRASH_SEED) of: a real `rehearse run` (reference policy, 4 built-in tasks × 2 episodes, real MCP servers), a process appending annotations, and a training run (trainer/, a tiny model, via the studio's launcher); every trace, annotations file and checkpoint folder checked after each kill (test/support/crash)",
  targets: [
    { fact: 'rehearse run: violations', atMost: 0 },
    { fact: 'annotations: violations', atMost: 0 },
    { fact: 'training: violations', atMost: 0 },
  ],
  async run(): Promise<BenchCaseResult> {
    const facts: Record<string, number | string> = { seed: SEED };
    const measurements: Record<string, TimingStats> = {};
    const campaign = async (name: string, body: (scratch: string) => Promise<CrashReport>) => {
      const t0 = performance.now();
      const report = await inScratch(`rehearsal-bench-crash-${name}-`, body);
      measurements[`${name}: kill delay (ms after start)`] = timingStats(report.killDelaysMs);
      for (const [k, v] of Object.entries(crashFacts(report))) facts[`${name}: ${k}`] = v;
      facts[`${name}: campaign (s)`] = Number(((performance.now() - t0) / 1000).toFixed(0));
      return report;
    };
    await campaign('rehearse run', (scratch) => crashRunner({ kills: KILLS, seed: SEED, scratch }));
    await campaign('annotations', (scratch) =>
      crashAnnotations({ kills: KILLS, seed: SEED, scratch }),
    );
    const training = await campaign('training', (scratch) =>
      crashTraining({ kills: KILLS, seed: SEED, scratch }),
    );
    facts['training: resumed runs compared with the uninterrupted one'] = (
      training as Awaited<ReturnType<typeof crashTraining>>
    ).finalsCompared;
    return { measurements, facts };
  },
});
