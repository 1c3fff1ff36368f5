import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BenchCaseResult, BenchSettings, BenchTarget } from './registry';
import { BENCH_TINY_ENV, benchCases } from './registry';

/**
 * `npm run bench [-- <filter>] [--strict] [--tiny]`: runs every case of `bench/cases/` (or those whose
 * name contains the filter), prints a table, writes `bench-results/latest.json`. Missed targets are
 * reported; with `--strict` they also fail the run. BENCH_RUNS and BENCH_WARMUP set the run counts.
 * `--tiny` runs every case at a size of seconds, once, judging no target (the CI's `bench` stage).
 */
async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const strict = args.includes('--strict');
  const tiny = args.includes('--tiny');
  const filter = args.find((a) => !a.startsWith('--'));
  if (tiny) process.env[BENCH_TINY_ENV] = '1';
  const settings: BenchSettings = tiny
    ? { warmup: 0, runs: 1, tiny }
    : {
        warmup: Number(process.env.BENCH_WARMUP ?? 3),
        runs: Number(process.env.BENCH_RUNS ?? 15),
      };

  const casesDir = path.join(__dirname, 'cases');
  for (const file of (await fs.readdir(casesDir)).filter((f) => f.endsWith('.js')).sort()) {
    await import(pathToFileURL(path.join(casesDir, file)).href);
  }
  const selected = benchCases().filter((c) => !filter || c.name.includes(filter));
  if (selected.length === 0) {
    console.error(`bench: no case matches ${JSON.stringify(filter)}`);
    return 2;
  }

  const results: {
    name: string;
    description: string;
    result: BenchCaseResult;
    targets: (BenchTarget & { actual: number; met: boolean })[];
  }[] = [];
  let missed = 0;
  for (const c of selected) {
    console.log(
      `\n${c.name}\n  ${c.description}\n  ${settings.warmup} warm-up runs, ${settings.runs} timed runs`,
    );
    const result = await c.run(settings);
    const base = result.baseline ? result.measurements[result.baseline]?.medianMs : undefined;
    const rows = Object.entries(result.measurements).map(([name, s]) => [
      name,
      s.medianMs.toFixed(1),
      s.p95Ms.toFixed(1),
      s.minMs.toFixed(1),
      base ? `${(s.medianMs / base).toFixed(1)}×` : '-',
    ]);
    console.log(table(['measurement', 'median ms', 'p95 ms', 'min ms', 'vs baseline'], rows));
    for (const [k, v] of Object.entries(result.facts ?? {})) console.log(`  ${k}: ${v}`);
    if (tiny) {
      console.log('  at a tiny size: it runs; its timings and targets are not measurements');
      results.push({ name: c.name, description: c.description, result, targets: [] });
      continue;
    }
    const targets = (c.targets ?? []).map((t) => {
      if ('fact' in t) {
        const actual = Number(result.facts?.[t.fact] ?? Number.NaN);
        const met = 'atMost' in t ? actual <= t.atMost : actual >= t.atLeast;
        if (!met) missed++;
        const goal = 'atMost' in t ? `<= ${t.atMost}` : `>= ${t.atLeast}`;
        console.log(`  target ${t.fact} ${goal}: ${actual.toFixed(2)} ${met ? 'met' : 'MISSED'}`);
        return { ...t, actual, met };
      }
      const actual = result.measurements[t.measurement]?.[t.stat] ?? Number.NaN;
      const met = actual < t.belowMs;
      if (!met) missed++;
      console.log(
        `  target ${t.measurement} ${t.stat} < ${t.belowMs} ms: ${actual.toFixed(1)} ms ${met ? 'met' : 'MISSED'}`,
      );
      return { ...t, actual, met };
    });
    results.push({ name: c.name, description: c.description, result, targets });
  }

  // A tiny run proves the cases run; it never replaces the measurements in bench-results/.
  const out = tiny
    ? path.join(os.tmpdir(), `rehearsal-bench-tiny-${process.pid}.json`)
    : path.join(process.cwd(), 'bench-results', 'latest.json');
  await fs.mkdir(path.dirname(out), { recursive: true });
  const machine = {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    load: os.loadavg(),
  };
  await fs.writeFile(
    out,
    JSON.stringify({ date: new Date().toISOString(), machine, settings, cases: results }, null, 2) +
      '\n',
  );
  console.log(
    `\nwrote ${path.relative(process.cwd(), out)}${missed ? `; ${missed} target(s) missed` : ''}`,
  );
  return strict && missed ? 1 : 0;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    '  ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), '  ' + widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join(
    '\n',
  );
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
