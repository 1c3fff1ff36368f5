import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DeviceSetting } from '../core/policy/onnx/device';
import {
  concurrencyFromSettings,
  runDefaultsFromSettings,
  threadsFromSettings,
} from '../core/runner/editorSettings';
import type { RunSettings } from '../core/runner/settings';
import type { PolicyChoice } from '../core/runner/policyChoice';
import { DEVICE_SETTINGS, policyChoiceFromSettings } from '../core/runner/policyChoice';

/** The settings section of the extension. */
export const SECTION = 'rehearsal';

/**
 * Settings that name programs or endpoints to start: VS Code ignores their workspace values in an
 * untrusted workspace (package.json lists them under `restrictedConfigurations`).
 */
export const RESTRICTED_SETTINGS = [
  'rehearsal.servers',
  'rehearsal.policy.kind',
  'rehearsal.policy.modelFolder',
  'rehearsal.policy.endpoint.url',
  'rehearsal.policy.endpoint.model',
  'rehearsal.judge.endpoint',
  'rehearsal.judge.model',
  'rehearsal.trainer.python',
] as const;

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

/** The settings that name the policy; editing one of them hands the choice back to the settings. */
const POLICY_SETTINGS = [
  'rehearsal.policy.kind',
  'rehearsal.policy.modelFolder',
  'rehearsal.policy.endpoint.url',
  'rehearsal.policy.endpoint.model',
] as const;

/** The key of Select Policy's choice in the extension's workspace state. */
const SELECTED_POLICY = 'rehearsal.selectedPolicy';
let selections: vscode.Memento | undefined;

/**
 * Keeps Select Policy's choices in `state` (the extension's workspace state: the editor remembers
 * them per workspace across sessions, and no file of the project is written). Call it at activation,
 * before anything listens to configuration changes: when a policy setting is edited afterwards, the
 * settings win again, since the person changed them last.
 */
export function keepPolicySelectionsIn(state: vscode.Memento): vscode.Disposable {
  selections = state;
  return vscode.workspace.onDidChangeConfiguration((e) => {
    if (POLICY_SETTINGS.some((s) => e.affectsConfiguration(s)) && state.get(SELECTED_POLICY))
      void state.update(SELECTED_POLICY, undefined);
  });
}

/** The policy Select Policy chose for this workspace, when it chose one and it is still valid. */
function selectedPolicy(): PolicyChoice | undefined {
  const stored = selections?.get<Partial<Record<string, string>>>(SELECTED_POLICY);
  if (!stored || typeof stored !== 'object') return undefined;
  try {
    return policyChoiceFromSettings({
      kind: stored['kind'],
      modelFolder: stored['folder'],
      endpointUrl: stored['url'],
      endpointModel: stored['model'],
    });
  } catch {
    return undefined; // written by another version: the settings decide
  }
}

/** Where the current policy choice comes from (the status bar's tooltip says it). */
export function policyChoiceSource(): 'selection' | 'settings' {
  return selectedPolicy() ? 'selection' : 'settings';
}

/**
 * The policy runs use: the one Select Policy chose for this workspace, else the settings' (throws a
 * coded error that says which setting to fix).
 */
export function policyChoice(): PolicyChoice {
  const selected = selectedPolicy();
  if (selected) return selected;
  const c = config();
  return policyChoiceFromSettings(
    {
      kind: c.get<string>('policy.kind'),
      modelFolder: c.get<string>('policy.modelFolder'),
      endpointUrl: c.get<string>('policy.endpoint.url'),
      endpointModel: c.get<string>('policy.endpoint.model'),
    },
    vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
  );
}

/** Where the policy runs. */
export function policyDevice(): DeviceSetting {
  const d = config().get<string>('policy.device', 'auto');
  return (DEVICE_SETTINGS as readonly string[]).includes(d) ? (d as DeviceSetting) : 'auto';
}

/** CPU threads of the policy host (undefined: its own choice; SETTING_INVALID out of range). */
export function policyThreads(): number | undefined {
  const c = config();
  return threadsFromSettings((key) => c.get(key));
}

/**
 * The trainer's Python named in the settings (undefined: the studio's environment). A relative path
 * with a folder in it is taken from the first workspace folder; a bare name is looked up on PATH.
 */
export function trainerPython(): string | undefined {
  const value = config().get<string>('trainer.python', '').trim();
  if (!value) return undefined;
  const root = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return value.includes('/') && !path.isAbsolute(value) && root ? path.join(root, value) : value;
}

/**
 * Remembers a policy choice for this workspace (Select Policy, Use Trained Model as Policy) in the
 * editor's workspace state. It writes no settings file: a person who wants the choice in
 * `.vscode/settings.json` (to share it) sets `rehearsal.policy.*` there.
 */
export async function savePolicyChoice(choice: PolicyChoice): Promise<void> {
  if (!selections) throw new Error('keepPolicySelectionsIn was not called at activation');
  await selections.update(SELECTED_POLICY, choice);
}

/** `rehearsal.judge.endpoint` and `rehearsal.judge.model`: the judge of runs started from the editor (empty: none). */
export function judgeSettings(): { endpoint: string; model: string } {
  const c = config();
  return {
    endpoint: c.get<string>('judge.endpoint', '').trim(),
    model: c.get<string>('judge.model', '').trim(),
  };
}

/** The value of `rehearsal.servers` (the shape of mcp.json's `servers`). */
export function settingServers(): unknown {
  return config().get('servers', {});
}

/** How runs started from the editor play their episodes (SETTING_INVALID for a number out of range). */
export function runDefaults(): Partial<RunSettings> {
  const c = config();
  return runDefaultsFromSettings((key) => c.get(key));
}

/** `rehearsal.run.concurrency`: episodes in flight, or undefined for the policy kind's default. */
export function runConcurrency(): number | undefined {
  const c = config();
  return concurrencyFromSettings((key) => c.get(key));
}

/** Who annotations are written by: the setting, or the OS user name. */
export function annotationAuthor(): string {
  const set = config().get<string>('annotations.author', '').trim();
  if (set) return set;
  try {
    return os.userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}
