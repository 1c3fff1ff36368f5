import * as vscode from 'vscode';
import type { CommandArgs, CommandId } from './commands';

/** Registers a command with the argument types of {@link CommandArgs}. */
export function registerCommand<K extends CommandId>(
  id: K,
  handler: (...args: CommandArgs[K]) => unknown,
): vscode.Disposable {
  return vscode.commands.registerCommand(id, handler as (...args: unknown[]) => unknown);
}

/** Runs a command with checked argument types. */
export function executeCommand<K extends CommandId, R = unknown>(
  id: K,
  ...args: CommandArgs[K]
): Thenable<R> {
  return vscode.commands.executeCommand<R>(id, ...args);
}
