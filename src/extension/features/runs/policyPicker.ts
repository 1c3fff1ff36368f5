import { existsSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { PolicyChoice } from '../../../core/runner/policyChoice';
import { defaultModelFolder } from '../../../core/base/studioRoot';
import { apiKeySecret } from './runController';

type Item = vscode.QuickPickItem & { policy?: PolicyChoice['kind'] };

/**
 * "Select Policy": the embedded default policy, a model folder, an OpenAI-compatible endpoint (URL
 * and model; its API key goes to the editor's secret storage, never to settings), or the reference
 * policy. Undefined when dismissed.
 */
export async function pickPolicy(
  secrets: vscode.SecretStorage,
  current: PolicyChoice | undefined,
): Promise<PolicyChoice | undefined> {
  const picked = await vscode.window.showQuickPick(policyItems(current), {
    title: 'Rehearsal: Select Policy',
    placeHolder: 'Which policy acts and rehearses in runs started from the editor?',
    matchOnDetail: true,
  });
  if (!picked?.policy) return undefined;
  switch (picked.policy) {
    case 'default':
    case 'reference':
      return { kind: picked.policy };
    case 'modelFolder':
      return pickModelFolderPolicy();
    case 'endpoint':
      return askEndpointPolicy(secrets, current);
  }
}

/** The four kinds of policy, the current one marked. */
function policyItems(current: PolicyChoice | undefined): Item[] {
  const defaultReady = existsSync(path.join(defaultModelFolder(), 'onnx', 'model.onnx'));
  const items: Item[] = [
    {
      policy: 'default',
      label: '$(package) Default policy',
      description: defaultReady ? 'the embedded model' : 'not built yet (npm run train:default)',
      detail:
        'The small world-rehearsal policy that ships with the studio; acts and rehearses on this machine.',
    },
    {
      policy: 'modelFolder',
      label: '$(folder) Model folder...',
      description: current?.kind === 'modelFolder' ? current.folder : undefined,
      detail: 'A Hugging Face layout folder with onnx/model.onnx (a checkpoint of yours).',
    },
    {
      policy: 'endpoint',
      label: '$(globe) OpenAI-compatible endpoint...',
      description: current?.kind === 'endpoint' ? `${current.url} ${current.model}` : undefined,
      detail: 'vLLM, SGLang, llama.cpp server or any /v1/chat/completions server.',
    },
    {
      policy: 'reference',
      label: '$(checklist) Reference solutions',
      description: 'fast, deterministic',
      detail: "Plays each task's reference solution. Acts only: nothing is rehearsed.",
    },
  ];
  for (const i of items)
    if (i.policy === current?.kind)
      i.description = `${i.description ? `${i.description} · ` : ''}current`;
  return items;
}

/** A model folder, browsed to; one without an ONNX graph only when the person insists. */
async function pickModelFolderPolicy(): Promise<PolicyChoice | undefined> {
  const folder = (
    await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      canSelectMany: false,
      openLabel: 'Use This Model',
      title: 'Model folder (with onnx/model.onnx)',
    })
  )?.[0]?.fsPath;
  if (!folder) return undefined;
  if (!existsSync(path.join(folder, 'onnx', 'model.onnx'))) {
    const go = await vscode.window.showWarningMessage(
      `${folder} has no onnx/model.onnx; runs will fail until it does. Use it anyway?`,
      'Use It',
      'Cancel',
    );
    if (go !== 'Use It') return undefined;
  }
  return { kind: 'modelFolder', folder };
}

/** An endpoint's URL, model and (optional) key; the key goes to secret storage. */
async function askEndpointPolicy(
  secrets: vscode.SecretStorage,
  current: PolicyChoice | undefined,
): Promise<PolicyChoice | undefined> {
  const url = await vscode.window.showInputBox({
    title: 'Endpoint: base URL',
    prompt: "The server's OpenAI-compatible base URL",
    value: current?.kind === 'endpoint' ? current.url : 'http://127.0.0.1:8000/v1',
    ignoreFocusOut: true,
    validateInput: (v) => {
      try {
        const u = new URL(v);
        return /^https?:$/.test(u.protocol) ? undefined : 'Use an http(s) URL.';
      } catch {
        return 'Not a URL, e.g. http://127.0.0.1:8000/v1';
      }
    },
  });
  if (!url) return undefined;
  const model = await vscode.window.showInputBox({
    title: 'Endpoint: model',
    prompt: 'The model name the server serves',
    value: current?.kind === 'endpoint' ? current.model : '',
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : 'Give the model name.'),
  });
  if (!model) return undefined;
  const hasKey = (await secrets.get(apiKeySecret(url))) !== undefined;
  const key = await vscode.window.showInputBox({
    title: 'Endpoint: API key (optional)',
    prompt: hasKey
      ? 'A key is stored for this URL; leave empty to keep it.'
      : "Kept in the editor's secret storage, never in settings. Leave empty if the server needs none.",
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return undefined;
  if (key) await secrets.store(apiKeySecret(url), key);
  return { kind: 'endpoint', url: url.trim(), model: model.trim() };
}
