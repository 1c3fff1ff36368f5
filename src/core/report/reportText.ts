import type { EpisodeTally, FidelityReport, TraceSummary } from './fidelityReport';
import type { NotEvaluatedChecks } from '../tasks/checks/notEvaluated';
import { notEvaluatedParticulars } from '../tasks/checks/notEvaluated';
import { clip } from '../base/clip';
import { policyLabel } from '../trace/format/policyLabel';
import type { Palette } from './textFormat';
import { counted } from '../base/counted';
import { percent, renderTable, score } from './textFormat';

const MAX_SKIPPED_SHOWN = 20;
const MAX_TASKS_SHOWN = 3;
const MAX_INSTRUCTION_SHOWN = 160;

/** A trace's header lines: run id and file, mode, events and policy, the tasks it played. */
function traceHeader(t: TraceSummary, c: Palette): string[] {
  const out = [`${c.bold(t.runId ?? '(no run event)')}  ${c.dim(t.file)}`];
  const facts = [
    t.mode ? `${t.mode} mode` : undefined,
    counted(t.events, 'event'),
    t.policy ? `policy: ${policyLabel(t.policy, t.file)}` : undefined,
  ].filter(Boolean);
  out.push(
    `  ${facts.join(' · ')}${t.skippedCount ? c.error(` · ${counted(t.skippedCount, 'skipped line')}`) : ''}`,
  );
  for (const s of t.skipped.slice(0, MAX_SKIPPED_SHOWN))
    out.push(c.dim(`    line ${s.line}: ${s.reason}`));
  if (t.skippedCount > MAX_SKIPPED_SHOWN)
    out.push(c.dim(`    ... and ${t.skippedCount - MAX_SKIPPED_SHOWN} more`));
  for (const task of t.tasks.slice(0, MAX_TASKS_SHOWN)) {
    const text = (task.instruction ?? '').replace(/\s+/g, ' ').trim();
    const shown =
      text.length > MAX_INSTRUCTION_SHOWN ? `${text.slice(0, MAX_INSTRUCTION_SHOWN - 1)}…` : text;
    out.push(`  task ${task.taskId}${shown ? `: ${c.dim(shown)}` : ''}`);
  }
  if (t.taskCount > MAX_TASKS_SHOWN)
    out.push(c.dim(`  ... and ${counted(t.taskCount - MAX_TASKS_SHOWN, 'more task')}`));
  return out;
}

/**
 * One line of episode outcomes. A reward covers only the checks that were evaluated, so the line
 * says which were not (an imagined trajectory has no real state to check).
 */
function episodeLine(label: string, t: EpisodeTally): string {
  const success = t.graded
    ? ` · success ${percent(t.successes, t.graded)} (${t.successes}/${t.graded})`
    : '';
  const reward =
    t.meanReward !== null
      ? ` · mean reward ${score(t.meanReward)}${t.notEvaluated.length ? ' over the checks evaluated' : ''}`
      : '';
  const skipped = t.notEvaluated.map(
    (n) => `${counted(n.count, `${n.kind} check`)} not evaluated: ${notEvaluatedText(n)}`,
  );
  return `${label}${success}${reward}${skipped.length ? ` (${skipped.join('; ')})` : ''}`;
}

/**
 * Why checks were not evaluated: the one detail they share, or their reason and the first one's
 * particulars (a judge's text, an error) where those differ.
 */
export function notEvaluatedText(n: NotEvaluatedChecks): string {
  if (!n.varied) return n.detail.replace(/^not evaluated(: )?/, '') || n.reason;
  const first = notEvaluatedParticulars(n.detail);
  return first ? `${n.reason} (first: ${clip(first, 120)})` : n.reason;
}

/** The human-readable fidelity report. */
export function renderReport(report: FidelityReport, c: Palette): string {
  const out: string[] = [];
  for (const t of report.traces) out.push(...traceHeader(t, c));
  out.push('');
  if (report.rehearsals) {
    out.push(episodeLine(counted(report.episodes, 'committed episode'), report));
    out.push(
      episodeLine(
        `${counted(report.rehearsals.episodes, 'imagined episode')} (private rehearsal, not the run's result)`,
        report.rehearsals,
      ),
    );
  } else {
    out.push(episodeLine(counted(report.episodes, 'episode'), report));
  }
  out.push(
    `${counted(report.turns, 'turn')} · act parse validity ${percent(report.actParseValid, report.turns)}`,
  );
  out.push(
    `${counted(report.calls, 'call')} · ${report.rehearsed} rehearsed (parse validity ${percent(report.rehearsalParseValid, report.rehearsed)}) · ${report.withActual} with actual · ${report.overall.compared} compared`,
  );
  const errs = [
    ...report.notPlayed.map((n) => `not played ${n.code} ×${n.count}`),
    ...Object.entries(report.parseErrors.act).map(([k, n]) => `act ${k} ×${n}`),
    ...Object.entries(report.parseErrors.rehearsal).map(([k, n]) => `rehearsal ${k} ×${n}`),
    ...Object.entries(report.actualErrors).map(([k, n]) => `actual ${k} ×${n}`),
  ];
  if (errs.length) out.push(c.error(`errors: ${errs.join(', ')}`));
  out.push('');
  const o = report.overall;
  out.push(
    `fidelity: exact ${score(o.exactMatch)} · field F1 ${score(o.fieldF1)} · key Jaccard ${score(o.keyJaccard)} · types ${score(o.typeAgreement)} · error state ${score(o.errorAgreement)}`,
  );
  if (report.perTool.length) {
    out.push('');
    out.push(
      renderTable(
        [
          'tool',
          'calls',
          'compared',
          'exact',
          'field F1',
          'keys',
          'types',
          'error st.',
          'parse err',
        ],
        report.perTool.map((t) => [
          t.tool,
          String(t.calls),
          String(t.compared),
          score(t.exactMatch),
          score(t.fieldF1),
          score(t.keyJaccard),
          score(t.typeAgreement),
          score(t.errorAgreement),
          String(t.rehearsalParseErrors),
        ]),
      ),
    );
  }
  if (report.callList) {
    out.push('');
    // The run column tells calls of several traces apart; one trace's run is in its header.
    const several = report.traces.length > 1;
    out.push(
      renderTable(
        ['call', 'tool', 'field F1', 'outcome', ...(several ? ['run'] : [])],
        report.callList.map((r) => [
          r.callId,
          r.tool,
          score(r.fieldF1),
          r.outcome,
          ...(several ? [runOf(report, r.file)] : []),
        ]),
      ),
    );
  }
  return out.join('\n');
}

function runOf(report: FidelityReport, file: string): string {
  return report.traces.find((t) => t.file === file)?.runId ?? file;
}
