import * as vscode from 'vscode';
import { TASK_FILE_SUFFIX } from '../../../core/tasks/format/loader';

/** "Run Task" and "Run with Private Rehearsal" above the first line of every task file. */
export class TaskCodeLensProvider implements vscode.CodeLensProvider {
  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    if (!document.uri.path.endsWith(TASK_FILE_SUFFIX)) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    return [
      new vscode.CodeLens(top, {
        title: '$(play) Run Task',
        command: 'rehearsal.runTask',
        arguments: [document.uri],
      }),
      new vscode.CodeLens(top, {
        title: '$(run-all) Run with Private Rehearsal',
        command: 'rehearsal.runTaskPrivate',
        arguments: [document.uri],
      }),
    ];
  }
}
