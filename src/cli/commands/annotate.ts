import * as os from 'node:os';
import { StudioError } from '../../core/base/errors';
import {
  annotationsFileFor,
  appendAnnotationEvent,
  newAnnotationId,
  readAnnotations,
  withAnnotationsLock,
} from '../../core/annotations/store';
import type { AnnotationSeverity } from '../../core/annotations/schema';
import { ANNOTATION_SEVERITIES } from '../../core/annotations/schema';
import { buildFidelityReport } from '../../core/report/fidelityReport';
import { resolveOneTrace } from '../../core/trace/format/discover';
import type { CliIO } from '../io';

/** Options of `rehearse annotate`. */
export interface AnnotateArgs {
  mismatches?: boolean;
  severity?: string;
  tools?: string;
  author?: string;
  json?: boolean;
}

/**
 * `rehearse annotate <trace> --mismatches [--severity S] [--tools a,b]`: marks, as a person would one
 * by one in the editor, every call whose rehearsal missed (did not parse, or differs from the actual
 * response) as a fidelity error of the kind the editor preselects for it, in the run's
 * annotations.jsonl. Calls that already carry an annotation are left as they are, so running it again
 * adds nothing and a person's marks win.
 */
export async function annotateCommand(
  trace: string,
  args: AnnotateArgs,
  io: CliIO,
): Promise<number> {
  if (!args.mismatches)
    throw new StudioError(
      'USAGE',
      'Say which calls to mark: --mismatches marks every call whose rehearsal missed. (Single calls are marked in the editor.)',
    );
  const severity = (args.severity ?? 'major') as AnnotationSeverity;
  if (!ANNOTATION_SEVERITIES.includes(severity))
    throw new StudioError(
      'USAGE',
      `--severity must be one of ${ANNOTATION_SEVERITIES.join(', ')}, got ${JSON.stringify(args.severity)}.`,
    );
  const files = [await resolveOneTrace(trace)];
  const tools = args.tools
    ? new Set(
        args.tools
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
      )
    : undefined;
  const file = annotationsFileFor(files[0]);
  const report = await buildFidelityReport(files, { listCalls: true });
  const author = args.author ?? (os.userInfo().username || 'rehearse annotate');
  const counts: Record<string, number> = {};
  let kept = 0;
  // What is already marked is read under the lock: a second annotate of the same run waits, then
  // finds this one's marks and leaves those calls as they are.
  await withAnnotationsLock(file, async () => {
    const existing = (await readAnnotations(file)).annotatedCalls();
    for (const row of report.callList ?? []) {
      const kind = row.suggestedKind;
      if (!kind || (tools && !tools.has(row.tool))) continue;
      if (existing.has(row.callId)) {
        kept++;
        continue;
      }
      await appendAnnotationEvent(file, {
        type: 'mark',
        id: newAnnotationId(),
        author,
        callId: row.callId,
        tool: row.tool,
        kind,
        severity,
        note: `marked by rehearse annotate --mismatches: ${row.outcome}`,
      });
      counts[kind] = (counts[kind] ?? 0) + 1;
    }
  });
  const marked = Object.values(counts).reduce((a, b) => a + b, 0);
  if (args.json)
    io.out(
      JSON.stringify(
        { annotations: file, marked, byKind: counts, alreadyAnnotated: kept, calls: report.calls },
        null,
        2,
      ),
    );
  else
    io.out(
      `marked ${marked} of ${report.calls} calls as ${severity} fidelity errors${
        marked
          ? ` (${Object.entries(counts)
              .map(([k, n]) => `${n} ${k}`)
              .join(', ')})`
          : ''
      }${kept ? `; ${kept} already annotated, left as they are` : ''}\nannotations: ${file}`,
    );
  return 0;
}
