/**
 * Checks of what a person sees, through the workbench DOM in a real browser: the Trace Explorer's
 * rows and badges, a call's diff opened by clicking its row, and the fidelity report run from the
 * command palette. Each check builds on the one before, so the first failure ends the list.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import type { Locator } from 'playwright-core';
import { SAMPLE_RUN_IDS } from '../builders/sampleWorkspace';
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
}

const SHADOW = SAMPLE_RUN_IDS.shadow;

/** Runs the UI checks on a page that has the workbench open with the UI fixture workspace. */
export async function runUiChecks(workbench: Workbench, options: UiCheckOptions): Promise<UiCheckResult[]> {
  const { page } = workbench;
  const shot = (name: string) => page.screenshot({ path: path.join(options.screenshots, `${name}.png`) });
  const explorer = workbench.pane('Trace Explorer');
  const results: UiCheckResult[] = [];

  const checks: [string, () => Promise<void>][] = [
    ['the Rehearsal activity bar entry opens the Trace Explorer with every run', async () => {
      await workbench.waitUntilLoaded(options.loadTimeoutMs);
      await workbench.openViewContainer('Rehearsal');
      await workbench.treeRows(explorer).filter({ hasText: SAMPLE_RUN_IDS.imagine }).waitFor({ timeout: options.loadTimeoutMs });
      await eventually(async () => {
        const rows = await workbench.readRows(explorer);
        assert.deepEqual(rows.filter((r) => r.level === 1).map((r) => [r.label, r.description]), [
          [SAMPLE_RUN_IDS.torn, 'shadow · models/default · 3 episodes · 1 skipped line'],
          [SAMPLE_RUN_IDS.shadow, 'shadow · models/default · 3 episodes'],
          [SAMPLE_RUN_IDS.imagine, 'imagine · models/default · 1 episode'],
        ], describeRows(rows));
      });
      await shot('trace-explorer');
    }],

    ['runs open on their episodes; an episode opens on its turns and a turn on its calls, with badges', async () => {
      // Room for the badges, and only the shadow run open, so that its rows fit the side bar.
      await workbench.widenSideBar(160);
      await toggle(workbench, explorer, (r) => r.level === 1 && r.label === SAMPLE_RUN_IDS.torn, false);
      await toggle(workbench, explorer, (r) => r.level === 1 && r.label === SAMPLE_RUN_IDS.imagine, false);
      await eventually(async () => {
        const rows = await workbench.readRows(explorer);
        assert.deepEqual(childrenOf(rows, SHADOW).map((r) => [r.label, r.description]), [
          ['e1 retail-test-0007', 'failure · reward 0.50'],
          ['e2 retail-test-0012', 'success · reward 1.00'],
          ['e3 retail-test-0031', 'failed (TOOL_TIMEOUT)'],
        ], describeRows(rows));
      });
      await toggle(workbench, explorer, (r) => r.level === 2 && r.label === 'e1 retail-test-0007', true);
      for (const turn of ['turn 1', 'turn 2', 'turn 3']) await toggle(workbench, explorer, (r) => r.level === 3 && r.label === turn, true);
      await toggle(workbench, explorer, (r) => r.level === 2 && r.label === 'e2 retail-test-0012', true);
      await toggle(workbench, explorer, (r, i, all) => r.level === 3 && r.label === 'turn 3' && parentLabel(all, i, 2) === 'e2 retail-test-0012', true);
      await eventually(async () => {
        const rows = await workbench.readRows(explorer);
        assert.deepEqual(rows.filter((r) => r.level === 4).map((r) => [r.label, r.description]), [
          ['find_user_id_by_email', 'exact'],
          ['get_order_details', 'F1 0.78'],
          ['cancel_pending_order', 'F1 0.00 · error state differs'],
          ['get_order_details', 'parse error NO_EXECUTION_RESULT_TAG_FOUND'],
        ], describeRows(rows));
      });
    }],

    ['clicking the get_order_details call (F1 0.78) opens its diff: rehearsed "pending" left, actual "delivered" right', async () => {
      const rows = await workbench.readRows(explorer);
      const index = rows.findIndex((r) => r.label === 'get_order_details' && r.description === 'F1 0.78');
      await workbench.rowAt(explorer, index).click();
      await workbench.diffEditor().waitFor();
      await workbench.activeTab().filter({ hasText: 'get_order_details e1.t2.c1' }).waitFor();
      await page.locator('.monaco-diff-editor .editor.modified .view-lines', { hasText: 'delivered' }).waitFor();
      const left = await workbench.diffSideText('original');
      const right = await workbench.diffSideText('modified');
      assert.match(left, /"status": "pending"/, `left side:\n${left}`);
      assert.doesNotMatch(left, /"delivered"/, `left side:\n${left}`);
      assert.match(right, /"status": "delivered"/, `right side:\n${right}`);
      assert.match(right, /"fulfillments"/, `right side:\n${right}`);
      // Let the diff decorations and the status bar settle before the picture.
      await page.locator('.monaco-diff-editor .editor.modified .line-insert, .monaco-diff-editor .editor.modified .char-insert').first().waitFor();
      await workbench.settle(5000);
      await shot('trace-explorer-diff');
    }],

    ['"Rehearsal: Show Fidelity Report" from the command palette asks for a run and opens its report', async () => {
      await workbench.runCommand('Rehearsal: Show Fidelity Report');
      await workbench.quickPickRows().filter({ hasText: SHADOW }).first().waitFor();
      await workbench.quickInput().fill(SHADOW);
      await workbench.quickPickRows().filter({ hasText: SHADOW }).first().waitFor();
      await page.keyboard.press('Enter');
      await page.locator('.part.editor .view-lines', { hasText: 'mean reward' }).first().waitFor();
      const report = await workbench.activeEditorText();
      assert.match(report, new RegExp(`${SHADOW} `));
      assert.match(report, /3 episodes · success 33\.3% \(1\/3\) · mean reward 0\.50/);
      assert.match(report, /fidelity: exact 0\.40 · field F1 0\.56/);
      await shot('fidelity-report');
    }],

    ['"Rehearsal: Show Call Diff" offers every call, least faithful first, and opens the one picked', async () => {
      await workbench.runCommand('Rehearsal: Show Call Diff');
      await workbench.quickPickRows().first().waitFor();
      const offered = await workbench.quickPickRows().allInnerTexts();
      assert.match(offered[0], /parse error|tool error/, `the first calls offered should be the failed ones:\n${offered.join('\n')}`);
      await workbench.quickInput().fill('cancel_pending_order');
      await workbench.quickPickRows().filter({ hasText: SHADOW }).first().click();
      await workbench.activeTab().filter({ hasText: 'cancel_pending_order e1.t3.c1' }).waitFor();
      await page.locator('.monaco-diff-editor .editor.modified .view-lines', { hasText: 'Non-pending order cannot be cancelled' }).waitFor();
      assert.match(await workbench.diffSideText('original'), /"status": "cancelled"/);
    }],
  ];

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
      await shot(`failed-${results.length}`).catch(() => undefined);
      break;
    }
  }
  return results;
}

function describeRows(rows: RenderedRow[]): string {
  return 'Trace Explorer rows:\n' + rows.map((r) => `${'  '.repeat(r.level - 1)}${r.label} | ${r.description}`).join('\n');
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
  for (let i = start + 1; i < rows.length && rows[i].level > 1; i++) if (rows[i].level === 2) out.push(rows[i]);
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
async function toggle(workbench: Workbench, pane: Locator, match: (r: RenderedRow, i: number, all: RenderedRow[]) => boolean, expand: boolean): Promise<void> {
  let rows: RenderedRow[] = [];
  let index = -1;
  await eventually(async () => {
    rows = await workbench.readRows(pane);
    index = rows.findIndex(match);
    assert.ok(index >= 0, `no such row; ${describeRows(rows)}`);
  });
  if (rows[index].expanded === expand) return;
  await workbench.rowAt(pane, index).click();
  await pane.locator(`.monaco-list-row[data-index="${index}"][aria-expanded="${expand}"]`).waitFor();
  if (expand) await pane.locator(`.monaco-list-row[data-index="${index + 1}"][aria-level="${rows[index].level + 1}"]`).waitFor();
}
