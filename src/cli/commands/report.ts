import { StudioError } from '../../core/base/errors';
import { buildBfclAccuracy, renderBfclAccuracy } from '../../core/report/bfclAccuracy';
import { buildFidelityReport } from '../../core/report/fidelityReport';
import { resolveTraceArgument } from '../../core/trace/format/discover';
import type { CliIO } from '../io';
import { palette } from '../../core/report/textFormat';
import { renderReport } from '../../core/report/reportText';

/**
 * `rehearse report <trace...> [--calls] [--json] [--format fidelity|bfcl]`: the fidelity summary of
 * traces, or BFCL-v4 accuracy per multi-turn category.
 */
export async function reportCommand(
  traces: string[],
  options: { json?: boolean; calls?: boolean; format?: string },
  io: CliIO,
): Promise<number> {
  const format = options.format ?? 'fidelity';
  if (format !== 'fidelity' && format !== 'bfcl')
    throw new StudioError('USAGE', `--format must be fidelity or bfcl, not "${format}".`);
  const files = (await Promise.all(traces.map(resolveTraceArgument))).flat();
  if (format === 'bfcl') {
    const accuracy = await buildBfclAccuracy(files);
    io.out(options.json ? JSON.stringify(accuracy, null, 2) : renderBfclAccuracy(accuracy));
    return 0;
  }
  const report = await buildFidelityReport(files, { listCalls: options.calls });
  io.out(options.json ? JSON.stringify(report, null, 2) : renderReport(report, palette(io.color)));
  return 0;
}
