import { StudioError } from '../../core/base/errors';
import { assertValidId } from '../../core/trace/ids';
import { loadCallView } from '../../core/trace/callView';
import { resolveTraceArgument } from '../../core/trace/discover';
import { TraceIndex } from '../../core/trace/traceIndex';
import type { CliIO } from '../io';
import { palette } from '../../core/report/textFormat';
import { renderCallDiff } from '../render/diffText';

/** `rehearse diff <trace> --call <id> [--json]`: one call's rehearsal against its actual response. */
export async function diffCommand(trace: string, options: { call?: string; json?: boolean }, io: CliIO): Promise<number> {
  if (!options.call) throw new StudioError('USAGE', 'Missing --call <id>: which call to diff (e.g. --call e1.t2.c1; `rehearse report --calls <trace>` lists them).');
  assertValidId(options.call, 'call');
  const files = await resolveTraceArgument(trace);
  if (files.length > 1) throw new StudioError('USAGE', `${trace} holds ${files.length} traces; pass one trace.jsonl or run folder.`);
  const index = await TraceIndex.build(files[0]);
  const view = await loadCallView(index, options.call);
  if (options.json) {
    io.out(JSON.stringify({ call: view.entry, rehearsal: view.rehearsal ?? null, actual: view.actual ?? null, comparison: view.comparison }, null, 2));
  } else {
    io.out(renderCallDiff(view, palette(io.color)));
  }
  return 0;
}
