import * as vscode from 'vscode';
import type { MarkInput } from '../../../core/annotations/library';
import type {
  Annotation,
  AnnotationKind,
  AnnotationSeverity,
} from '../../../core/annotations/schema';
import {
  ANNOTATION_KINDS,
  ANNOTATION_KIND_DESCRIPTIONS,
  ANNOTATION_KIND_LABELS,
  ANNOTATION_SEVERITIES,
  ANNOTATION_SEVERITY_DESCRIPTIONS,
} from '../../../core/annotations/schema';
import { suggestedCallKind, suggestedKind } from '../../../core/annotations/suggest';
import type { CallView } from '../../../core/trace/index/callView';

type Item<T> = vscode.QuickPickItem & { value: T };

/** One choice from a list, with an item active (Enter takes it); undefined when dismissed. */
async function pickOne<T>(
  items: Item<T>[],
  active: T | undefined,
  title: string,
  placeholder: string,
): Promise<T | undefined> {
  const qp = vscode.window.createQuickPick<Item<T>>();
  qp.title = title;
  qp.placeholder = placeholder;
  qp.items = items;
  qp.matchOnDescription = true;
  const activeItem = items.find((i) => i.value === active);
  if (activeItem) qp.activeItems = [activeItem];
  qp.ignoreFocusOut = true;
  return new Promise<T | undefined>((resolve) => {
    let done = false;
    qp.onDidAccept(() => {
      done = true;
      resolve(qp.selectedItems[0]?.value ?? qp.activeItems[0]?.value);
      qp.hide();
    });
    qp.onDidHide(() => {
      if (!done) resolve(undefined);
      qp.dispose();
    });
    qp.show();
  });
}

/** Asks for the kind of error, with `suggested` first and active. */
export function pickKind(
  suggested: AnnotationKind,
  title: string,
  current?: AnnotationKind,
): Promise<AnnotationKind | undefined> {
  const order = [suggested, ...ANNOTATION_KINDS.filter((k) => k !== suggested)];
  return pickOne(
    order.map((k) => ({
      label: ANNOTATION_KIND_LABELS[k],
      description: k === suggested ? 'suggested' : k === current ? 'current' : undefined,
      detail: ANNOTATION_KIND_DESCRIPTIONS[k],
      value: k,
    })),
    current ?? suggested,
    title,
    'What kind of fidelity error is it?',
  );
}

/** Asks for the severity, `major` active unless another is current. */
export function pickSeverity(
  title: string,
  current?: AnnotationSeverity,
): Promise<AnnotationSeverity | undefined> {
  return pickOne(
    ANNOTATION_SEVERITIES.map((s) => ({
      label: s,
      detail: ANNOTATION_SEVERITY_DESCRIPTIONS[s],
      description: s === current ? 'current' : undefined,
      value: s,
    })),
    current ?? 'major',
    title,
    'How much does it matter?',
  );
}

/** Asks for a note; Enter with nothing typed means no note; undefined when dismissed. */
export async function askNote(title: string, value = ''): Promise<string | undefined> {
  return vscode.window.showInputBox({
    title,
    value,
    prompt:
      'A note for whoever reads this later (optional): what was wrong, what the tool really does.',
    placeHolder: 'e.g. guessed "pending"; the order had been delivered',
    ignoreFocusOut: true,
  });
}

/**
 * Asks what is wrong with a call: which path (when not given, and the diff has any), the kind
 * (suggested from the difference), the severity and a note. Undefined when the person gives up.
 */
export async function promptMark(
  view: CallView,
  preset: { path?: string; kind?: AnnotationKind; severity?: AnnotationSeverity; note?: string },
): Promise<Omit<MarkInput, 'callId'> | undefined> {
  const title = `Mark ${view.entry.tool} ${view.entry.callId}`;
  const target = { episodeId: view.entry.episodeId, tool: view.entry.tool };
  // Everything given (a command's arguments, the Trajectory panel): nothing to ask.
  if (preset.kind && preset.severity) {
    return {
      kind: preset.kind,
      severity: preset.severity,
      ...(preset.path ? { path: preset.path } : {}),
      ...(preset.note?.trim() ? { note: preset.note.trim() } : {}),
      ...target,
    };
  }
  const diff = view.comparison.comparable === 'json' ? view.comparison.diff : [];
  let path = preset.path;
  if (path === undefined && diff.length > 0) {
    const WHOLE = '';
    const chosen = await pickOne<string>(
      [
        {
          label: '$(symbol-object) The whole call',
          description: 'the rehearsal as a whole',
          value: WHOLE,
        },
        ...diff.map((d) => ({
          label: d.path,
          description:
            d.kind === 'added'
              ? 'missing from the rehearsal'
              : d.kind === 'removed'
                ? 'invented by the rehearsal'
                : d.kind === 'typeChanged'
                  ? 'type differs'
                  : 'value differs',
          value: d.path,
        })),
        // A call-level mark means the call: the whole of it comes first and is preselected (a path's
        // own mark, from its CodeLens or the cursor, gives its path and never asks).
      ],
      WHOLE,
      `${title}: where?`,
      'Which JSON path is wrong? (Enter: the whole call)',
    );
    if (chosen === undefined) return undefined;
    path = chosen || undefined;
  }
  const entry = path ? diff.find((d) => d.path === path) : undefined;
  const kind = await pickKind(
    preset.kind ?? (entry ? suggestedKind(entry.kind) : suggestedCallKind(view)),
    `${title}${path ? ` at ${path}` : ''}: kind`,
  );
  if (!kind) return undefined;
  const severity = preset.severity ?? (await pickSeverity(`${title}: severity`));
  if (!severity) return undefined;
  const note = preset.note ?? (await askNote(`${title}: note`));
  if (note === undefined) return undefined;
  return {
    kind,
    severity,
    ...(path ? { path } : {}),
    ...(note.trim() ? { note: note.trim() } : {}),
    ...target,
  };
}

/** Asks what to change in an annotation and to what; undefined when dismissed. */
export async function promptEdit(
  a: Annotation,
): Promise<{ kind?: AnnotationKind; severity?: AnnotationSeverity; note?: string } | undefined> {
  const title = `Edit annotation on ${a.tool ?? ''} ${a.callId}`.replace('  ', ' ');
  if (a.verdict === 'acceptable') {
    const note = await askNote(`${title}: note`, a.note);
    return note === undefined ? undefined : { note };
  }
  const what = await pickOne<'kind' | 'severity' | 'note'>(
    [
      { label: 'Kind', description: ANNOTATION_KIND_LABELS[a.kind ?? 'other'], value: 'kind' },
      { label: 'Severity', description: a.severity, value: 'severity' },
      { label: 'Note', description: a.note || '(none)', value: 'note' },
    ],
    'note',
    title,
    'What do you want to change?',
  );
  if (what === 'kind') {
    const kind = await pickKind(a.kind ?? 'other', `${title}: kind`, a.kind);
    return kind ? { kind } : undefined;
  }
  if (what === 'severity') {
    const severity = await pickSeverity(`${title}: severity`, a.severity);
    return severity ? { severity } : undefined;
  }
  if (what === 'note') {
    const note = await askNote(`${title}: note`, a.note);
    return note === undefined ? undefined : { note };
  }
  return undefined;
}
