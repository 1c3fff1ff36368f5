import * as vscode from 'vscode';
import { activeCallTarget } from '../traces/diffDecorations';
import { executeCommand, registerCommand, showError } from '../../registerCommand';
import type { Services } from '../../services';
import type { ReviewSession } from './reviewSession';
import { ensureTrusted } from '../../trust';
import { pickTrace } from '../../pickers';

/** *Review Mismatches* and its one-key actions. */
export function registerReviewFeatures(context: vscode.ExtensionContext, services: Services): void {
  registerReviewCommands(context, services);
  registerReviewKeys(context, services);
}

/** Start, stop, the call's Trajectory and the status bar's menu of a review. */
function registerReviewCommands(context: vscode.ExtensionContext, services: Services): void {
  const { review } = services;
  context.subscriptions.push(
    registerCommand('rehearsal.reviewMismatches', async (target) => {
      if (!ensureTrusted('review and annotate calls')) return;
      const file =
        target && 'file' in target
          ? target.file
          : await pickTrace(services, 'Which run do you want to review?');
      if (!file) return;
      await review.start(file);
    }),
    registerCommand('rehearsal.reviewStop', () => {
      if (review.active)
        review.stop(
          `Rehearsal: review stopped at ${review.progress}; Review Mismatches resumes it.`,
        );
    }),
    registerCommand('rehearsal.reviewTrajectory', async () => {
      const c = review.current;
      if (!c) return;
      const view = await services.callDiffs.load(c.file, c.callId);
      // Beside the diff, which keeps the focus: M, A, S and T go on working (issue 27: after T the
      // keys went to the panel while the status bar still offered them).
      await executeCommand('rehearsal.openTrajectory', {
        file: c.file,
        episodeId: view.entry.episodeId,
        callId: c.callId,
        beside: true,
      });
    }),
    registerCommand('rehearsal.reviewActions', () => pickReviewAction(review)),
  );
}

/** M, A and S: mark, accept or skip the call under review. */
function registerReviewKeys(context: vscode.ExtensionContext, services: Services): void {
  const { review } = services;
  const act = (what: string, step: () => Promise<void>) => async () => {
    if (!review.active) return;
    // The one-key bindings work in any call diff: a key pressed in another call's diff than the
    // one under review must not annotate the call under review.
    const shown = activeCallTarget();
    const current = review.current;
    if (shown && current && (shown.file !== current.file || shown.callId !== current.callId)) {
      void vscode.window.showInformationMessage(
        `Rehearsal: the review is on ${current.callId}; this diff shows ${shown.callId}. Nothing was marked.`,
      );
      return;
    }
    try {
      await step();
    } catch (err) {
      showError(err, { prefix: `cannot ${what} ${review.current?.callId ?? ''}: ` });
    }
  };
  context.subscriptions.push(
    registerCommand(
      'rehearsal.reviewMark',
      act('mark', () => review.mark()),
    ),
    registerCommand(
      'rehearsal.reviewAccept',
      act('accept', () => review.accept()),
    ),
    registerCommand(
      'rehearsal.reviewSkip',
      act('skip', () => review.skip()),
    ),
  );
}

/** The status bar's menu: the review's keys, each with what it does. */
async function pickReviewAction(review: ReviewSession): Promise<void> {
  const c = review.current;
  if (!c) return;
  const items: (vscode.QuickPickItem & { run: () => Thenable<unknown> })[] = [
    {
      label: '$(report) Mark as fidelity error',
      description: 'M',
      detail: `kind ${c.suggestedKind}, severity major`,
      run: () => executeCommand('rehearsal.reviewMark'),
    },
    ...(c.parseError
      ? []
      : [
          {
            label: '$(check) Rehearsal acceptable',
            description: 'A',
            run: () => executeCommand('rehearsal.reviewAccept'),
          },
        ]),
    {
      label: '$(arrow-right) Skip',
      description: 'S',
      run: () => executeCommand('rehearsal.reviewSkip'),
    },
    {
      label: '$(list-flat) Open Trajectory',
      description: 'T',
      run: () => executeCommand('rehearsal.reviewTrajectory'),
    },
    {
      label: '$(close) Stop reviewing',
      description: 'Escape',
      run: () => executeCommand('rehearsal.reviewStop'),
    },
  ];
  const picked = await vscode.window.showQuickPick(items, {
    title: `Review ${review.progress}: ${c.tool} ${c.callId}`,
  });
  await picked?.run();
}
