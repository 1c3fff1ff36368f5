import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PathTarget } from './commands';

/** The path of a file or folder target. */
export function fsPath(target: PathTarget): string {
  return typeof target === 'string' ? target : target.fsPath;
}

/** The workspace folder that holds a path, else the first one. */
export function workspaceFolderFor(p: string): string | undefined {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const inside = folders.find((f) => p === f.uri.fsPath || p.startsWith(f.uri.fsPath + path.sep));
  return (inside ?? folders[0])?.uri.fsPath;
}
