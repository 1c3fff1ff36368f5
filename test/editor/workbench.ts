/**
 * The parts of VS Code's workbench DOM the UI checks use, in one place: when a VS Code update
 * changes a class name, this is the file to fix.
 */
import type { FrameLocator, Locator, Page } from 'playwright-core';

/** One row of a tree view as rendered. */
export interface RenderedRow {
  /** 1 for top-level rows. */
  level: number;
  label: string;
  description: string;
  /** Undefined for rows that cannot expand. */
  expanded: boolean | undefined;
  /** The part of the description a person sees: the rest is cut by the side bar's edge (an ellipsis). */
  shownDescription: string;
}

/** Helpers over a page that shows code-server's workbench. */
export class Workbench {
  constructor(readonly page: Page) {}

  /** Waits for the workbench to be laid out. */
  async waitUntilLoaded(timeoutMs: number): Promise<void> {
    await this.page.locator('.monaco-workbench .part.activitybar').waitFor({ timeout: timeoutMs });
  }

  /**
   * Opens a view container from the activity bar by its title. Clicking the entry of the container
   * the side bar already shows would close the side bar, so an open container is left as it is.
   */
  async openViewContainer(title: string): Promise<void> {
    const label = `a.action-label[aria-label^="${title}"]`;
    const item = this.page
      .locator('.part.activitybar .action-item', { has: this.page.locator(label) })
      .first();
    const shown =
      (await item.getAttribute('class'))?.split(/\s+/).includes('checked') &&
      (await this.page.locator('.part.sidebar').isVisible());
    if (!shown) await item.locator(label).click();
    await this.page
      .locator('.part.sidebar .composite.title', { hasText: new RegExp(title, 'i') })
      .waitFor();
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
    await this.page
      .locator('.part.statusbar', { hasText: 'Activating Extensions' })
      .waitFor({ state: 'detached', timeout: timeoutMs })
      .catch(() => undefined);
  }

  /** The pane of a view in the side bar, by its name. */
  pane(name: string): Locator {
    return this.page.locator('.part.sidebar .pane', {
      has: this.page.locator('.pane-header', { hasText: name }),
    });
  }

  /** Rows of a tree view pane, in display order. */
  treeRows(pane: Locator): Locator {
    return pane.locator('.monaco-list-row');
  }

  /** Reads the rendered rows of a tree view pane. */
  async readRows(pane: Locator): Promise<RenderedRow[]> {
    return this.treeRows(pane).evaluateAll((rows) =>
      rows
        .map((row) => ({
          index: Number(row.getAttribute('data-index') ?? '0'),
          level: Number(row.getAttribute('aria-level') ?? '1'),
          label: row.querySelector('.label-name')?.textContent?.trim() ?? '',
          description: row.querySelector('.label-description')?.textContent?.trim() ?? '',
          expanded: row.hasAttribute('aria-expanded')
            ? row.getAttribute('aria-expanded') === 'true'
            : undefined,
          shownDescription: (() => {
            // The characters whose box ends before the label's clipping edge (less the ellipsis).
            const text = row.querySelector('.label-description')?.firstChild;
            const clip = row.querySelector('.monaco-icon-label-container') ?? row;
            if (!text?.textContent) return '';
            const cut = clip.scrollWidth > clip.clientWidth;
            const edge = clip.getBoundingClientRect().right - (cut ? 12 : 0);
            const range = document.createRange();
            let shown = 0;
            for (let i = 1; i <= text.textContent.length; i++) {
              range.setStart(text, 0);
              range.setEnd(text, i);
              if (range.getBoundingClientRect().right > edge + 0.5) break;
              shown = i;
            }
            return text.textContent.slice(0, shown).trim();
          })(),
        }))
        // The list recycles row elements, so DOM order is not display order.
        .sort((a, b) => a.index - b.index)
        .map(({ level, label, description, expanded, shownDescription }) => ({
          level,
          label,
          description,
          expanded,
          shownDescription,
        })),
    );
  }

  /** The row at a display index (as {@link readRows} orders them). */
  rowAt(pane: Locator, index: number): Locator {
    return pane.locator(`.monaco-list-row[data-index="${index}"]`);
  }

  /** Runs a command from the command palette by its title, e.g. `Rehearsal: Show Fidelity Report`. */
  async runCommand(title: string): Promise<void> {
    const input = this.quickInput();
    // A webview that finishes loading (the walkthrough) can take the focus just as F1 opens the
    // palette, or while the command is typed, and the palette closes: start again, at most three times.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.page.keyboard.press('F1');
        await input.waitFor({ state: 'visible', timeout: 7_000 });
        await input.fill(`>${title}`, { timeout: 7_000 });
        await this.page
          .locator('.quick-input-list .monaco-list-row', { hasText: title })
          .first()
          .waitFor({ timeout: 7_000 });
        break;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
    await this.page.keyboard.press('Enter');
  }

  /**
   * Runs a command from the palette that opens a quick pick, waits for its items (`loaded`), types
   * `query` and accepts the first row that shows `row`. The quick input closes when something else
   * takes the focus (a webview that finishes loading after a reload does): then, and only then, the
   * command is run again, at most three times in all.
   */
  async pick(command: string, item: { loaded: string; query: string; row: string }): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.runCommand(command);
        await this.quickPickRows().filter({ hasText: item.loaded }).first().waitFor();
        await this.quickInput().fill(item.query, { timeout: 5_000 });
        await this.quickPickRows().filter({ hasText: item.row }).first().waitFor();
        await this.page.keyboard.press('Enter');
        return;
      } catch (err) {
        if (attempt === 3 || (await this.quickInput().isVisible())) throw err;
      }
    }
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
    return normalizeEditorText(
      await this.diffEditor().locator(`.editor.${side} .view-lines`).innerText(),
    );
  }

  /** Closes every editor (the command palette's View: Close All Editors). */
  async closeEditors(): Promise<void> {
    await this.runCommand('View: Close All Editors');
    await this.page
      .locator('.part.editor .tabs-container .tab')
      .first()
      .waitFor({ state: 'detached' })
      .catch(() => undefined);
  }

  /** The status bar item of the extension (policy, run progress, view-only). */
  statusItem(): Locator {
    return this.page
      .locator('.part.statusbar .statusbar-item', {
        hasText: /Rehearsal|reference|default model|model |endpoint /,
      })
      .first();
  }

  /** A notification toast that contains `text`. */
  notification(text: string | RegExp): Locator {
    return this.page.locator('.notifications-toasts .notification-toast', { hasText: text });
  }

  /** A modal dialog (`showInformationMessage(..., { modal: true })`): its message, detail and buttons. */
  dialog(): Locator {
    return this.page.locator('.monaco-dialog-box');
  }

  /** A button of the modal dialog. */
  dialogButton(label: string): Locator {
    return this.dialog().locator('.dialog-buttons a.monaco-button', { hasText: label });
  }

  /** The panel part (Output, Terminal, ...) once it shows `text`. */
  panelPart(text: string | RegExp): Locator {
    return this.page.locator('.part.panel', { hasText: text });
  }

  /** The steps of the walkthrough the Welcome page shows. */
  walkthroughSteps(): Locator {
    return this.page.locator('.gettingStartedContainer .getting-started-step');
  }

  /** The titles of the walkthrough's steps, in order. */
  async walkthroughStepTitles(): Promise<string[]> {
    return (await this.walkthroughSteps().locator('.step-title').allInnerTexts()).map((t) =>
      t.trim(),
    );
  }

  /** The CodeLenses of one side of the diff editor. */
  codeLenses(side: 'original' | 'modified'): Locator {
    return this.diffEditor().locator(`.editor.${side} .codelens-decoration a`);
  }

  /**
   * The document inside the active webview panel: VS Code puts each webview in an iframe
   * (`iframe.webview.ready`, laid over the editor area, not inside it) whose page loads the extension's content in an inner `#active-frame`.
   */
  webview(): FrameLocator {
    return this.page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  }

  /** The visible text of the active text editor (not a diff). */
  async activeEditorText(): Promise<string> {
    return normalizeEditorText(
      await this.page
        .locator('.part.editor .editor-group-container.active .monaco-editor .view-lines')
        .first()
        .innerText(),
    );
  }
}

// Monaco renders spaces as non-breaking spaces.
function normalizeEditorText(text: string): string {
  return text.replace(/\u00a0/g, ' ');
}
