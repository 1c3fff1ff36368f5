import { canonicalJson } from '../../core/base/canonicalJson';
import type { JsonValue } from '../../core/base/json';
import { unifiedDiff } from '../../core/fidelity/textDiff';
import { responseText } from '../../core/fidelity/scores';
import type { CallView } from '../../core/trace/index/callView';
import { callArguments } from '../../core/trace/index/callView';
import type { Palette } from '../../core/report/textFormat';
import { score } from '../../core/report/textFormat';

const MAX_VALUE_CHARS = 120;

function short(v: JsonValue | undefined): string {
  const text = canonicalJson(v ?? null);
  return text.length > MAX_VALUE_CHARS ? text.slice(0, MAX_VALUE_CHARS - 1) + '…' : text;
}

/** A call's diff for the terminal: header, scores, the differing paths, then a unified diff. */
export function renderCallDiff(view: CallView, c: Palette): string {
  const out: string[] = [];
  const e = view.entry;
  out.push(c.bold(`call ${e.callId}  ${e.tool}`) + c.dim('  rehearsal (−) vs actual (+)'));
  const args = callArguments(view);
  if (args !== undefined) out.push(c.dim(`arguments ${short(args)}`));
  if (view.rehearsal && !view.rehearsal.result.ok) {
    out.push(
      c.error(
        `rehearsal parse error ${view.rehearsal.result.code}: ${view.rehearsal.result.message}`,
      ),
    );
    out.push(c.dim('raw rehearsal:'));
    out.push(view.rehearsal.text);
  }
  if (view.actual?.error)
    out.push(c.error(`actual error ${view.actual.error.code}: ${view.actual.error.message}`));
  const cmp = view.comparison;
  if (cmp.comparable === 'none') {
    out.push(c.dim(`not comparable: ${cmp.reason}`));
    return out.join('\n');
  }
  const s = cmp.scores;
  out.push(
    `exact ${s.exactMatch ? 'yes' : 'no'} · field F1 ${score(s.fieldF1)} · key Jaccard ${score(s.keyJaccard)} · types ${score(s.typeAgreement)} · error state ${s.errorAgreement ? 'agrees' : 'disagrees'}`,
  );
  if (cmp.comparable === 'json') {
    if (cmp.diff.length === 0) out.push(c.added('identical'));
    else {
      out.push('');
      const width = Math.min(48, Math.max(...cmp.diff.map((d) => d.path.length)));
      for (const d of cmp.diff) {
        const p = d.path.padEnd(width);
        if (d.kind === 'added')
          out.push(c.added(`+ ${p}  missing in rehearsal: ${short(d.actual)}`));
        else if (d.kind === 'removed')
          out.push(c.removed(`- ${p}  not in actual: ${short(d.rehearsal)}`));
        else if (d.kind === 'typeChanged')
          out.push(c.changed(`~ ${p}  type ${short(d.rehearsal)} → ${short(d.actual)}`));
        else out.push(c.changed(`~ ${p}  ${short(d.rehearsal)} → ${short(d.actual)}`));
      }
    }
  }
  if (view.rehearsalValue && view.actualValue && !s.exactMatch) {
    out.push('');
    const patch = unifiedDiff(
      responseText(view.rehearsalValue) + '\n',
      responseText(view.actualValue) + '\n',
    );
    const lines = patch.split('\n');
    const firstHunk = lines.findIndex((l) => l.startsWith('@@'));
    for (const line of firstHunk < 0 ? [] : lines.slice(firstHunk)) {
      if (line.startsWith('+')) out.push(c.added(line));
      else if (line.startsWith('-')) out.push(c.removed(line));
      else if (line.startsWith('@@')) out.push(c.dim(line));
      else out.push(line);
    }
  }
  return out.join('\n').trimEnd();
}
