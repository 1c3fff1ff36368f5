import * as vscode from 'vscode';
import { suggestedCallKind } from '../../../core/annotations/suggest';
import { ANNOTATION_KIND_LABELS } from '../../../core/annotations/schema';
import type { ReviewQueueState } from '../../../core/explorer/reviewQueue';
import { reviewQueue } from '../../../core/explorer/reviewQueue';
import { Disposable } from '../../../core/base/disposable';
import { errorMessage } from '../../../core/base/errors';
import type { AnnotationLibrary } from '../../../core/annotations/library';
import type { TraceLibrary } from '../../../core/trace/index/library';
import type { CallDiffDocuments } from '../traces/callDiff';

/** The context key that is true while a review is under way (its one-key bindings). */
export const REVIEWING_CONTEXT = 'rehearsal.reviewing';

/** What a review shows of the call in front of the reviewer. */
export interface ReviewCurrent {
  file: string;
  callId: string;
  tool: string;
  /** The kind a one-key mark gives, from the call's diff (as `rehearse annotate --mismatches`). */
  suggestedKind: keyof typeof ANNOTATION_KIND_LABELS;
  /** The parse error's code when the rehearsal did not parse: such a rehearsal cannot be acceptable. */
  parseError?: string;
}

/** What a review reads and writes: the traces, their annotations and the call diffs (a part of the services). */
export interface ReviewServices {
  library: TraceLibrary;
  annotations: AnnotationLibrary;
  callDiffs: CallDiffDocuments;
}

/**
 * *Review Mismatches*: walks a run's calls whose rehearsal missed and that nobody annotated yet,
 * least faithful first, each in its diff, and marks (kind preselected from the diff, severity
 * major), accepts or skips each with one key (`M`, `A`, `S`; `T` opens its Trajectory, `Escape`
 * stops). Marks go to the run's annotations.jsonl and skips to the workspace's state, so a review
 * started again resumes where it stopped. Progress reads "12 / 137 reviewed".
 */
export class ReviewSession extends Disposable {
  private readonly status = this._register(
    vscode.window.createStatusBarItem('rehearsal.review', vscode.StatusBarAlignment.Left, 50),
  );
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  /** Fires when the call under review or the progress changes (tests wait on it). */
  readonly onDidChange = this.changed.event;
  private file: string | undefined;
  private state: ReviewQueueState | undefined;
  current: ReviewCurrent | undefined;

  constructor(
    private readonly services: ReviewServices,
    private readonly memento: vscode.Memento,
  ) {
    super();
    this.status.name = 'Rehearsal review';
    this.status.command = 'rehearsal.reviewActions';
  }

  /** "12 / 137 reviewed", or undefined when no review is under way. */
  /** What the status bar offers for the call under review. */
  get statusText(): string {
    return this.status.text;
  }

  get progress(): string | undefined {
    return this.state ? `${this.state.reviewed} / ${this.state.total} reviewed` : undefined;
  }

  /** What the last refused key said (tests read it). */
  refusal: string | undefined;

  get active(): boolean {
    return this.file !== undefined;
  }

  /** Starts (or resumes) the review of a run and shows its first pending call. */
  async start(file: string): Promise<void> {
    this.file = file;
    await this.services.annotations.ensure(file);
    await this.showNext();
  }

  /** Marks the call under review with its suggested kind, severity major, and moves on. */
  async mark(): Promise<void> {
    const c = this.current;
    if (!c) return;
    await this.services.annotations.mark(c.file, {
      callId: c.callId,
      tool: c.tool,
      kind: c.suggestedKind,
      severity: 'major',
    });
    await this.showNext();
  }

  /** Marks the call's rehearsal acceptable, and moves on; a rehearsal that did not parse is refused, said. */
  async accept(): Promise<void> {
    const c = this.current;
    if (!c) return;
    if (c.parseError) {
      this.refusal = `Rehearsal: the rehearsal of ${c.callId} did not parse (${c.parseError}), so it cannot be acceptable: M marks it (${ANNOTATION_KIND_LABELS[c.suggestedKind]}), S skips it.`;
      void vscode.window.showWarningMessage(this.refusal);
      return;
    }
    await this.services.annotations.accept(c.file, { callId: c.callId, tool: c.tool });
    await this.showNext();
  }

  /** Leaves the call unannotated (it is not offered again in this workspace), and moves on. */
  async skip(): Promise<void> {
    const c = this.current;
    if (!c) return;
    await this.memento.update(this.skipKey(c.file), [...this.skipped(c.file), c.callId]);
    await this.showNext();
  }

  /** Ends the review; what was marked and skipped is kept. */
  stop(message?: string): void {
    if (message) void vscode.window.showInformationMessage(message);
    this.file = undefined;
    this.state = undefined;
    this.current = undefined;
    this.status.hide();
    void vscode.commands.executeCommand('setContext', REVIEWING_CONTEXT, false);
    this.changed.fire();
  }

  private skipKey(file: string): string {
    return `rehearsal.review.skipped:${file}`;
  }

  private skipped(file: string): string[] {
    return this.memento.get<string[]>(this.skipKey(file), []);
  }

  private async showNext(): Promise<void> {
    const file = this.file;
    if (!file) return;
    const index =
      this.services.library.index(file) ?? (await this.services.library.ensureIndex(file));
    if (!index)
      return this.stop(
        `Rehearsal: cannot review ${file}: ${this.services.library.failure(file) ?? 'it could not be read'}.`,
      );
    const annotated = (await this.services.annotations.ensure(file)).annotatedCalls();
    const skipped = new Set(this.skipped(file));
    this.state = reviewQueue(index, (id) => annotated.has(id) || skipped.has(id));
    const next = this.state.pending[0];
    if (!next) {
      const done =
        this.state.total === 0
          ? 'Rehearsal: this run has no call whose rehearsal missed.'
          : `Rehearsal: review done, ${this.progress}.`;
      return this.stop(done);
    }
    try {
      const view = await this.services.callDiffs.load(file, next);
      this.current = {
        file,
        callId: next,
        tool: view.entry.tool,
        suggestedKind: suggestedCallKind(view),
        ...(view.rehearsal && !view.rehearsal.result.ok
          ? { parseError: view.rehearsal.result.code }
          : {}),
      };
      await this.services.callDiffs.show(file, next, { preview: true });
    } catch (err) {
      return this.stop(`Rehearsal: cannot show ${next}: ${errorMessage(err)}`);
    }
    const kind = ANNOTATION_KIND_LABELS[this.current.suggestedKind];
    this.status.text = `$(checklist) Review ${this.progress} · M mark (${kind})${this.current.parseError ? '' : ' · A accept'} · S skip · T trajectory · Esc stop`;
    this.status.tooltip = `Reviewing the calls whose rehearsal missed, least faithful first: ${this.current.tool} ${next}. Click for the actions.`;
    this.status.show();
    await vscode.commands.executeCommand('setContext', REVIEWING_CONTEXT, true);
    this.changed.fire();
  }
}
