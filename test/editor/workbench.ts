/**
 * The parts of VS Code's workbench DOM the UI checks use, in one place: when a VS Code update
 * changes a class name, this is the file to fix.
 */
import type { Locator, Page } from 'playwright-core';

/** One row of a tree view as rendered. */
export interface RenderedRow {
  /** 1 for top-level rows. */
  level: number;
  label: string;
  description: string;
  /** Undefined for rows that cannot expand. */
  expanded: boolean | undefined;
}

/** Helpers over a page that shows code-server's workbench. */
export class Workbench {
  constructor(readonly page: Page) {}

  /** Waits for the workbench to be laid out. */
  async waitUntilLoaded(timeoutMs: number): Promise<void> {
    await this.page.locator('.monaco-workbench .part.activitybar').waitFor({ timeout: timeoutMs });
  }

  /** Opens a view container from the activity bar by its title. */
  async openViewContainer(title: string): Promise<void> {
    await this.page.locator(`.part.activitybar .action-item [aria-label^="${title}"]`).first().click();
  }

  /** Makes the side bar wider by dragging its edge, so that long row descriptions fit. */
  async widenSideBar(by: number): Promise<void> {
    const bar = await this.page.locator('.part.sidebar').boundingBox();
    if (!bar) throw new Error('the side bar is not visible');
    const edge = bar.x + bar.width;
    const y = bar.y + bar.height / 2;
    await this.page.mouse.move(edge, y);
    await this.page.mouse.down();
    await this.page.mouse.move(edge + by / 2, y);
    await this.page.mouse.move(edge + by, y);
    await this.page.mouse.up();
  }

  /** Waits (at most `timeoutMs`) until the status bar no longer says that extensions are activating. */
  async settle(timeoutMs: number): Promise<void> {
    await this.page.locator('.part.statusbar', { hasText: 'Activating Extensions' }).waitFor({ state: 'detached', timeout: timeoutMs }).catch(() => undefined);
  }

  /** The pane of a view in the side bar, by its name. */
  pane(name: string): Locator {
    return this.page.locator('.part.sidebar .pane', { has: this.page.locator('.pane-header', { hasText: name }) });
  }

  /** Rows of a tree view pane, in display order. */
  treeRows(pane: Locator): Locator {
    return pane.locator('.monaco-list-row');
  }

  /** Reads the rendered rows of a tree view pane. */
  async readRows(pane: Locator): Promise<RenderedRow[]> {
    return this.treeRows(pane).evaluateAll((rows) => rows
      .map((row) => ({
        index: Number(row.getAttribute('data-index') ?? '0'),
        level: Number(row.getAttribute('aria-level') ?? '1'),
        label: row.querySelector('.label-name')?.textContent?.trim() ?? '',
        description: row.querySelector('.label-description')?.textContent?.trim() ?? '',
        expanded: row.hasAttribute('aria-expanded') ? row.getAttribute('aria-expanded') === 'true' : undefined,
      }))
      // The list recycles row elements, so DOM order is not display order.
      .sort((a, b) => a.index - b.index)
      .map(({ level, label, description, expanded }) => ({ level, label, description, expanded })));
  }

  /** The row at a display index (as {@link readRows} orders them). */
  rowAt(pane: Locator, index: number): Locator {
    return pane.locator(`.monaco-list-row[data-index="${index}"]`);
  }

  /** Runs a command from the command palette by its title, e.g. `Rehearsal: Show Fidelity Report`. */
  async runCommand(title: string): Promise<void> {
    await this.page.keyboard.press('F1');
    const input = this.quickInput();
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
    await this.page.keyboard.press('Enter');
  }

  /** The text box of the quick input (command palette, quick picks). */
  quickInput(): Locator {
    return this.page.locator('.quick-input-widget input.input');
  }

  /** The rows a quick pick offers. */
  quickPickRows(): Locator {
    return this.page.locator('.quick-input-widget .quick-input-list .monaco-list-row');
  }

  /** The label of the active editor tab. */
  activeTab(): Locator {
    return this.page.locator('.part.editor .tabs-container .tab.active');
  }

  /** The diff editor of the active editor group. */
  diffEditor(): Locator {
    return this.page.locator('.part.editor .editor-group-container.active .monaco-diff-editor');
  }

  /** The visible text of one side of the diff editor, with spaces as typed. */
  async diffSideText(side: 'original' | 'modified'): Promise<string> {
    return normalizeEditorText(await this.diffEditor().locator(`.editor.${side} .view-lines`).innerText());
  }

  /** The visible text of the active text editor (not a diff). */
  async activeEditorText(): Promise<string> {
    return normalizeEditorText(await this.page.locator('.part.editor .editor-group-container.active .monaco-editor .view-lines').first().innerText());
  }
}

// Monaco renders spaces as non-breaking spaces.
function normalizeEditorText(text: string): string {
  return text.replace(/\u00a0/g, ' ');
}
