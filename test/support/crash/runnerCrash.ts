import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { errorMessage } from '../../../src/core/base/errors';
import { loadCallView } from '../../../src/core/trace/index/callView';
import { tracesInRunsFolder } from '../../../src/core/trace/format/discover';
import { TraceLibrary } from '../../../src/core/trace/index/library';
import { readTrace, readTraceEvents } from '../../../src/core/trace/format/reader';
import type { TraceEvent } from '../../../src/core/trace/format/schema';
import { TraceIndex } from '../../../src/core/trace/index/traceIndex';
import { traceTreeChildren } from '../../../src/core/explorer/tree';
import { TraceWriter } from '../../../src/core/trace/format/writer';
import type { ChatReply, ChatRequest } from '../chatServer';
import { startChatServer } from '../chatServer';
import { ensureServerBundles, REPO } from '../servers';
import type { CrashReport } from './kill';
import {
  checkOnlyTornLastLine,
  firstPrefixMismatch,
  killDelays,
  killGroup,
  newCrashReport,
  startGroup,
} from './kill';

/** Built-in example tasks of both domains, two episodes each: a run of ~80 events in a few seconds. */
const TASKS = ['retail-0000', 'retail-0004', 'bank-0001', 'bank-0011'].map((t) =>
  path.join(REPO, 'examples', 'tasks', `${t}.task.json`),
);

/**
 * `rehearse run` of the tasks, as a child process (the CLI as tsc compiled it): with the reference
 * policy (8 episodes in flight, its default) unless other arguments are given.
 */
function runArgv(out: string, policy = ['--policy', 'reference', '--episodes', '2']): string[] {
  return [
    process.execPath,
    path.join(REPO, 'out', 'src', 'cli', 'main.js'),
    'run',
    ...TASKS,
    ...policy,
    '--out',
    out,
    '--no-progress',
    '--json',
  ];
}

/** An event without what differs between two runs of the same tasks (run id, times). */
function comparable(e: TraceEvent): string {
  const {
    ts: _ts,
    runId: _runId,
    latencyMs: _latency,
    ...rest
  } = e as TraceEvent & { runId?: string; latencyMs?: number };
  return JSON.stringify(rest);
}

/**
 * Each episode's events (the run's own under `run`), in file order, comparable: episodes played at
 * once interleave differently from run to run, but each one's own events do not.
 */
function streams(events: readonly TraceEvent[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of events) {
    const key = 'episodeId' in e && typeof e.episodeId === 'string' ? e.episodeId : 'run';
    if (!out.has(key)) out.set(key, []);
    out.get(key)!.push(comparable(e));
  }
  return out;
}

/** The trace of the one run written into a runs folder given with `--out`, if it got that far. */
async function onlyTrace(out: string): Promise<string | undefined> {
  return (await tracesInRunsFolder(out))[0];
}

/**
 * Kills a real `rehearse run` (reference policy, built-in retail and bank tasks, real MCP servers)
 * with SIGKILL at `kills` random moments, and checks every trace it left: the reader reads it, the
 * only line ever skipped is a torn last line, each episode's events (and the run's own) are a
 * prefix of that episode's in an uninterrupted run (nothing complete lost, nothing reordered or
 * invented; episodes played at once interleave as they happen to), the explorer's index opens every call,
 * and a writer reopening the file appends after the torn line without corrupting anything.
 */
export async function crashRunner(options: {
  kills: number;
  seed: number;
  scratch: string;
  log?: (line: string) => void;
}): Promise<CrashReport> {
  ensureServerBundles();
  const report = newCrashReport();
  const delay = killDelays(options.seed);
  const referenceOut = path.join(options.scratch, 'reference');
  const t0 = performance.now();
  const reference = startGroup(runArgv(referenceOut), { cwd: REPO });
  const done = await reference.exited;
  const fullMs = performance.now() - t0;
  if (done.code !== 0) throw new Error(`the uninterrupted run failed (exit ${done.code})`);
  const expected = streams((await readTraceEvents((await onlyTrace(referenceOut))!)).events);

  for (let k = 0; k < options.kills; k++) {
    const out = path.join(options.scratch, `killed-${k}`);
    const wait = delay(fullMs);
    const started = startGroup(runArgv(out), { cwd: REPO });
    await new Promise((r) => setTimeout(r, wait));
    killGroup(started.child.pid);
    const exit = await started.exited;
    report.kills++;
    report.killDelaysMs.push(wait);
    const where = `kill ${k + 1} (after ${wait} ms, seed ${options.seed})`;
    if (exit.signal !== 'SIGKILL')
      options.log?.(`${where}: the run had already ended (${exit.code ?? exit.signal})`);
    try {
      await checkKilledTrace(out, expected, where, report);
    } catch (err) {
      report.violations.push(`${where}: ${errorMessage(err)}`);
    }
    await fs.rm(out, { recursive: true, force: true });
  }
  await fs.rm(referenceOut, { recursive: true, force: true });
  return report;
}

async function checkKilledTrace(
  out: string,
  expected: ReadonlyMap<string, readonly string[]>,
  where: string,
  report: CrashReport,
): Promise<void> {
  const file = await onlyTrace(out);
  if (!file) {
    report.killedBeforeWriting++;
    return;
  }
  const events: TraceEvent[] = [];
  const read = await readTrace(file, { onEvent: (e) => events.push(e) });
  const lines = (await fs.readFile(file, 'utf8')).split('\n').filter((l) => l.trim() !== '').length;
  checkOnlyTornLastLine(read.skipped, lines, where, report);
  for (const [stream, got] of streams(events)) {
    const mismatch = firstPrefixMismatch(got, expected.get(stream) ?? []);
    if (mismatch >= 0)
      report.violations.push(
        `${where}: event ${mismatch + 1} of ${stream} differs from the uninterrupted run's: ${got[mismatch].slice(0, 200)}`,
      );
  }
  report.recordsChecked += events.length;

  // The explorer: the library lists the run, the index holds every event, every call opens.
  const library = new TraceLibrary();
  try {
    await library.setFiles([file]);
    if (library.failure(file))
      report.violations.push(
        `${where}: the explorer cannot open the trace: ${library.failure(file)}`,
      );
    if (traceTreeChildren(library).length !== 1)
      report.violations.push(`${where}: the explorer does not list the run`);
  } finally {
    library.dispose();
  }
  const index = await TraceIndex.build(file);
  if (index.eventCount !== events.length)
    report.violations.push(
      `${where}: the index holds ${index.eventCount} events, the reader ${events.length}`,
    );
  for (const call of index.calls()) await loadCallView(index, call.callId);

  // A writer reopening the file (a resumed recording) ends a torn line first: nothing after it is lost.
  const writer = await TraceWriter.open(file, { durable: false });
  await writer.append({
    type: 'run.end',
    runId: 'recovered',
    status: 'failed',
    error: { code: 'RUN_INTERRUPTED', message: 'killed' },
  });
  await writer.close();
  const after = await readTraceEvents(file);
  if (after.events.length !== events.length + 1 || after.events.at(-1)?.type !== 'run.end')
    report.violations.push(`${where}: an event appended after the crash is not read back`);
}

/** Episodes in flight in {@link crashRunnerInFlight}, and the run's episodes: 8 of each of the 4 tasks. */
const IN_FLIGHT = 8;
const EPISODES_PER_TASK = 8;
/** Requests the endpoint answers before it holds every later one: an episode makes three. */
const ANSWERED = 30;

/**
 * A stand-in model for an endpoint policy: an act with tools calls the first tool, then (once a
 * tool answered) gives a final answer; a rehearsal (no tools) rehearses `{"ok": true}`. Three
 * requests an episode, the same answers every run.
 */
function scriptedReply(request: ChatRequest): ChatReply {
  const tools = request.tools as { function: { name: string } }[] | undefined;
  if (!tools?.length) return '<execution_result>\n{"ok": true}\n</execution_result>';
  if (request.messages.some((m) => m.role === 'tool')) return 'Done.';
  return {
    content: null,
    tool_calls: [
      {
        id: 'call_1',
        type: 'function',
        function: { name: tools[0].function.name, arguments: '{}' },
      },
    ],
  };
}

/** Episodes of a trace's events that started, and those of them that ended. */
function episodeState(events: readonly TraceEvent[]): { started: string[]; ended: Set<string> } {
  const started: string[] = [];
  const ended = new Set<string>();
  for (const e of events)
    if (e.type === 'episode') started.push(e.episodeId);
    else if (e.type === 'episode.end') ended.add(e.episodeId);
  return { started, ended };
}

/** What {@link crashRunnerInFlight} saw: the episodes in flight and finished when it killed, and after. */
export interface InFlightCrash extends CrashReport {
  /** Episodes the trace showed started without their end when the kill was sent. */
  inFlightAtKill: number;
  /** Episodes whose end the killed trace holds, each checked whole. */
  finished: number;
}

/**
 * Kills a real `rehearse run --concurrency 8` (an endpoint policy: a local stand-in model, real
 * built-in MCP servers) once its trace shows 8 episodes started without their ends and at least one
 * finished, and checks the trace it left: it reads (at most a torn last line skipped), every
 * finished episode is whole (its events from `episode` to `episode.end`, in order, exactly as in an
 * uninterrupted run), and every other episode is a prefix of its uninterrupted self. The endpoint
 * answers 30 requests, then holds every later one, so the 8 slots end up waiting on it with their
 * episodes open: the kill comes at that moment or, on a fast machine, while answers still flow.
 */
export async function crashRunnerInFlight(options: { scratch: string }): Promise<InFlightCrash> {
  ensureServerBundles();
  const report: InFlightCrash = { ...newCrashReport(), inFlightAtKill: 0, finished: 0 };
  let answered = 0;
  let holding = false;
  let releaseHeld = (): void => undefined;
  const released = new Promise<void>((resolve) => (releaseHeld = resolve));
  const endpoint = await startChatServer(async (request) => {
    if (holding && ++answered > ANSWERED) await released;
    return scriptedReply(request);
  });
  const policy = [
    '--policy',
    endpoint.url,
    '--model',
    'scripted',
    '--episodes',
    String(EPISODES_PER_TASK),
    '--concurrency',
    String(IN_FLIGHT),
  ];
  try {
    const referenceOut = path.join(options.scratch, 'reference');
    const done = await startGroup(runArgv(referenceOut, policy), { cwd: REPO }).exited;
    if (done.code !== 0) throw new Error(`the uninterrupted run failed (exit ${done.code})`);
    const expected = streams((await readTraceEvents((await onlyTrace(referenceOut))!)).events);

    holding = true;
    const out = path.join(options.scratch, 'killed');
    const started = startGroup(runArgv(out, policy), { cwd: REPO });
    let exitedEarly = false;
    void started.exited.then(() => (exitedEarly = true));
    const deadline = performance.now() + 120_000;
    for (;;) {
      if (exitedEarly) throw new Error('the run ended before 8 of its episodes were in flight');
      if (performance.now() > deadline)
        throw new Error('the trace never showed 8 episodes in flight and one finished');
      const file = await onlyTrace(out);
      if (file) {
        const { started: began, ended } = episodeState((await readTraceEvents(file)).events);
        const open = began.filter((id) => !ended.has(id)).length;
        if (open === IN_FLIGHT && ended.size > 0) {
          killGroup(started.child.pid);
          report.inFlightAtKill = open;
          break;
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const exit = await started.exited;
    report.kills++;
    if (exit.signal !== 'SIGKILL') report.violations.push(`the run was not killed (${exit.code})`);

    const file = (await onlyTrace(out))!;
    const events: TraceEvent[] = [];
    const read = await readTrace(file, { onEvent: (e) => events.push(e) });
    const lines = (await fs.readFile(file, 'utf8')).split('\n').filter((l) => l.trim() !== '');
    checkOnlyTornLastLine(read.skipped, lines.length, 'the killed run', report);
    const { ended } = episodeState(events);
    report.finished = ended.size;
    for (const [stream, got] of streams(events)) {
      const whole = expected.get(stream) ?? [];
      if (ended.has(stream) && got.length !== whole.length)
        report.violations.push(
          `finished episode ${stream} holds ${got.length} of its ${whole.length} events`,
        );
      const mismatch = firstPrefixMismatch(got, whole);
      if (mismatch >= 0)
        report.violations.push(
          `event ${mismatch + 1} of ${stream} differs from the uninterrupted run's: ${got[mismatch].slice(0, 200)}`,
        );
    }
    report.recordsChecked += events.length;
    return report;
  } finally {
    releaseHeld();
    await endpoint.close();
  }
}
