import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { DeviceSetting } from '../core/policy/onnx/device';
import { MAX_CONCURRENCY } from '../core/runner/concurrency';
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
  'rehearsal.trainer.python',
] as const;

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION);
}

/** The policy chosen in the settings (throws a coded error that says which setting to fix). */
export function policyChoice(): PolicyChoice {
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

/** CPU threads of the policy host (undefined: its own choice). */
export function policyThreads(): number | undefined {
  const n = config().get<number>('policy.threads', 0);
  return n > 0 ? n : undefined;
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

/** Writes the policy choice: to the workspace when one is open (policies belong to projects), else to the user settings. */
export async function savePolicyChoice(choice: PolicyChoice): Promise<void> {
  const c = config();
  const target = vscode.workspace.workspaceFolders?.length
    ? vscode.ConfigurationTarget.Workspace
    : vscode.ConfigurationTarget.Global;
  await c.update('policy.kind', choice.kind, target);
  if (choice.kind === 'modelFolder') await c.update('policy.modelFolder', choice.folder, target);
  if (choice.kind === 'endpoint') {
    await c.update('policy.endpoint.url', choice.url, target);
    await c.update('policy.endpoint.model', choice.model, target);
  }
}

/** The value of `rehearsal.servers` (the shape of mcp.json's `servers`). */
export function settingServers(): unknown {
  return config().get('servers', {});
}

/** How runs started from the editor play their episodes. */
export function runDefaults(): Partial<RunSettings> {
  const c = config();
  const temperature = Math.max(0, c.get<number>('run.temperature', 0));
  const seed = Math.trunc(c.get<number>('run.seed', 0));
  return {
    episodesPerTask: Math.max(1, Math.trunc(c.get<number>('run.episodesPerTask', 1))),
    sampling: { act: { temperature, seed }, rehearse: { temperature, seed } },
    onParseError: c.get<string>('run.onParseError', 'end') === 'feedback' ? 'feedback' : 'end',
    reward: c.get<string>('run.reward', 'studio') === 'envace' ? 'envace' : 'studio',
    parse: c.get<string>('run.parse', 'studio') === 'envace' ? 'envace' : 'studio',
    privateRehearsal: {
      budget: Math.max(1, Math.trunc(c.get<number>('run.privateRehearsal.budget', 3))),
      order:
        c.get<string>('run.privateRehearsal.order', 'sequential') === 'parallel'
          ? 'parallel'
          : 'sequential',
    },
  };
}

/** `rehearsal.run.concurrency`: episodes in flight, or undefined for the policy kind's default. */
export function runConcurrency(): number | undefined {
  const n = config().get<number | null>('run.concurrency', null);
  return typeof n === 'number' && Number.isFinite(n)
    ? Math.max(1, Math.min(MAX_CONCURRENCY, Math.trunc(n)))
    : undefined;
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
