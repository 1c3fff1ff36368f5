import * as path from 'node:path';
import { defaultModelFolder } from '../../base/studioRoot';
import type { PolicyInfo } from './schema';

/**
 * A policy in plain words, with the device it ran on: `the default policy (models/default) on cpu`,
 * `model folder /m/qwen on cuda`, `endpoint http://host/v1 (model x)`, `reference solutions`.
 * Why other devices were not used stays in the trace (`policy.devices`).
 */
export function policyLabel(info: PolicyInfo, traceFile?: string): string {
  const device = info.device ? ` on ${info.device}` : '';
  switch (info.kind) {
    case 'onnx': {
      const shown = shownPolicyPath(info.id, traceFile);
      return shown === DEFAULT_POLICY_PATH
        ? `the default policy (models/default)${device}`
        : `model folder ${shown}${device}`;
    }
    case 'endpoint':
      return `endpoint ${info.id.replace(/ (?=[^ ]+$)/, ', model ')}`;
    case 'reference':
      return 'reference solutions (no rehearsals)';
    case 'recorded':
      return `recorded responses ${info.id}`;
  }
}

/** How the studio's own default policy is shown, wherever the studio is installed. */
export const DEFAULT_POLICY_PATH = 'models/default';

/**
 * A model folder or recording path as rows and headers show it: the studio's default policy as
 * `models/default`, a folder inside the workspace that holds the trace (`<ws>/.rehearsal/runs/<id>/
 * trace.jsonl`) relative to that workspace, anything else as recorded. Absolute paths of temporary
 * folders pushed every badge out of a 300-pixel side bar.
 */
export function shownPolicyPath(id: string, traceFile?: string): string {
  if (!path.isAbsolute(id)) return id.split(path.sep).join('/');
  try {
    if (path.resolve(id) === defaultModelFolder()) return DEFAULT_POLICY_PATH;
  } catch {
    /* not inside an installation */
  }
  // The default policy of another installation of the extension (a run recorded before an update
  // moved it to `<publisher>.rehearsal-studio-<new version>`): still the default policy.
  if (isInstalledDefaultPolicy(id)) return DEFAULT_POLICY_PATH;
  const runs = traceFile ? path.dirname(path.dirname(path.resolve(traceFile))) : undefined;
  if (
    runs &&
    path.basename(runs) === 'runs' &&
    path.basename(path.dirname(runs)) === '.rehearsal'
  ) {
    const workspace = path.dirname(path.dirname(runs));
    const relative = path.relative(workspace, path.resolve(id));
    if (relative && !relative.startsWith('..') && !path.isAbsolute(relative))
      return relative.split(path.sep).join('/');
  }
  return id;
}

/** `<editor extensions>/<publisher>.rehearsal-studio-<version>[-<platform>]/models/default`. */
function isInstalledDefaultPolicy(id: string): boolean {
  const parts = path.resolve(id).split(path.sep);
  const [install, models, folder] = parts.slice(-3);
  return (
    models === 'models' &&
    folder === 'default' &&
    /^[a-z0-9-]+\.rehearsal-studio-\d+\.\d+\.\d+/i.test(install ?? '')
  );
}
