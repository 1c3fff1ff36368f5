// Many episodes at once: the same tasks played at N = 1 and N = 8 by the scripted ONNX policy (a real
// policy host) against a real MCP server give the same episodes, and every reader of a trace (report,
// run summary, explorer tree, call diff, compare, export, annotate) answers the same for the
// interleaved trace as for the sequential one. Also the worker pool, the argument and ids in private
// rehearsal.
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { callSideDocument } from '../../src/core/explorer/callDocument';
import { traceTreeChildren } from '../../src/core/explorer/tree';
import type { TraceTreeNode } from '../../src/core/explorer/tree';
import { buildFidelityReport } from '../../src/core/report/fidelityReport';
import { compareRuns } from '../../src/core/report/compareRuns';
import { runSummary } from '../../src/core/report/runSummary';
import type { TraceEvent } from '../../src/core/trace/format/schema';
import { TraceLibrary } from '../../src/core/trace/index/library';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import { exportRows } from '../../src/core/training/exportRows';
import { rehearse } from '../support/cli';
import { compareIds } from '../../src/core/trace/format/ids';
import { loadCallView } from '../../src/core/trace/index/callView';
import { OK_CASE, REFUSED_CASE, REHEARSAL_ERROR_CASES, probeTask } from '../support/scriptedModel';
import type { CheckedRun } from '../support/runnerFixture';
import { TEST_MAX_TOKENS, useRuns, useScriptedPolicy } from '../support/runnerFixture';
import { readCheckedTrace } from '../support/traceChecks';
import { replayTrace } from '../../src/core/runner/replay';

/**
 * What may differ between two plays of the same episodes: times, speeds, the run's own id and file,
 * and `reused` (prompt tokens read from an episode's KV cache: a speed counter that depends on what
 * else the policy host holds at the time).
 */
const VOLATILE = new Set([
  'ts',
  'latencyMs',
  'prefillMs',
  'decodeMs',
  'durationMs',
  'runId',
  'elapsedMs',
  'file',
  'reused',
  'actTokensPerSecond',
]);

function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !VOLATILE.has(k))
        .map(([k, v]) => [k, stable(v)]),
    );
  return value;
}

/** Each episode's events in its own order, times left out. */
function byEpisode(events: readonly TraceEvent[]): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>();
  for (const e of events) {
    const id = 'episodeId' in e ? e.episodeId : undefined;
    if (!id) continue;
    if (!out.has(id)) out.set(id, []);
    out.get(id)!.push(stable(e));
  }
  return new Map([...out.entries()].sort(([a], [b]) => a.localeCompare(b)));
}

/** True when some episode starts before an earlier one has ended: the events really interleave. */
function interleaves(events: readonly TraceEvent[]): boolean {
  const open = new Set<string>();
  for (const e of events) {
    if (e.type === 'episode') {
      if (open.size > 0) return true;
      open.add(e.episodeId);
    }
    if (e.type === 'episode.end') open.delete(e.episodeId);
  }
  return false;
}

describe('runner: many episodes at once', function () {
  this.timeout(300_000);
  const scripted = useScriptedPolicy();
  const { run } = useRuns();
  const tasks = () => [
    probeTask(OK_CASE.case),
    probeTask(REFUSED_CASE.case),
    ...Object.values(REHEARSAL_ERROR_CASES).map((c) => probeTask(c.case)),
  ];
  let one: CheckedRun;
  let eight: CheckedRun;
  before(async () => {
    one = await run(scripted(), tasks(), { episodesPerTask: 2 }, { concurrency: 1 });
    eight = await run(scripted(), tasks(), { episodesPerTask: 2 }, { concurrency: 8 });
  });

  it('N = 1 and N = 8 play the same episodes: the events are equal but for times and order', () => {
    assert.equal(one.summary.status, 'completed');
    assert.equal(eight.summary.status, 'completed');
    assert.ok(!interleaves(one.trace.events), 'N = 1 plays one episode after another');
    assert.ok(interleaves(eight.trace.events), 'N = 8 has episodes in flight together');
    assert.ok(one.trace.episodes.length >= 8, `${one.trace.episodes.length} episodes`);
    assert.deepEqual(byEpisode(eight.trace.events), byEpisode(one.trace.events));
    // The summary lists the episodes in the plan's order, whatever order they ended in.
    assert.deepEqual(eight.summary.episodes, one.summary.episodes);
  });

  it('the fidelity report, the run summary and the explorer tree are the same for both', async () => {
    const report = async (file: string) => {
      const r = await buildFidelityReport([file], { listCalls: true });
      return stable({ ...r, traces: r.traces.length });
    };
    assert.deepEqual(await report(eight.summary.traceFile), await report(one.summary.traceFile));

    const [a, b] = await Promise.all([
      TraceIndex.open(one.summary.traceFile),
      TraceIndex.open(eight.summary.traceFile),
    ]);
    const summaryOf = (index: TraceIndex) => {
      const s = runSummary(index);
      return stable({ ...s, traceFile: undefined, title: undefined });
    };
    assert.deepEqual(summaryOf(b), summaryOf(a));

    // Every call's two sides, as the call diff shows them.
    const diffs = (index: TraceIndex) =>
      Promise.all(
        [...index.callIds()].sort().map(async (id) => {
          const view = await loadCallView(index, id);
          return [
            id,
            callSideDocument(view, 'rehearsal').text,
            callSideDocument(view, 'actual').text,
          ];
        }),
      );
    assert.deepEqual(await diffs(b), await diffs(a));

    // Comparing the two runs finds every call in both and no call that changed.
    const comparison = compareRuns(a, b, (i) => (i === a ? 'N=1' : 'N=8'));
    assert.equal(comparison.pairs.length, 0, JSON.stringify(comparison.pairs).slice(0, 400));
    assert.equal(comparison.matchedCalls, a.callIds().length);
    for (const t of comparison.tasks) assert.deepEqual(stable(t.b), stable(t.a), t.taskId);

    const library = new TraceLibrary();
    try {
      await library.setFiles([one.summary.traceFile, eight.summary.traceFile]);
      const tree = (file: string) => {
        const walk = (node: TraceTreeNode | undefined, depth: number): unknown[] =>
          traceTreeChildren(library, node)
            .filter((n) => node !== undefined || n.id?.includes(path.basename(path.dirname(file))))
            .map((n) => ({
              label: node === undefined ? 'run' : n.label,
              description: node === undefined ? undefined : n.description,
              children: depth < 3 ? walk(n, depth + 1) : [],
            }));
        return walk(undefined, 0);
      };
      const sequential = tree(one.summary.traceFile);
      assert.equal(sequential.length, 1, 'the run node');
      assert.ok(
        JSON.stringify(sequential).includes('probe-notag'),
        'the tree reaches the episodes and their calls',
      );
      assert.deepEqual(tree(eight.summary.traceFile), sequential);
    } finally {
      library.dispose();
    }
  });

  it('export writes the same rows in the same order, and annotate marks the same calls', async () => {
    const rows = async (file: string) => {
      const out: DatasetRow[] = [];
      await exportRows([file], { actSource: 'rollout', policyRehearsals: true }, (r) =>
        out.push(r),
      );
      return out.map((r) => stable(r));
    };
    assert.deepEqual(await rows(eight.summary.traceFile), await rows(one.summary.traceFile));

    const marked = async (file: string) => {
      const res = await rehearse('annotate', file, '--mismatches', '--author', 'test', '--json');
      assert.equal(res.code, 0, res.err);
      const lines = (await fs.readFile(path.join(path.dirname(file), 'annotations.jsonl'), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { callId: string; kind: string });
      return lines.map((l) => [l.callId, l.kind]).sort();
    };
    const markedOne = await marked(one.summary.traceFile);
    assert.ok(markedOne.length > 0, 'some rehearsals missed');
    assert.deepEqual(await marked(eight.summary.traceFile), markedOne);
  });

  it('replay re-rehearses an interleaved trace the same at N = 1 and N = 8', async () => {
    const replayed = async (concurrency: number) => {
      const summary = await replayTrace({
        source: eight.summary.traceFile,
        runsDir: path.dirname(path.dirname(eight.summary.traceFile)),
        policy: scripted(),
        settings: { maxTokens: TEST_MAX_TOKENS },
        concurrency,
      });
      assert.equal(summary.status, 'completed');
      return { summary, trace: await readCheckedTrace(summary.traceFile) };
    };
    const a = await replayed(1);
    const b = await replayed(8);
    assert.ok(interleaves(b.trace.events), 'N = 8 replays episodes together');
    assert.deepEqual(byEpisode(b.trace.events), byEpisode(a.trace.events));
    assert.deepEqual(b.summary.episodes, a.summary.episodes);
    assert.deepEqual(
      a.summary.episodes.map((e) => e.episodeId),
      one.summary.episodes.map((e) => e.episodeId),
    );
  });

  it('stopping the run with episodes in flight ends each of them with its end event; the trace reads', async () => {
    const abort = new AbortController();
    let most = 0;
    const { summary, trace } = await run(
      scripted(),
      tasks(),
      { episodesPerTask: 4 },
      {
        concurrency: 6,
        signal: abort.signal,
        onProgress: (p) => {
          most = Math.max(most, p.inFlight ?? 0);
          if ((p.inFlight ?? 0) >= 4) abort.abort();
        },
      },
    );
    assert.ok(most >= 4, `${most} in flight at most`);
    assert.equal(summary.status, 'cancelled');
    assert.ok(trace.episodes.length < tasks().length * 4, 'episodes not started stay unplayed');
    assert.deepEqual(
      trace.ends.map((e) => e.episodeId).sort(compareIds),
      trace.episodes.map((e) => e.episodeId).sort(compareIds),
      'every episode that started has its end',
    );
    assert.ok(trace.ends.some((e) => e.status === 'cancelled'));
  });

  it('a server that cannot start fails only the episodes that needed it; the others in flight go on', async () => {
    const broken = probeTask(OK_CASE.case, undefined, 'probe-broken-server');
    broken.task.servers = {
      probe: { type: 'stdio', command: path.join(os.tmpdir(), 'no-such-server-binary') },
    };
    const { summary } = await run(
      scripted(),
      [probeTask(OK_CASE.case), broken, probeTask(REFUSED_CASE.case)],
      { episodesPerTask: 3 },
      { concurrency: 4 },
    );
    assert.equal(summary.status, 'completed');
    assert.deepEqual(
      summary.episodes.map((e) => [e.taskId, e.status]),
      [
        ...Array(3).fill(['probe-ok', 'completed']),
        ...Array(3).fill(['probe-broken-server', 'failed']),
        ...Array(3).fill(['probe-refused', 'completed']),
      ],
    );
  });

  it('private rehearsal at N = 4 names and plays its episodes as at N = 1', async () => {
    const settings = {
      mode: 'private' as const,
      privateRehearsal: { budget: 2, order: 'parallel' as const },
    };
    const few = tasks().slice(0, 3);
    const a = await run(scripted(), few, settings, { concurrency: 1 });
    const b = await run(scripted(), few, settings, { concurrency: 4 });
    assert.equal(b.summary.status, 'completed');
    assert.deepEqual(
      b.summary.episodes.map((e) => e.episodeId),
      ['e3', 'e6', 'e9'],
      'each task owns budget + 1 ids: its committed episode is the last',
    );
    assert.deepEqual(byEpisode(b.trace.events), byEpisode(a.trace.events));
  });
});
