import * as vscode from 'vscode';
import type { StudioErrorCode } from '../core/base/errorCodes';
import type { CommandId } from './commands';

/** A button on an error's notification: what the person can do about it, one click away. */
export interface ErrorAction {
  label: string;
  run(): Thenable<unknown>;
}

// A raw executeCommand: registerCommand.ts (which types the studio's commands) imports this table.
const command = (label: string, id: CommandId): ErrorAction => ({
  label,
  run: () => vscode.commands.executeCommand(id),
});
const settings = (query: string): ErrorAction => ({
  label: 'Open Settings',
  run: () => vscode.commands.executeCommand('workbench.action.openSettings', query),
});
const selectPolicy = command('Select Policy', 'rehearsal.selectPolicy');
const setUpTrainer = command('Set Up Trainer', 'rehearsal.setUpTrainer');
const refreshTraces = command('Refresh Traces', 'rehearsal.refreshTraces');

/**
 * The action each code of docs/error-codes.md names, where the editor can take it for the person
 * (a command or a setting); the other codes' messages say what to do outside the editor.
 */
export const STUDIO_ERROR_ACTIONS: Partial<Record<StudioErrorCode, readonly ErrorAction[]>> = {
  DEVICE_UNAVAILABLE: [settings('rehearsal.policy.device')],
  ENDPOINT_AUTH: [command('Set Endpoint API Key', 'rehearsal.setEndpointApiKey')],
  ENDPOINT_UNREACHABLE: [selectPolicy],
  INVALID_ENDPOINT: [selectPolicy],
  INVALID_JUDGE_ENDPOINT: [
    settings('rehearsal.judge'),
    command('Set Judge API Key', 'rehearsal.setJudgeApiKey'),
  ],
  JUDGE_MODEL_REQUIRED: [settings('rehearsal.judge.model')],
  MODEL_FILE_BROKEN: [selectPolicy],
  MODEL_FILE_MISSING: [selectPolicy],
  MODEL_FOLDER_INCONSISTENT: [selectPolicy],
  MODEL_NOT_FOUND: [selectPolicy],
  NO_REHEARSAL: [selectPolicy],
  POLICY_NOT_CONFIGURED: [selectPolicy],
  SERVER_CONFIG_INVALID: [settings('rehearsal.servers')],
  SERVER_NOT_CONFIGURED: [settings('rehearsal.servers')],
  SETTING_INVALID: [settings('rehearsal')],
  TRACE_CHANGED: [refreshTraces],
  TRAINER_ENV_MISSING: [setUpTrainer, settings('rehearsal.trainer')],
  TRAINER_ENV_SETUP_FAILED: [setUpTrainer],
  TRAINER_PYTHON_MISSING: [setUpTrainer, settings('rehearsal.trainer')],
  UNKNOWN_ANNOTATION: [refreshTraces],
};
