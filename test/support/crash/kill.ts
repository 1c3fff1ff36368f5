import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mulberry32 } from '../../../src/core/base/random';
import type { SkippedLine } from '../../../src/core/trace/format/reader';
import { TORN_LAST_LINE } from '../../../src/core/trace/format/reader';

/** What a crash campaign found: how many kills, and every broken promise, one line each. */
export interface CrashReport {
  /** Kills made. */
  kills: number;
  /** Kills that landed before the process had written anything. */
  killedBeforeWriting: number;
  /** Complete records (events, annotations, checkpoints) found after the kills, all checked. */
  recordsChecked: number;
  /** Torn last lines found (and skipped, as they must be). */
  tornLines: number;
  /** Broken promises: empty when everything held. */
  violations: string[];
  /** Milliseconds from each start to its kill. */
  killDelaysMs: number[];
}

/** An empty report. */
export function newCrashReport(): CrashReport {
  return {
    kills: 0,
    killedBeforeWriting: 0,
    recordsChecked: 0,
    tornLines: 0,
    violations: [],
    killDelaysMs: [],
  };
}

/** A seeded source of kill delays, so that a failing campaign can be replayed with its seed. */
export function killDelays(seed: number): (maxMs: number) => number {
  const random = mulberry32(seed);
  return (maxMs) => Math.floor(random() * maxMs);
}

/** A child started in its own process group, so that a kill reaches its own children (MCP servers, torchrun workers) too. */
export function startGroup(
  argv: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
} {
  const child = spawn(argv[0], argv.slice(1), {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  child.stdout!.resume();
  child.stderr!.resume();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited };
}

/** SIGKILL to the whole process group of a child started detached, as a power cut or the OOM killer would deliver it. */
export function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

/** True while a process of that id exists (signal 0 reaches it). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Records a violation for every skipped line that is not a torn last line of a file of `lineCount` non-blank lines. */
export function checkOnlyTornLastLine(
  skipped: readonly SkippedLine[],
  lineCount: number,
  where: string,
  report: CrashReport,
): void {
  for (const s of skipped) {
    if (s.reason !== TORN_LAST_LINE || s.line !== lineCount)
      report.violations.push(
        `${where}: line ${s.line} of ${lineCount} skipped (${s.reason}); only a torn last line may be`,
      );
    else report.tornLines++;
  }
}

/** Index of the first difference between `actual` and the start of `expected`, or -1 when `actual` is a prefix of it. */
export function firstPrefixMismatch(
  actual: readonly string[],
  expected: readonly string[],
): number {
  for (let i = 0; i < actual.length; i++)
    if (i >= expected.length || actual[i] !== expected[i]) return i;
  return -1;
}
