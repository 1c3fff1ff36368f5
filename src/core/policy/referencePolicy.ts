import { Disposable } from '../base/disposable';
import { StudioError } from '../base/errors';
import { parseActOutput } from '../protocol/actParser';
import type { TaskFile } from '../tasks/format/taskFile';
import type { ReferenceScriptTurn } from '../tasks/referencePlayer';
import { referenceScript } from '../tasks/referencePlayer';
import type { PolicyInfo } from '../trace/format/schema';
import type { ActRequest, ActResult, Policy, RehearseResult } from './types';

/**
 * The reference policy: plays each task's reference solution (one call per act, then the final
 * answer), reading where it is from the conversation. It acts only; it does not rehearse. Runs with it
 * produce the demonstrations the default policy is trained on.
 */
export class ReferencePolicy extends Disposable implements Policy {
  readonly info: PolicyInfo = { kind: 'reference', id: 'reference' };
  readonly rehearses = false;
  private readonly scripts = new Map<string, ReferenceScriptTurn[]>();

  constructor(tasks: readonly TaskFile[]) {
    super();
    for (const t of tasks) if (t.reference) this.scripts.set(t.id, referenceScript(t));
  }

  async act(request: ActRequest): Promise<ActResult> {
    const script = request.taskId ? this.scripts.get(request.taskId) : undefined;
    if (!script)
      throw new StudioError(
        'NO_REFERENCE',
        `The reference policy has no solution for task ${request.taskId ?? '(unknown)'}; add "reference" to the task file.`,
      );
    const userTurn = request.messages.filter((m) => m.role === 'user').length - 1;
    let lastUser = -1;
    request.messages.forEach((m, i) => {
      if (m.role === 'user') lastUser = i;
    });
    const step = request.messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length;
    const acts = script[userTurn]?.acts ?? [];
    // Past the script (the environment answered unexpectedly): give the scripted final answer.
    const text = acts[Math.min(step, acts.length - 1)] ?? '';
    request.onToken?.(text);
    return {
      text,
      parse: parseActOutput(text),
      finish: 'eos',
      tokens: { prompt: 0, completion: 0 },
      latencyMs: 0,
    };
  }

  async rehearse(): Promise<RehearseResult> {
    throw new StudioError('NO_REHEARSAL', 'The reference policy does not rehearse.');
  }

  endSession(): void {
    // Stateless: the conversation says where it is.
  }
}
