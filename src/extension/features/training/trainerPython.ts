import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { PlanOptions } from '../../../core/training/launch/backends';
import { trainerPython } from '../../settings';

/**
 * The editor's trainer environment: in the extension's global storage, so that it outlives updates
 * of the extension (a changed pin makes it stale, and the next launch says so).
 */
export function trainerEnvDir(context: vscode.ExtensionContext): string {
  return path.join(context.globalStorageUri.fsPath, 'trainer-env');
}

/** What every launch from the editor passes to the core's launcher: the setting, else the editor's environment. */
export function trainerPythonOptions(
  context: vscode.ExtensionContext,
): () => Pick<PlanOptions, 'python' | 'envDir'> {
  return () => ({ python: trainerPython(), envDir: trainerEnvDir(context) });
}
