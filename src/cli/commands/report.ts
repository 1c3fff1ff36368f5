import { StudioError } from '../../core/base/errors';
import { buildBfclAccuracy, renderBfclAccuracy } from '../../core/report/bfclAccuracy';
import { buildFidelityReport } from '../../core/report/fidelityReport';
import { buildTau2Report, renderTau2Report } from '../../core/report/tau2Metrics';
import { resolveTraceArgument } from '../../core/trace/format/discover';
import type { CliIO } from '../io';
import { palette } from '../../core/report/textFormat';
import { renderReport } from '../../core/report/reportText';

/**
 * `rehearse report <trace...> [--calls] [--json] [--format fidelity|bfcl|tau2]`: the fidelity
 * summary of traces, BFCL-v4 accuracy per multi-turn category, or τ²-bench's reward and pass^k per
 * domain with the model that played the user.
 */
export async function reportCommand(
  traces: string[],
  options: { json?: boolean; calls?: boolean; format?: string },
  io: CliIO,
): Promise<number> {
  const format = options.format ?? 'fidelity';
  if (format !== 'fidelity' && format !== 'bfcl' && format !== 'tau2')
    throw new StudioError('USAGE', `--format must be fidelity, bfcl or tau2, not "${format}".`);
  const files = (await Promise.all(traces.map(resolveTraceArgument))).flat();
  if (format === 'tau2') {
    const metrics = await buildTau2Report(files);
    io.out(options.json ? JSON.stringify(metrics, null, 2) : renderTau2Report(metrics));
    return 0;
  }
  if (format === 'bfcl') {
    const accuracy = await buildBfclAccuracy(files);
    io.out(options.json ? JSON.stringify(accuracy, null, 2) : renderBfclAccuracy(accuracy));
    return 0;
  }
  const report = await buildFidelityReport(files, { listCalls: options.calls });
  io.out(options.json ? JSON.stringify(report, null, 2) : renderReport(report, palette(io.color)));
  return 0;
}
