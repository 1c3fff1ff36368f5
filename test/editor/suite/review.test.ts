import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { activeDiffTab, closeAllEditors, freshShadowRun, row, studio, waitUntil } from './helpers';

describe('Review Mismatches', () => {
  beforeEach(closeAllEditors);
  after(async () => {
    await vscode.commands.executeCommand('rehearsal.reviewStop');
    await closeAllEditors();
  });

  it('walks the unannotated calls whose rehearsal missed, least faithful first; one key marks, accepts or skips; it resumes where it stopped', async () => {
    const api = await studio();
    const runId = '20261202-100000-shadow-review';
    const file = await freshShadowRun(api, runId);
    const review = () => api.services.review!;
    const showing = async (callId: string, progress: string) => {
      await waitUntil([review().onDidChange], `the review on ${callId}`, () => {
        assert.equal(review().current?.callId, callId);
        assert.equal(review().progress, progress);
      });
      assert.match(
        activeDiffTab().tab.label,
        new RegExp(`${callId.replace(/\./g, '\\.')}: rehearsed ↔ actual`),
      );
    };
    // From the run's row in the Trace Explorer, as its context menu does.
    await vscode.commands.executeCommand(
      'rehearsal.reviewMismatches',
      (await row(api, runId)).node,
    );
    await showing('e2.t3.c1', '0 / 4 reviewed');
    assert.equal(
      review().current?.suggestedKind,
      'format_error',
      'a rehearsal that did not parse: its kind preselected',
    );
    // A on a rehearsal that did not parse is refused and said (issue 27: it accepted without a word).
    assert.doesNotMatch(api.services.review!.statusText, /A accept/);
    await vscode.commands.executeCommand('rehearsal.reviewAccept');
    assert.match(
      review().refusal ?? '',
      /e2\.t3\.c1 did not parse \(NO_EXECUTION_RESULT_TAG_FOUND\)/,
    );
    assert.equal((await api.services.annotations.ensure(file)).size, 0, 'nothing accepted');
    assert.equal(review().current?.callId, 'e2.t3.c1');
    await vscode.commands.executeCommand('rehearsal.reviewMark');
    await showing('e1.t3.c1', '1 / 4 reviewed');
    await vscode.commands.executeCommand('rehearsal.reviewSkip');
    await showing('e3.t1.c1', '2 / 4 reviewed');
    // T opens the Trajectory beside the diff, which keeps the focus, so the one-key bindings
    // (`editorTextFocus && resourceScheme == rehearsal-call`) go on working (issue 27).
    await vscode.commands.executeCommand('rehearsal.reviewTrajectory');
    await waitUntil(
      [vscode.window.tabGroups.onDidChangeTabs, vscode.window.tabGroups.onDidChangeTabGroups],
      'the Trajectory of e3 beside the diff',
      () => {
        const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
        const trajectory = tabs.find((t) => t.label.startsWith('Trajectory e3 '));
        assert.ok(trajectory, `no Trajectory e3 tab: ${tabs.map((t) => t.label).join(', ')}`);
        assert.notEqual(trajectory.group, vscode.window.tabGroups.activeTabGroup);
      },
    );
    assert.equal(
      vscode.window.activeTextEditor?.document.uri.scheme,
      'rehearsal-call',
      'the diff still has the focus',
    );
    assert.match(activeDiffTab().tab.label, /e3\.t1\.c1: rehearsed ↔ actual/);
    await vscode.commands.executeCommand('rehearsal.reviewAccept');
    await showing('e1.t2.c1', '3 / 4 reviewed');
    // A key pressed in another call's diff does not mark the call under review.
    await api.services.callDiffs.show(file, 'e2.t1.c1', { preview: false });
    const before = (await api.services.annotations.ensure(file)).size;
    await vscode.commands.executeCommand('rehearsal.reviewMark');
    assert.equal((await api.services.annotations.ensure(file)).size, before, 'nothing marked');
    assert.equal(review().current?.callId, 'e1.t2.c1');
    await vscode.commands.executeCommand('rehearsal.reviewStop');
    assert.equal(review().active, false);

    const set = await api.services.annotations.ensure(file);
    assert.deepEqual(
      set.all().map((a) => [a.callId, a.verdict, a.kind, a.severity]),
      [
        ['e2.t3.c1', 'error', 'format_error', 'major'],
        ['e3.t1.c1', 'acceptable', undefined, undefined],
      ],
    );
    // Started again, it resumes: the marked, accepted and skipped calls are not offered again.
    await vscode.commands.executeCommand('rehearsal.reviewMismatches', { file });
    await showing('e1.t2.c1', '3 / 4 reviewed');
    await vscode.commands.executeCommand('rehearsal.reviewMark');
    await waitUntil([review().onDidChange], 'the end of the review', () =>
      assert.equal(review().active, false),
    );
    // Two differences ($.status changed, $.fulfillments missing): no single kind to suggest.
    assert.deepEqual(
      (await api.services.annotations.ensure(file)).all().map((a) => a.callId),
      ['e2.t3.c1', 'e3.t1.c1', 'e1.t2.c1'],
    );
    assert.equal((await api.services.annotations.ensure(file)).all().at(-1)?.kind, 'other');
  });
});
