import { buildFidelityReport } from '../../core/report/fidelityReport';
import { resolveTraceArgument } from '../../core/trace/format/discover';
import type { CliIO } from '../io';
import { palette } from '../../core/report/textFormat';
import { renderReport } from '../../core/report/reportText';

/** `rehearse report <trace...> [--calls] [--json]`: the fidelity summary of traces. */
export async function reportCommand(
  traces: string[],
  options: { json?: boolean; calls?: boolean },
  io: CliIO,
): Promise<number> {
  const files = (await Promise.all(traces.map(resolveTraceArgument))).flat();
  const report = await buildFidelityReport(files, { listCalls: options.calls });
  io.out(options.json ? JSON.stringify(report, null, 2) : renderReport(report, palette(io.color)));
  return 0;
}
