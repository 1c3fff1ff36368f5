import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { parseSummaryMessage, runSummary } from '../../src/core/report/runSummary';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import { runCli } from '../../src/cli/program';
import type { FidelityReport } from '../../src/core/report/fidelityReport';
import { sampleShadowRun } from '../builders/samples';
import { useTempDir } from '../support/tempDir';

describe("run summary (the Run Summary panel's data)", () => {
  const tmp = useTempDir();

  it("has the run's metrics as `rehearse report` counts them, fidelity per tool, and a row per episode", async () => {
    const file = path.join(tmp(), 'trace.jsonl');
    await sampleShadowRun().write(file);
    const s = runSummary(await TraceIndex.build(file));
    const out: string[] = [];
    await runCli(['report', '--json', file], {
      out: (l) => out.push(l),
      err: () => undefined,
      color: false,
    });
    const report = JSON.parse(out.join('\n')) as FidelityReport;
    assert.deepEqual(
      [
        s.metrics.episodes,
        s.metrics.graded,
        s.metrics.successes,
        s.metrics.meanReward,
        s.metrics.turns,
        s.metrics.actParseValid,
        s.metrics.calls,
        s.metrics.rehearsed,
        s.metrics.rehearsalParseValid,
        s.metrics.scored,
      ],
      [
        report.episodes,
        report.graded,
        report.successes,
        report.meanReward,
        report.turns,
        report.actParseValid,
        report.calls,
        report.rehearsed,
        report.rehearsalParseValid,
        report.overall.compared,
      ],
    );
    assert.equal(s.metrics.exact / s.metrics.scored, report.overall.exactMatch);
    assert.deepEqual(
      [s.runId, s.mode, s.device, s.status],
      ['20261129-120000-shadow-sample', 'shadow', 'cpu', 'completed'],
    );
    // Every sample turn records 40 completion tokens in 120 ms.
    assert.equal(s.metrics.actTokensPerSecond?.toFixed(1), '333.3');
    assert.deepEqual(
      s.perTool.map((t) => [t.tool, t.calls, t.scored, t.rehearsalParseErrors]),
      [
        ['cancel_pending_order', 1, 1, 0],
        ['find_user_id_by_email', 3, 2, 0],
        ['get_order_details', 3, 2, 1],
      ],
    );
    const e = s.episodes;
    assert.deepEqual(e.episodeIds, ['e1', 'e2', 'e3']);
    assert.deepEqual(
      e.outcomes,
      ['failure · reward 0.50', 'success · reward 1.00', 'failed (TOOL_TIMEOUT)'],
      "the tree's words",
    );
    assert.deepEqual(
      [e.turns, e.calls, e.parseErrors],
      [
        [4, 4, 2],
        [3, 2, 2],
        [0, 2, 0],
      ],
    );
    // The worst call: a rehearsal that did not parse (-1) before any score.
    assert.deepEqual(
      [e.worstCallIds, e.worstFieldF1],
      [
        ['e1.t3.c1', 'e2.t3.c1', 'e3.t1.c1'],
        [0, -1, 0],
      ],
    );
    assert.ok(
      e.durationMs.every((d) => d !== null && d > 0),
      'each ended episode has a duration from its timestamps',
    );
  });

  it('takes only the messages the panel may send', () => {
    assert.ok(
      parseSummaryMessage({
        type: 'request',
        id: 1,
        request: { method: 'openEpisode', episodeId: 'e1' },
      }),
    );
    assert.equal(
      parseSummaryMessage({ type: 'request', id: 1, request: { method: 'runTask' } }),
      undefined,
    );
    assert.equal(
      parseSummaryMessage({ type: 'rendered', rows: -1, shown: 0, total: 0 }),
      undefined,
    );
  });
});
