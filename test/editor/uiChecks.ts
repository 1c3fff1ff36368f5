/**
 * Checks of what a person sees, through the workbench DOM in a real browser: the Trace Explorer's
 * rows and badges, a call's diff opened by clicking its row, the fidelity report run from the
 * command palette, marking a fidelity error through a CodeLens and its quick picks, the Annotations
 * view, the Trajectory panel (its webview's DOM) and its controls, and a built-in task run from the
 * palette, a window reload that restores the Trajectory panel, and the Get Started walkthrough.
 * Each check builds on the one before, so the first failure ends the list.
 */
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Locator } from 'playwright-core';
import { sampleAfterRun } from '../builders/samples';
import { PRIVATE_RUN_OUTCOMES, recordPrivateRun } from '../builders/privateRun';
import { SAMPLE_RUN_IDS } from '../builders/sampleWorkspace';
import { runIdShort } from '../../src/core/trace/format/ids';
import { weatherRows } from '../support/trainingRows';
import type { RenderedRow, Workbench } from './workbench';

/** What one check did. */
export interface UiCheckResult {
  name: string;
  ok: boolean;
  durationMs: number;
  error?: string;
}

/** Where the UI checks write screenshots, and how long they wait for the workbench. */
export interface UiCheckOptions {
  screenshots: string;
  loadTimeoutMs: number;
  log: (line: string) => void;
  /** The workspace the page has open (the checks read the files the editor writes there). */
  workspace: string;
  /** A small model folder to train from (the scripted test model); without it the training check is skipped. */
  model?: string;
}

/** The annotation events written for a run of the workspace. */
async function annotationEvents(
  workspace: string,
  runId: string,
): Promise<Record<string, unknown>[]> {
  const text = await fs
    .readFile(path.join(workspace, '.rehearsal', 'runs', runId, 'annotations.jsonl'), 'utf8')
    .catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const SHADOW = SAMPLE_RUN_IDS.shadow;

/** Runs the UI checks on a page that has the workbench open with the UI fixture workspace. */
export async function runUiChecks(
  workbench: Workbench,
  options: UiCheckOptions,
): Promise<UiCheckResult[]> {
  const { page } = workbench;
  const shot = (name: string) =>
    page.screenshot({ path: path.join(options.screenshots, `${name}.png`) });
  const explorer = workbench.pane('Trace Explorer');

  const checks: [string, () => Promise<void>][] = [
    [
      'the Rehearsal activity bar entry opens the Trace Explorer with every run',
      async () => {
        await workbench.waitUntilLoaded(options.loadTimeoutMs);
        await workbench.openViewContainer('Rehearsal');
        await workbench
          .treeRows(explorer)
          .filter({ hasText: runIdShort(SAMPLE_RUN_IDS.imagine) })
          .waitFor({ timeout: options.loadTimeoutMs });
        await eventually(async () => {
          const rows = await workbench.readRows(explorer);
          const runs = rows.filter((r) => r.level === 1);
          assert.deepEqual(
            runs.map((r) => [r.label, r.description]),
            [
              [
                'shadow-crashed',
                '1/3 success · models/default · 1 skipped line · 2026-11-29 13:00',
              ],
              ['shadow-sample', '1/3 success · models/default · 2026-11-29 12:00'],
              ['imagine-sample', '1/1 success · models/default · 2026-11-29 11:30'],
            ],
            describeRows(rows),
          );
          // Issue 27: at the default side bar width the run id filled the row and hid the rest. The
          // mode (the label's first word) and the success count are seen (the policy next, cut).
          for (const r of runs)
            assert.match(
              r.shownDescription,
              /^\d\/\d success · /,
              `${r.label}: seen "${r.shownDescription}" of "${r.description}"`,
            );
        });
        await shot('trace-explorer');
      },
    ],

    [
      'runs open on their episodes; an episode opens on its turns and a turn on its calls, with badges',
      async () => {
        // Room for the badges, and only the shadow run open, so that its rows fit the side bar.
        await workbench.widenSideBar(160);
        await toggle(
          workbench,
          explorer,
          (r) => r.level === 1 && r.label === runIdShort(SAMPLE_RUN_IDS.torn),
          false,
        );
        await toggle(
          workbench,
          explorer,
          (r) => r.level === 1 && r.label === runIdShort(SAMPLE_RUN_IDS.imagine),
          false,
        );
        await eventually(async () => {
          const rows = await workbench.readRows(explorer);
          assert.deepEqual(
            childrenOf(rows, runIdShort(SHADOW)).map((r) => [r.label, r.description]),
            [
              ['e1 retail-test-0007', 'failure · reward 0.50'],
              ['e2 retail-test-0012', 'success · reward 1.00'],
              ['e3 retail-test-0031', 'failed (TOOL_TIMEOUT)'],
            ],
            describeRows(rows),
          );
        });
        await toggle(
          workbench,
          explorer,
          (r) => r.level === 2 && r.label === 'e1 retail-test-0007',
          true,
        );
        for (const turn of ['turn 1', 'turn 2', 'turn 3'])
          await toggle(workbench, explorer, (r) => r.level === 3 && r.label === turn, true);
        await toggle(
          workbench,
          explorer,
          (r) => r.level === 2 && r.label === 'e2 retail-test-0012',
          true,
        );
        await toggle(
          workbench,
          explorer,
          (r, i, all) =>
            r.level === 3 &&
            r.label === 'turn 3' &&
            parentLabel(all, i, 2) === 'e2 retail-test-0012',
          true,
        );
        await eventually(async () => {
          const rows = await workbench.readRows(explorer);
          assert.deepEqual(
            rows.filter((r) => r.level === 4).map((r) => [r.label, r.description]),
            [
              ['find_user_id_by_email', 'exact'],
              ['get_order_details', 'F1 0.78'],
              ['cancel_pending_order', 'F1 0.00 · error state differs'],
              ['get_order_details', 'parse error NO_EXECUTION_RESULT_TAG_FOUND'],
            ],
            describeRows(rows),
          );
        });
      },
    ],

    [
      'clicking the get_order_details call (F1 0.78) opens its diff: rehearsed "pending" left, actual "delivered" right',
      async () => {
        const rows = await workbench.readRows(explorer);
        const index = rows.findIndex(
          (r) => r.label === 'get_order_details' && r.description === 'F1 0.78',
        );
        await workbench.rowAt(explorer, index).click();
        await workbench.diffEditor().waitFor();
        await workbench.activeTab().filter({ hasText: 'get_order_details e1.t2.c1' }).waitFor();
        await page
          .locator('.monaco-diff-editor .editor.modified .view-lines', { hasText: 'delivered' })
          .waitFor();
        const left = await workbench.diffSideText('original');
        const right = await workbench.diffSideText('modified');
        assert.match(left, /"status": "pending"/, `left side:\n${left}`);
        assert.doesNotMatch(left, /"delivered"/, `left side:\n${left}`);
        assert.match(right, /"status": "delivered"/, `right side:\n${right}`);
        assert.match(right, /"fulfillments"/, `right side:\n${right}`);
        // Let the diff decorations and the status bar settle before the picture.
        await page
          .locator(
            '.monaco-diff-editor .editor.modified .line-insert, .monaco-diff-editor .editor.modified .char-insert',
          )
          .first()
          .waitFor();
        await workbench.settle(5000);
        await shot('trace-explorer-diff');
      },
    ],

    [
      '"Rehearsal: Show Fidelity Report" from the command palette asks for a run and opens its report',
      async () => {
        await workbench.runCommand('Rehearsal: Show Fidelity Report');
        await workbench.quickPickRows().filter({ hasText: SHADOW }).first().waitFor();
        await workbench.quickInput().fill(SHADOW);
        await workbench.quickPickRows().filter({ hasText: SHADOW }).first().waitFor();
        await page.keyboard.press('Enter');
        await page
          .locator('.part.editor .view-lines', { hasText: 'mean reward' })
          .first()
          .waitFor();
        const report = await workbench.activeEditorText();
        assert.match(report, new RegExp(`${SHADOW} `));
        assert.match(report, /3 episodes · success 33\.3% \(1\/3\) · mean reward 0\.50/);
        assert.match(report, /fidelity: exact 0\.40 · field F1 0\.56/);
        await shot('fidelity-report');
      },
    ],

    [
      '"Rehearsal: Show Call Diff" offers every call, least faithful first, and opens the one picked',
      async () => {
        await workbench.runCommand('Rehearsal: Show Call Diff');
        await workbench.quickPickRows().first().waitFor();
        const offered = await workbench.quickPickRows().allInnerTexts();
        assert.match(
          offered[0],
          /parse error|tool error/,
          `the first calls offered should be the failed ones:\n${offered.join('\n')}`,
        );
        await workbench.quickInput().fill('cancel_pending_order');
        await workbench.quickPickRows().filter({ hasText: SHADOW }).first().click();
        await workbench.activeTab().filter({ hasText: 'cancel_pending_order e1.t3.c1' }).waitFor();
        await page
          .locator('.monaco-diff-editor .editor.modified .view-lines', {
            hasText: 'Non-pending order cannot be cancelled',
          })
          .waitFor();
        assert.match(await workbench.diffSideText('original'), /"status": "cancelled"/);
      },
    ],

    [
      'a CodeLens in the call diff marks $.status through quick picks: kind (suggested), severity, note',
      async () => {
        await workbench.runCommand('Rehearsal: Show Call Diff');
        await workbench.quickInput().fill('e1.t2.c1');
        await workbench.quickPickRows().filter({ hasText: SHADOW }).first().click();
        await workbench.activeTab().filter({ hasText: 'get_order_details e1.t2.c1' }).waitFor();
        const lens = workbench
          .codeLenses('original')
          .filter({ hasText: 'Mark $.status (value differs)' });
        await lens.waitFor();
        // Each side renders its lenses on its own: wait for the actual side's, then count it.
        const added = workbench
          .codeLenses('modified')
          .filter({ hasText: 'Mark $.fulfillments (missing from the rehearsal)' });
        await added.waitFor();
        assert.equal(await added.count(), 1, 'the added field has its lens on the actual side');
        await lens.click();
        const suggested = workbench.quickPickRows().filter({ hasText: 'hallucinated value' });
        await suggested.filter({ hasText: 'suggested' }).waitFor();
        await page.keyboard.press('Enter');
        await workbench.quickPickRows().filter({ hasText: 'critical' }).waitFor();
        await page.keyboard.press('Enter'); // major is preselected
        await page.locator('.quick-input-widget .quick-input-title', { hasText: 'note' }).waitFor();
        await workbench.quickInput().fill('guessed pending; the order was delivered');
        await page.keyboard.press('Enter');
        await eventually(async () => {
          const events = await annotationEvents(options.workspace, SHADOW);
          assert.equal(events.length, 1, JSON.stringify(events));
          assert.deepEqual(
            [
              events[0].type,
              events[0].callId,
              events[0].path,
              events[0].kind,
              events[0].severity,
              events[0].note,
            ],
            [
              'mark',
              'e1.t2.c1',
              '$.status',
              'hallucinated_value',
              'major',
              'guessed pending; the order was delivered',
            ],
          );
        });
        await eventually(async () => {
          const rows = await workbench.readRows(explorer);
          assert.ok(
            rows.some((r) => r.label === 'get_order_details' && r.description === '⚑ 1 · F1 0.78'),
            describeRows(rows),
          );
        });
        await workbench.settle(3000);
        await shot('diff-annotated');
      },
    ],

    [
      'the Annotations view lists the mark, and clicking it opens the call at the annotated path',
      async () => {
        const annotationsPane = workbench.pane('Annotations');
        await eventually(async () => {
          const rows = await workbench.readRows(annotationsPane);
          assert.deepEqual(
            rows.map((r) => [r.label, r.description]),
            [
              [SHADOW, '1 error'],
              [
                'hallucinated value',
                'get_order_details e1.t2.c1 · $.status · major · “guessed pending; the order was delivered”',
              ],
            ],
            describeRows(rows),
          );
        });
        await workbench.closeEditors();
        assert.equal(
          await workbench.activeTab().count(),
          0,
          'every editor closed without asking to save (the report is read-only)',
        );
        await workbench.rowAt(annotationsPane, 1).click();
        await workbench.activeTab().filter({ hasText: 'get_order_details e1.t2.c1' }).waitFor();
        await page
          .locator('.monaco-diff-editor .editor.original .view-lines', { hasText: 'pending' })
          .waitFor();
        await workbench.settle(2000);
        await shot('annotations-view');
      },
    ],

    [
      '"Rehearsal: Open Trajectory" shows the episode as a timeline in a webview, rehearsed and actual side by side',
      async () => {
        await workbench.runCommand('Rehearsal: Open Trajectory');
        await workbench.activeTab().filter({ hasText: 'Trajectory e1' }).waitFor();
        const view = workbench.webview();
        const call = view.locator('[data-call-id="e1.t2.c1"]');
        await call.waitFor({ timeout: 30_000 });
        assert.match(await view.locator('header.episode h1').innerText(), /e1 · retail-test-0007/);
        assert.match(await view.locator('header.episode').innerText(), /failure · reward 0\.50/);
        assert.equal(
          await view.locator('.message.user p').first().innerText(),
          'Cancel my order #W2611340, I ordered it by mistake. My email is mia.garcia@example.com.',
        );
        assert.match(
          await call.locator('header').innerText(),
          /get_order_details\s+e1\.t2\.c1\s+F1 0\.78/,
        );
        assert.deepEqual(await call.locator('.side.rehearsal .line.k-changed').allInnerTexts(), [
          '  "status": "pending",\n',
        ]);
        assert.deepEqual(await call.locator('.side.actual .line.k-changed').allInnerTexts(), [
          '  "status": "delivered",\n',
        ]);
        assert.ok(
          (await call.locator('.side.actual .line.k-added').count()) >= 9,
          'the fulfillments the rehearsal missed are marked',
        );
        // Only the line where a differing path starts is filled; the rest of its value is outlined,
        // and nothing is struck through (a 40-line rehearsal in red strikethrough was unreadable).
        assert.equal(
          await call.locator('.side.actual .line.k-added:not(.body)').count(),
          1,
          'one filled line: "fulfillments"',
        );
        const struck = await view
          .locator('.side .line')
          .evaluateAll(
            (lines) =>
              lines.filter((l) => getComputedStyle(l).textDecorationLine.includes('line-through'))
                .length,
          );
        assert.equal(struck, 0, 'no line is struck through');
        // Each act, rehearsal and tool call has its time as a bar (against the episode's longest step).
        assert.match(await call.locator('.latency.rehearse').innerText(), /rehearse 90 ms/);
        assert.match(await call.locator('.latency.tool').innerText(), /tool 4 ms/);
        const widths = await view
          .locator('.latency .bar')
          .evaluateAll((bars) => bars.map((b) => (b as HTMLElement).style.width));
        assert.ok(
          widths.length >= 8 && widths.includes('100%') && widths.every((w) => /^\d+%$/.test(w)),
          widths.join(' '),
        );
        // The mark form is folded under each call until asked for.
        assert.equal(
          await view.locator('details.annotate-open[open]').count(),
          0,
          'no mark form is open at first',
        );
        assert.match(
          await call.locator('table.diff').innerText(),
          /\$\.status\s+value differs\s+"pending"\s+"delivered"/,
        );
        // A long value (the fulfillments the rehearsal missed) wraps in its column: the table stays
        // within the view and every "Mark..." is on screen (issue 27).
        const layout = await view.locator('table.diff').evaluateAll((tables) =>
          tables.map((t) => ({
            overflow: t.scrollWidth - (t.parentElement as HTMLElement).clientWidth,
            marksOut: Array.from(t.querySelectorAll('.mark-path')).filter(
              (b) => b.getBoundingClientRect().right > document.documentElement.clientWidth + 1,
            ).length,
          })),
        );
        assert.ok(layout.length > 0);
        for (const l of layout) {
          assert.ok(l.overflow <= 1, `a diff table is ${l.overflow}px wider than its place`);
          assert.equal(l.marksOut, 0, 'a Mark... button is out of the view');
        }
        assert.match(
          await call.locator('.annotations').innerText(),
          /⚑ hallucinated value \(major\) at \$\.status — guessed pending; the order was delivered/,
        );
        assert.match(
          await view.locator('[data-call-id="e1.t3.c1"] header').innerText(),
          /error state differs/,
        );
        await view.locator('header.episode').scrollIntoViewIfNeeded();
        await workbench.settle(500);
        await shot('trajectory-timeline');
        await call.scrollIntoViewIfNeeded();
        await shot('trajectory-panel');
      },
    ],

    [
      "the Trajectory panel's controls mark a call: the mark is written and shown",
      async () => {
        const view = workbench.webview();
        const call = view.locator('[data-call-id="e1.t3.c1"]');
        await call.scrollIntoViewIfNeeded();
        await call.locator('details.annotate-open > summary').click();
        await call.locator('details.annotate-open[open]').waitFor();
        await call
          .locator('vscode-textarea.note textarea')
          .fill('predicted a refund; the tool refused');
        await call.locator('vscode-button.mark').click();
        await eventually(async () => {
          const events = await annotationEvents(options.workspace, SHADOW);
          assert.equal(events.length, 2, JSON.stringify(events));
          assert.deepEqual(
            [events[1].type, events[1].callId, events[1].kind, events[1].severity, events[1].note],
            [
              'mark',
              'e1.t3.c1',
              'wrong_error_state',
              'major',
              'predicted a refund; the tool refused',
            ],
          );
        });
        await call.locator('.annotations', { hasText: 'wrong error state (major)' }).waitFor();
      },
    ],

    [
      'after "Developer: Reload Window" the Trajectory panel is restored on its episode, with the new mark',
      async () => {
        const reloaded = page.waitForEvent('load', { timeout: options.loadTimeoutMs });
        await workbench.runCommand('Developer: Reload Window');
        await reloaded;
        await workbench.waitUntilLoaded(options.loadTimeoutMs);
        await workbench
          .activeTab()
          .filter({ hasText: 'Trajectory e1' })
          .waitFor({ timeout: options.loadTimeoutMs });
        await workbench
          .webview()
          .locator('[data-call-id="e1.t3.c1"] .annotations', {
            hasText: 'wrong error state (major)',
          })
          .waitFor({ timeout: 30_000 });
        assert.match(
          await workbench.webview().locator('header.episode h1').innerText(),
          /e1 · retail-test-0007/,
        );
      },
    ],

    [
      '"Select Policy" and "Run Task" from the palette play a built-in sample task; its run and calls appear in the Trace Explorer',
      async () => {
        await workbench.pick('Rehearsal: Select Policy', {
          loaded: 'Reference solutions',
          query: 'Reference',
          row: 'Reference solutions',
        });
        await workbench.statusItem().filter({ hasText: 'reference' }).waitFor();
        await workbench.pick('Rehearsal: Run Task', {
          loaded: 'bank-0011',
          query: 'bank-0011',
          row: 'Transfer 105',
        });
        await workbench
          .notification(/completed, 1 episode, 1\/1 success · mean reward 1\.00/)
          .waitFor({ timeout: 60_000 });
        await workbench.openViewContainer('Rehearsal');
        let runLabel = '';
        await eventually(async () => {
          const rows = await workbench.readRows(explorer);
          const run = rows.find(
            (r) =>
              r.level === 1 &&
              r.label.startsWith('shadow-') &&
              /^1\/1 success · reference · /.test(r.description),
          );
          assert.ok(run, describeRows(rows));
          runLabel = run.label;
        });
        await toggle(
          workbench,
          explorer,
          (r) => r.level === 1 && r.label === runIdShort(SHADOW),
          false,
        );
        await toggle(workbench, explorer, (r) => r.level === 1 && r.label === runLabel, true);
        await toggle(workbench, explorer, (r) => r.level === 2 && r.label === 'e1 bank-0011', true);
        await toggle(
          workbench,
          explorer,
          (r, i, all) =>
            r.level === 3 && r.label === 'turn 1' && parentLabel(all, i, 2) === 'e1 bank-0011',
          true,
        );
        await eventually(async () => {
          const rows = await workbench.readRows(explorer);
          const calls = rows.filter(
            (r, i) => r.level === 4 && parentLabel(rows, i, 2) === 'e1 bank-0011',
          );
          assert.ok(
            calls.length >= 1 && calls.every((c) => c.description === 'not rehearsed'),
            describeRows(rows),
          );
        });
        await shot('run-from-palette');
      },
    ],

    [
      "in a narrow window with the default diff settings (inline diff, no lenses), the cursor's JSON path is marked from the palette",
      async () => {
        // The user's defaults: the diff goes inline when space is limited (the suite's settings keep it side by side).
        await fs.mkdir(path.join(options.workspace, '.vscode'), { recursive: true });
        await fs.writeFile(
          path.join(options.workspace, '.vscode', 'settings.json'),
          JSON.stringify({ 'diffEditor.useInlineViewWhenSpaceIsLimited': true }),
        );
        const size = page.viewportSize();
        await page.setViewportSize({ width: 820, height: size?.height ?? 800 });
        try {
          await workbench.closeEditors();
          await workbench.runCommand('Rehearsal: Show Call Diff');
          await workbench.quickInput().fill('e1.t2.c1');
          await workbench.quickPickRows().filter({ hasText: SHADOW }).first().click();
          await workbench.activeTab().filter({ hasText: 'get_order_details e1.t2.c1' }).waitFor();
          const tracking = page
            .locator('.monaco-diff-editor .editor.modified .view-line', {
              hasText: '"tracking_id"',
            })
            .first();
          await tracking.waitFor();
          await tracking.click();
          // A call-level mark offers the whole call first (it preselected a path, "$.fulfillments").
          await workbench.runCommand('Rehearsal: Mark Fidelity Error...');
          await page
            .locator('.quick-input-widget .quick-input-title', { hasText: 'where?' })
            .waitFor();
          await page
            .locator('.quick-input-list .monaco-list-row.focused', { hasText: 'The whole call' })
            .waitFor();
          await page.keyboard.press('Escape');
          await tracking.click();
          const before = (await annotationEvents(options.workspace, SHADOW)).length;
          await workbench.runCommand('Rehearsal: Mark JSON Path at Cursor as Fidelity Error');
          await page
            .locator('.quick-input-widget .quick-input-title', {
              hasText: '$.fulfillments[0].tracking_id',
            })
            .waitFor();
          await page.keyboard.press('Enter'); // the kind offered
          await workbench.quickPickRows().filter({ hasText: 'critical' }).waitFor();
          await page.keyboard.press('Enter'); // major
          await page
            .locator('.quick-input-widget .quick-input-title', { hasText: 'note' })
            .waitFor();
          await page.keyboard.press('Enter');
          await eventually(async () => {
            const events = await annotationEvents(options.workspace, SHADOW);
            assert.equal(events.length, before + 1, JSON.stringify(events));
            assert.deepEqual(
              [events[before].type, events[before].callId, events[before].path],
              ['mark', 'e1.t2.c1', '$.fulfillments[0].tracking_id'],
            );
          });
          await shot('narrow-mark');
        } finally {
          await page.setViewportSize(size ?? { width: 1400, height: 900 });
          await fs.rm(path.join(options.workspace, '.vscode', 'settings.json'), { force: true });
        }
      },
    ],
    [
      '"Show Run Summary" shows the run\'s metrics and its episodes in a table that sorts and opens an episode\'s Trajectory from the keyboard',
      async () => {
        await workbench.closeEditors();
        await workbench.pick('Rehearsal: Show Run Summary', {
          loaded: SHADOW,
          query: SHADOW,
          row: SHADOW,
        });
        await workbench
          .activeTab()
          .filter({ hasText: `Run ${SHADOW}` })
          .waitFor();
        const view = workbench.webview();
        await view.locator('.grid-row').first().waitFor({ timeout: 30_000 });
        assert.match(
          await view.locator('.metrics').innerText(),
          /33\.3%\s+success\s+1 of 3 graded/,
        );
        assert.match(await view.locator('.metrics').innerText(), /333\s+act tokens\/s\s+on cpu/);
        assert.match(await view.locator('table.per-tool').innerText(), /get_order_details\s+3\s+2/);
        // Least faithful first by default: the episode with the rehearsal that did not parse... by mean F1: e3 (0.00).
        assert.deepEqual(
          await view
            .locator('.grid-row')
            .evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.episodeId)),
          ['e3', 'e1', 'e2'],
        );
        await view.locator('.grid-head [data-column="reward"]').click();
        await view.locator('.grid-head [data-column="reward"][aria-sort="descending"]').waitFor();
        assert.deepEqual(
          await view
            .locator('.grid-row')
            .evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.episodeId)),
          ['e2', 'e1', 'e3'],
        );
        await view.locator('input.filter-text').fill('0031');
        await view.locator('.count', { hasText: '1 of 3 episodes' }).waitFor();
        await view.locator('input.filter-text').fill('');
        await view.locator('.count', { hasText: '3 of 3 episodes' }).waitFor();
        await view.locator('header h1').scrollIntoViewIfNeeded();
        await shot('run-summary');
        await view.locator('.viewport').focus();
        await page.keyboard.press('ArrowDown');
        await view.locator('.grid-row.selected[data-episode-id="e1"]').waitFor();
        await page.keyboard.press('Enter');
        await workbench.activeTab().filter({ hasText: 'Trajectory e1' }).waitFor();
      },
    ],

    [
      '"Compare Runs" puts two runs of the same tasks side by side; a pair\'s button opens both diffs',
      async () => {
        const after = '20261202-120000-shadow-after';
        await sampleAfterRun(after).write(
          path.join(options.workspace, '.rehearsal', 'runs', after, 'trace.jsonl'),
        );
        // The run reaches the studio's run index through its file watcher: once the Trace Explorer
        // lists it, Compare Runs offers it too (opened sooner, its picks are the runs known before).
        await workbench
          .treeRows(explorer)
          .filter({ hasText: runIdShort(after) })
          .first()
          .waitFor({ timeout: 30_000 });
        await workbench.closeEditors();
        await workbench.pick('Rehearsal: Compare Runs...', {
          loaded: SHADOW,
          query: SHADOW,
          row: SHADOW,
        });
        await workbench
          .quickPickRows()
          .filter({ hasText: after })
          .first()
          .waitFor({ timeout: 30_000 });
        await workbench.quickInput().fill(after);
        await workbench.quickPickRows().filter({ hasText: after }).first().click();
        await workbench.activeTab().filter({ hasText: 'Compare runs' }).waitFor();
        const view = workbench.webview();
        await view.locator('table.pairs tr.pair').first().waitFor({ timeout: 30_000 });
        assert.match(
          await view.locator('table.tasks').innerText(),
          /retail-test-0007\s+0\/1\s+1\/1/,
        );
        assert.deepEqual(
          await view.locator('table.pairs tr.pair td:nth-child(2)').allInnerTexts(),
          ['find_user_id_by_email', 'get_order_details'],
        );
        // The regression first, marked, with its change of field F1; each task row can be opened.
        assert.deepEqual(
          await view
            .locator('table.pairs tr.pair')
            .evaluateAll((rows) => rows.map((r) => r.classList.contains('regression'))),
          [true, false],
        );
        assert.match(
          await view.locator('table.pairs tr.pair').first().innerText(),
          /find_user_id_by_email[\s\S]*-1\.00/,
        );
        assert.equal(await view.locator('table.tasks vscode-button.open-task').count(), 3);
        await shot('compare-runs');
        await view.locator('table.pairs tr.pair').nth(1).locator('vscode-button.open-pair').click();
        await workbench.page
          .locator('.tab', { hasText: 'get_order_details e1.t2.c1' })
          .nth(1)
          .waitFor();
      },
    ],

    [
      '"Review Mismatches" walks a run\'s missed rehearsals in their diffs; M marks with the suggested kind and shows the next',
      async () => {
        const torn = SAMPLE_RUN_IDS.torn;
        await workbench.closeEditors();
        await workbench.pick('Rehearsal: Review Mismatches...', {
          loaded: torn,
          query: torn,
          row: torn,
        });
        await workbench.activeTab().filter({ hasText: 'get_order_details e2.t3.c1' }).waitFor();
        const progress = page.locator('.part.statusbar .statusbar-item', { hasText: 'Review' });
        await progress.filter({ hasText: '0 / 4 reviewed' }).waitFor();
        // A rehearsal that did not parse cannot be acceptable: the status bar offers M and S, not A.
        assert.match(await progress.innerText(), /M mark \(format error\) · S skip/);
        assert.doesNotMatch(await progress.innerText(), /A accept/);
        await shot('review-queue');
        // One key, in the diff's editor. The key is bound while that editor has the focus (its
        // `editorTextFocus`), which a click gives once the diff has opened its models: a key pressed
        // before is typed into nothing. So: focus, then the key, again only while nothing was marked.
        const marked = progress.filter({ hasText: '1 / 4 reviewed' });
        const modified = page.locator('.monaco-diff-editor .editor.modified .view-lines').first();
        for (let attempt = 0; ; attempt++) {
          await modified.click();
          const focused = await page
            .waitForFunction(
              () => !!document.activeElement?.closest('.monaco-diff-editor .editor.modified'),
              undefined,
              { timeout: 5_000 },
            )
            .then(
              () => true,
              () => false,
            );
          if (await marked.isVisible()) break;
          await page.keyboard.press('m');
          try {
            await marked.waitFor({ timeout: 5_000 });
            break;
          } catch {
            if (attempt >= 3)
              throw new Error(
                `M did not mark the call after ${attempt + 1} tries (the diff's editor ${focused ? 'had' : 'never had'} the focus)`,
              );
          }
        }
        await workbench.activeTab().filter({ hasText: 'e1.t3.c1' }).waitFor();
        await eventually(async () => {
          const events = await annotationEvents(options.workspace, torn);
          assert.deepEqual(
            events.map((e) => [e.type, e.callId, e.kind, e.severity]),
            [['mark', 'e2.t3.c1', 'format_error', 'major']],
          );
        });
        await page.locator('.monaco-diff-editor .editor.modified .view-lines').first().click();
        await page.keyboard.press('Escape');
        await progress.waitFor({ state: 'hidden' });
      },
    ],
    [
      "a committed episode of private rehearsal opens on the memory it read, in the Trace Explorer and its Trajectory; Enter on a line's call opens its diff",
      async () => {
        const runId = '20261201-100000-private-memory';
        await recordPrivateRun(path.join(options.workspace, '.rehearsal', 'runs'), runId);
        await workbench.closeEditors();
        const [refused, noWrite] = PRIVATE_RUN_OUTCOMES.split('\n');
        await toggle(
          workbench,
          explorer,
          (r) => r.level === 1 && r.label === runIdShort(runId),
          true,
        );
        const committed = 'e4 bank-foresight-0001 (committed)';
        await toggle(workbench, explorer, (r) => r.level === 2 && r.label === committed, true);
        await toggle(
          workbench,
          explorer,
          (r) => r.level === 3 && r.label === 'rehearsal memory',
          true,
        );
        await eventually(async () => {
          const rows = await workbench.readRows(explorer);
          const at = rows.findIndex((r) => r.level === 3 && r.label === 'rehearsal memory');
          const under: RenderedRow[] = [];
          for (let i = at + 1; i < rows.length && rows[i].level > 3; i++)
            if (rows[i].level === 4) under.push(rows[i]);
          assert.deepEqual(
            under.map((r) => [
              r.label,
              r.description.replace(/ · (success|failure) · reward \d\.\d\d/, ''),
            ]),
            [
              [refused, 'attempts 1, 2'],
              [noWrite, 'attempt 3'],
              ['attempt 1', 'e1 · line 1'],
              ['attempt 2', 'e2 · line 1'],
              ['attempt 3', 'e3 · line 2'],
            ],
            describeRows(rows),
          );
        });
        await shot('rehearsal-memory-tree');
        // The memory's row is selected: Open Trajectory opens the episode that read it.
        await workbench.runCommand('Rehearsal: Open Trajectory');
        await workbench.activeTab().filter({ hasText: 'Trajectory e4' }).waitFor();
        const view = workbench.webview();
        const memory = view.locator('section.memory');
        await memory.locator('.memory-line').first().waitFor({ timeout: 30_000 });
        assert.equal(await memory.locator('h2').innerText(), 'Rehearsal memory · outcomes');
        assert.deepEqual(await memory.locator('.memory-line-text').allInnerTexts(), [
          refused,
          noWrite,
        ]);
        assert.deepEqual(await memory.locator('.memory-line .memory-from').allInnerTexts(), [
          'from attempts 1, 2',
          'from attempt 3',
        ]);
        assert.deepEqual(await memory.locator('vscode-button.memory-call').allInnerTexts(), [
          'attempt 1 · e1.t2.c1',
          'attempt 2 · e2.t2.c1',
        ]);
        assert.equal(await memory.locator('.memory-attempt').count(), 3);
        assert.equal(
          await view.locator('section.memory + ol.timeline').count(),
          1,
          'the memory comes right before the turns',
        );
        await workbench.settle(500);
        await shot('rehearsal-memory-panel');
        await memory.locator('vscode-button.memory-call').first().focus();
        await page.keyboard.press('Enter');
        await page.locator('.tab', { hasText: 'transfer_between_accounts e1.t2.c1' }).waitFor();
      },
    ],

    [
      'the "Get started with Rehearsal Studio" walkthrough lists its four steps',
      async () => {
        await workbench.runCommand('Welcome: Open Walkthrough...');
        await workbench
          .quickPickRows()
          .filter({ hasText: 'Get started with Rehearsal Studio' })
          .first()
          .click();
        await workbench.walkthroughSteps().filter({ hasText: 'Pick a policy' }).first().waitFor();
        const titles = await workbench.walkthroughStepTitles();
        assert.deepEqual(titles, [
          'Pick a policy',
          'Run a sample task',
          "Open a call's diff",
          'Mark a fidelity error',
        ]);
        await shot('walkthrough');
      },
    ],
  ];
  if (options.model) checks.push(trainingCheck(workbench, options, shot));

  return runChecks(checks, options, shot);
}

/** A run file of 8 sft steps from `model` in the workspace's `training/` folder, named `name`. */
export async function writeTinyRunFile(
  workspace: string,
  model: string,
  name = 'ui-tiny',
): Promise<void> {
  const folder = path.join(workspace, 'training');
  await fs.mkdir(folder, { recursive: true });
  await fs.writeFile(path.join(folder, 'rows.jsonl'), weatherRows());
  await fs.writeFile(
    path.join(folder, `${name}.run.json`),
    JSON.stringify(
      {
        name,
        objective: 'sft',
        base: model,
        data: { train: ['rows.jsonl'] },
        hardware: { device: 'cpu', threads: 1 },
        hyperparameters: {
          train: {
            steps: 8,
            batch_size: 4,
            micro_batch_size: 4,
            log_every: 1,
            checkpoint_every: 4,
          },
        },
      },
      null,
      1,
    ),
  );
}

function trainingCheck(
  workbench: Workbench,
  options: UiCheckOptions,
  shot: (name: string) => Promise<unknown>,
): [string, () => Promise<void>] {
  return [
    '"Start Training Run" from the palette shows the exact command in a modal; Start launches it; the dashboard draws its charts and is usable from the keyboard',
    async () => {
      await writeTinyRunFile(options.workspace, options.model!);
      // A page still loading in an open editor (the walkthrough) takes the focus and closes quick picks.
      await workbench.closeEditors();
      await workbench.pick('Rehearsal: Start Training Run', {
        loaded: 'ui-tiny.run.json',
        query: 'ui-tiny',
        row: 'ui-tiny.run.json',
      });
      await workbench.dialog().waitFor({ timeout: 60_000 });
      assert.match(
        await workbench.dialog().innerText(),
        /Start the training run "ui-tiny"\?[\s\S]*OMP_WAIT_POLICY=PASSIVE \S+ -m trainer sft --config \S+\/training\/\.rehearsal\/training\/ui-tiny\/trainer-config\.json[\s\S]*starts from the base model/,
      );
      await shot('training-confirm');
      await workbench.dialogButton('Start').click();
      await workbench.activeTab().filter({ hasText: 'Training ui-tiny' }).waitFor();
      const view = workbench.webview();
      await view
        .locator('vscode-badge.run-status', { hasText: 'done' })
        .waitFor({ timeout: 90_000 });
      assert.match(await view.locator('.progress-text').innerText(), /^step 8 of 8/);
      await view.locator('.after-run', { hasText: 'Exported' }).waitFor({ timeout: 60_000 });
      assert.match(
        await view.locator('section.loss .latest').innerText(),
        /^latest: act \d+\.\d{3} · objective \d+\.\d{3} · rehearse \d+\.\d{3}$/,
      );
      assert.match(
        await view.locator('section.tokensPerSecond .latest').innerText(),
        /^latest: tokens\/s \d+$/,
      );
      assert.match(
        await view.locator('section.validation .empty').innerText(),
        /^No validation: GRPO validates held-out tasks/,
      );
      await workbench.settle(500);
      await shot('training-dashboard');
      // Keyboard: the buttons are reachable with Tab; Enter on "Show log" opens the log.
      await view.locator('vscode-button.showLog').focus();
      await workbench.page.keyboard.press('Enter');
      await workbench.panelPart('ui-tiny: done').waitFor();
    },
  ];
}

/** Runs checks in order; the first failure (with a screenshot) ends the list. */
export async function runChecks(
  checks: [string, () => Promise<void>][],
  options: UiCheckOptions,
  shot: (name: string) => Promise<unknown>,
  failurePrefix = '',
): Promise<UiCheckResult[]> {
  const results: UiCheckResult[] = [];
  for (const [name, check] of checks) {
    const t0 = Date.now();
    try {
      await check();
      results.push({ name, ok: true, durationMs: Date.now() - t0 });
      options.log(`  ✓ ${name} (${Date.now() - t0} ms)`);
    } catch (err) {
      const error = (err as Error).stack ?? String(err);
      results.push({ name, ok: false, durationMs: Date.now() - t0, error });
      options.log(`  ✗ ${name}\n${error.replace(/^/gm, '      ')}`);
      await shot(`${failurePrefix}failed-${results.length}`).catch(() => undefined);
      break;
    }
  }
  return results;
}

/**
 * Checks in a workspace that is not trusted (Restricted Mode): the studio shows the runs and a
 * call's diff, says in the status bar that it only views, and a run from the palette starts
 * nothing and says why.
 */
export async function runUntrustedChecks(
  workbench: Workbench,
  options: UiCheckOptions,
): Promise<UiCheckResult[]> {
  const { page } = workbench;
  const shot = (name: string) =>
    page.screenshot({ path: path.join(options.screenshots, `${name}.png`) });
  const explorer = workbench.pane('Trace Explorer');
  const runsDir = path.join(options.workspace, '.rehearsal', 'runs');
  const checks: [string, () => Promise<void>][] = [
    [
      'untrusted: the Trace Explorer lists the runs and the status bar says the studio only views',
      async () => {
        await workbench.waitUntilLoaded(options.loadTimeoutMs);
        await workbench.openViewContainer('Rehearsal');
        await workbench
          .treeRows(explorer)
          .filter({ hasText: runIdShort(SHADOW) })
          .waitFor({ timeout: options.loadTimeoutMs });
        await page
          .locator('.part.statusbar .statusbar-item', { hasText: 'Rehearsal: view only' })
          .waitFor();
      },
    ],
    [
      'untrusted: a call\'s diff opens from "Rehearsal: Show Call Diff", with no lens to mark it',
      async () => {
        await workbench.runCommand('Rehearsal: Show Call Diff');
        await workbench.quickInput().fill('e1.t2.c1');
        await workbench.quickPickRows().filter({ hasText: SHADOW }).first().click();
        await workbench.activeTab().filter({ hasText: 'get_order_details e1.t2.c1' }).waitFor();
        await page
          .locator('.monaco-diff-editor .editor.modified .view-lines', { hasText: 'delivered' })
          .waitFor();
        await workbench.codeLenses('original').filter({ hasText: 'Trajectory' }).waitFor();
        assert.deepEqual(
          (await workbench.codeLenses('original').allInnerTexts()).map((t) => t.trim()),
          ['Trajectory'],
          'no lens offers a mark in an untrusted workspace',
        );
      },
    ],
    [
      'untrusted: "Rehearsal: Run Task" starts nothing and says the workspace is not trusted',
      async () => {
        const before = await fs.readdir(runsDir);
        await workbench.runCommand('Rehearsal: Run Task');
        await workbench.notification(/cannot run tasks\. This workspace is not trusted/).waitFor();
        assert.deepEqual(await fs.readdir(runsDir), before, 'no run folder was made');
        await workbench.settle(1000);
        await shot('untrusted-view-only');
      },
    ],
  ];
  return runChecks(checks, options, shot, 'untrusted-');
}

function describeRows(rows: RenderedRow[]): string {
  return (
    'Trace Explorer rows:\n' +
    rows.map((r) => `${'  '.repeat(r.level - 1)}${r.label} | ${r.description}`).join('\n')
  );
}

/** The label of the nearest row above `index` at `level`. */
function parentLabel(rows: RenderedRow[], index: number, level: number): string | undefined {
  for (let i = index - 1; i >= 0; i--) if (rows[i].level === level) return rows[i].label;
  return undefined;
}

/** The rows right under the top-level row `label`. */
function childrenOf(rows: RenderedRow[], label: string): RenderedRow[] {
  const start = rows.findIndex((r) => r.level === 1 && r.label === label);
  const out: RenderedRow[] = [];
  for (let i = start + 1; i < rows.length && rows[i].level > 1; i++)
    if (rows[i].level === 2) out.push(rows[i]);
  return out;
}

/**
 * Retries an assertion until it passes or `timeoutMs` runs out: the tree renders children
 * asynchronously (they come from the extension host), so a read can come too early.
 */
async function eventually(assertion: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Expands or collapses the first row that matches, by clicking it, and waits until it did: for an
 * expansion, until its first child row is rendered.
 */
async function toggle(
  workbench: Workbench,
  pane: Locator,
  match: (r: RenderedRow, i: number, all: RenderedRow[]) => boolean,
  expand: boolean,
): Promise<void> {
  let rows: RenderedRow[] = [];
  let index = -1;
  // A tree that refreshes (a run written just before: the explorer's watcher re-renders it) may
  // replace the row between the read and the click, and the click is lost: the row is found and
  // clicked again while it has not changed state.
  for (let attempt = 0; ; attempt++) {
    await eventually(async () => {
      rows = await workbench.readRows(pane);
      index = rows.findIndex(match);
      assert.ok(index >= 0, `no such row; ${describeRows(rows)}`);
    });
    if (rows[index].expanded === expand) break;
    await workbench.rowAt(pane, index).click();
    try {
      await pane
        .locator(`.monaco-list-row[data-index="${index}"][aria-expanded="${expand}"]`)
        .waitFor({ timeout: 5_000 });
      break;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
  if (expand)
    await pane
      .locator(`.monaco-list-row[data-index="${index + 1}"][aria-level="${rows[index].level + 1}"]`)
      .waitFor();
}
