import * as vscode from 'vscode';
import type { IDisposable } from '../core/base/disposable';
import type { StudioErrorCode } from '../core/base/errorCodes';
import { errorMessage, StudioError } from '../core/base/errors';
import type { CommandArgs, CommandId } from './commands';
import type { ErrorAction } from './errorActions';
import { STUDIO_ERROR_ACTIONS } from './errorActions';

/** What the last error notification said, with its buttons (editor tests read it). */
export interface ShownError {
  message: string;
  code?: StudioErrorCode;
  actions: string[];
}

/** What an error's notification is told besides the error. */
export interface ShowErrorOptions {
  /** Said before the error's message, e.g. `cannot mark c1: `. */
  prefix?: string;
  /** Buttons that only the caller knows (e.g. "Open Run File"), before the code's own. */
  actions?: ErrorAction[];
}

const SHOW_LOG = 'Show Log';

/** The button that shows a log (the studio's, or the one a command wrote to). */
export function showLog(log: vscode.OutputChannel): ErrorAction {
  return { label: SHOW_LOG, run: async () => log.show(true) };
}

/**
 * Shows errors to the person: a `StudioError` with its code and the action its code names
 * (`STUDIO_ERROR_ACTIONS`) as buttons; anything else is a defect, logged with its stack.
 */
export class ErrorNotifier {
  /** The last error shown. */
  last: ShownError | undefined;

  constructor(private readonly log: vscode.LogOutputChannel) {}

  show(err: unknown, options: ShowErrorOptions = {}): void {
    const coded = err instanceof StudioError ? err : undefined;
    const offered = [
      ...(options.actions ?? []),
      ...((coded && STUDIO_ERROR_ACTIONS[coded.code]) ?? []),
    ];
    if (!coded) {
      this.log.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
      offered.push(showLog(this.log));
    }
    // The caller's button wins over the code's of the same name (its log, its command's argument).
    const actions = offered.filter((a, i) => offered.findIndex((b) => b.label === a.label) === i);
    const message = `Rehearsal: ${options.prefix ?? ''}${errorMessage(err)}${coded ? ` (${coded.code})` : ''}`;
    const labels = actions.map((a) => a.label);
    this.last = { message, ...(coded ? { code: coded.code } : {}), actions: labels };
    void vscode.window
      .showErrorMessage(message, ...labels)
      .then((picked) => actions.find((a) => a.label === picked)?.run());
  }
}

// The one notifier of the extension host, set by activate() before any command is registered.
let notifier: ErrorNotifier | undefined;

/** Makes `errors` the notifier of every command's errors, until disposed. */
export function useErrorNotifier(errors: ErrorNotifier): IDisposable {
  notifier = errors;
  return { dispose: () => (notifier = notifier === errors ? undefined : notifier) };
}

/** Shows an error as every command does (see {@link ErrorNotifier}). */
export function showError(err: unknown, options?: ShowErrorOptions): void {
  if (notifier) notifier.show(err, options);
  else
    void vscode.window.showErrorMessage(`Rehearsal: ${options?.prefix ?? ''}${errorMessage(err)}`);
}

/**
 * Registers a command with the argument types of {@link CommandArgs}; the only way the extension
 * registers one (lint refuses `vscode.commands.registerCommand` elsewhere). What the handler throws
 * is shown by {@link showError}, never lost in the extension host's log; the command then
 * returns undefined.
 */
export function registerCommand<K extends CommandId>(
  id: K,
  handler: (...args: CommandArgs[K]) => unknown,
): vscode.Disposable {
  return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
    try {
      return await (handler as (...a: unknown[]) => unknown)(...args);
    } catch (err) {
      showError(err);
      return undefined;
    }
  });
}

/** Runs a command with checked argument types. */
export function executeCommand<K extends CommandId, R = unknown>(
  id: K,
  ...args: CommandArgs[K]
): Thenable<R> {
  return vscode.commands.executeCommand<R>(id, ...args);
}
