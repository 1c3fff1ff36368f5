import { StudioError } from '../../core/base/errors';
import { assertValidId } from '../../core/trace/format/ids';
import { loadCallView } from '../../core/trace/index/callView';
import { resolveOneTrace } from '../../core/trace/format/discover';
import { TraceIndex } from '../../core/trace/index/traceIndex';
import type { CliIO } from '../io';
import { palette } from '../../core/report/textFormat';
import { renderCallDiff } from '../render/diffText';

/** The least faithful call that both sides answered (lowest field F1, error-state disagreements first). */
export function worstComparedCall(index: TraceIndex): string | undefined {
  const scored = index
    .calls()
    .flatMap((c) => (c.scores ? [{ callId: c.callId, scores: c.scores }] : []));
  scored.sort(
    (a, b) =>
      Number(a.scores.errorAgreement) - Number(b.scores.errorAgreement) ||
      a.scores.fieldF1 - b.scores.fieldF1,
  );
  return scored[0]?.callId;
}

/** `rehearse diff <trace> --call <id>|--worst [--json]`: one call's rehearsal against its actual response. */
export async function diffCommand(
  trace: string,
  options: { call?: string; worst?: boolean; json?: boolean },
  io: CliIO,
): Promise<number> {
  if (!options.call && !options.worst)
    throw new StudioError(
      'USAGE',
      'Missing --call <id> (e.g. --call e1.t2.c1; `rehearse report --calls <trace>` lists them), or --worst.',
    );
  if (options.call) assertValidId(options.call, 'call');
  const files = [await resolveOneTrace(trace)];
  const index = await TraceIndex.open(files[0]);
  const callId = options.call ?? worstComparedCall(index);
  if (!callId)
    throw new StudioError(
      'NO_COMPARED_CALL',
      `${files[0]} has no call with both a rehearsal and an actual response to compare.`,
    );
  const view = await loadCallView(index, callId);
  if (options.json) {
    io.out(
      JSON.stringify(
        {
          call: view.entry,
          rehearsal: view.rehearsal ?? null,
          actual: view.actual ?? null,
          comparison: view.comparison,
        },
        null,
        2,
      ),
    );
  } else {
    io.out(renderCallDiff(view, palette(io.color)));
  }
  return 0;
}
