import * as path from 'node:path';
import { studioRoot } from '../base/studioRoot';
import type { PolicyInfo } from '../trace/schema';

/**
 * A policy in plain words, with the device it ran on: `the default policy (models/default) on cpu`,
 * `model folder /m/qwen on cuda`, `endpoint http://host/v1 (model x)`, `reference solutions`.
 * Why other devices were not used stays in the trace (`policy.devices`).
 */
export function policyLabel(info: PolicyInfo): string {
  const device = info.device ? ` on ${info.device}` : '';
  switch (info.kind) {
    case 'onnx': {
      let isDefault = false;
      try { isDefault = path.resolve(info.id) === path.join(studioRoot(), 'models', 'default'); } catch { /* not inside an installation */ }
      return isDefault ? `the default policy (models/default)${device}` : `model folder ${info.id}${device}`;
    }
    case 'endpoint': return `endpoint ${info.id.replace(/ (?=[^ ]+$)/, ', model ')}`;
    case 'reference': return 'reference solutions (no rehearsals)';
    case 'recorded': return `recorded responses ${info.id}`;
  }
}
