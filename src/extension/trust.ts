import * as vscode from 'vscode';

/** Why the studio only views in an untrusted workspace: said wherever something is refused. */
export const UNTRUSTED_REASON =
  'This workspace is not trusted, so Rehearsal Studio only shows traces, diffs and annotations here: its settings could name any program to start as an MCP server or policy.';

/**
 * True in a trusted workspace. Otherwise says why `action` is not allowed, offers to manage
 * workspace trust, and returns false.
 */
export function ensureTrusted(action: string): boolean {
  if (vscode.workspace.isTrusted) return true;
  void vscode.window
    .showWarningMessage(
      `Rehearsal: cannot ${action}. ${UNTRUSTED_REASON}`,
      'Manage Workspace Trust',
    )
    .then((choice) => {
      if (choice) void vscode.commands.executeCommand('workbench.trust.manage');
    });
  return false;
}
