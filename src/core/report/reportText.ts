import type { FidelityReport } from './fidelityReport';
import type { Palette } from './textFormat';
import { percent, renderTable, score } from './textFormat';

const MAX_SKIPPED_SHOWN = 20;

/** The human-readable fidelity report. */
export function renderReport(report: FidelityReport, c: Palette): string {
  const out: string[] = [];
  for (const t of report.traces) {
    out.push(`${c.bold(t.runId ?? '(no run event)')}  ${c.dim(t.file)}`);
    out.push(`  ${t.events} events${t.mode ? `, mode ${t.mode}` : ''}${t.skipped.length ? c.error(`, ${t.skipped.length} skipped line(s)`) : ''}`);
    for (const s of t.skipped.slice(0, MAX_SKIPPED_SHOWN)) out.push(c.dim(`    line ${s.line}: ${s.reason}`));
    if (t.skipped.length > MAX_SKIPPED_SHOWN) out.push(c.dim(`    ... and ${t.skipped.length - MAX_SKIPPED_SHOWN} more`));
  }
  out.push('');
  const success = report.graded ? ` · success ${percent(report.successes, report.graded)} (${report.successes}/${report.graded})` : '';
  const reward = report.meanReward !== null ? ` · mean reward ${score(report.meanReward)}` : '';
  out.push(`${report.episodes} episodes${success}${reward}`);
  out.push(`${report.turns} turns · act parse validity ${percent(report.actParseValid, report.turns)}`);
  out.push(`${report.calls} calls · ${report.rehearsed} rehearsed (parse validity ${percent(report.rehearsalParseValid, report.rehearsed)}) · ${report.withActual} with actual · ${report.overall.compared} compared`);
  const errs = [
    ...Object.entries(report.parseErrors.act).map(([k, n]) => `act ${k} ×${n}`),
    ...Object.entries(report.parseErrors.rehearsal).map(([k, n]) => `rehearsal ${k} ×${n}`),
    ...Object.entries(report.actualErrors).map(([k, n]) => `actual ${k} ×${n}`),
  ];
  if (errs.length) out.push(c.error(`errors: ${errs.join(', ')}`));
  out.push('');
  const o = report.overall;
  out.push(`fidelity: exact ${score(o.exactMatch)} · field F1 ${score(o.fieldF1)} · key Jaccard ${score(o.keyJaccard)} · types ${score(o.typeAgreement)} · error state ${score(o.errorAgreement)}`);
  if (report.perTool.length) {
    out.push('');
    out.push(renderTable(
      ['tool', 'calls', 'compared', 'exact', 'field F1', 'keys', 'types', 'error st.', 'parse err'],
      report.perTool.map((t) => [t.tool, String(t.calls), String(t.compared), score(t.exactMatch), score(t.fieldF1), score(t.keyJaccard), score(t.typeAgreement), score(t.errorAgreement), String(t.rehearsalParseErrors)]),
    ));
  }
  if (report.callList) {
    out.push('');
    out.push(renderTable(['call', 'tool', 'field F1', 'outcome', 'run'], report.callList.map((r) => [r.callId, r.tool, score(r.fieldF1), r.outcome, runOf(report, r.file)])));
  }
  return out.join('\n');
}

function runOf(report: FidelityReport, file: string): string {
  return report.traces.find((t) => t.file === file)?.runId ?? file;
}
