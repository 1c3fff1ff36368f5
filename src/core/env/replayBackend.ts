import { canonicalJson } from '../base/canonicalJson';
import type { JsonObject, JsonValue } from '../base/json';
import type { ToolDefinition } from '../protocol/types';
import type { BackendAnswer, ToolBackend } from './backend';
import { envError } from './errors';
import type { ReplayRecording } from './replayRecording';
import type { ToolResultContent } from '../fidelity/responseValue';
import { clip } from '../base/clip';

function callKey(tool: string, args: JsonValue): string {
  return `${tool}\u0000${canonicalJson(args)}`;
}

/**
 * Actual responses from a recording. A call is answered by the recorded answer of the same tool
 * with canonically equal arguments; repeated identical calls get the recorded answers in order, and
 * the last one again once they run out. A call with no recorded answer is NO_RECORDED_ANSWER: an
 * answer is never invented.
 */
export class ReplayBackend implements ToolBackend {
  private readonly answers = new Map<string, ToolResultContent[]>();
  private readonly used = new Map<string, number>();

  constructor(
    readonly name: string,
    private readonly recording: ReplayRecording,
  ) {
    for (const c of recording.calls) {
      const key = callKey(c.tool, c.arguments);
      const list = this.answers.get(key) ?? [];
      list.push(c.response);
      this.answers.set(key, list);
    }
  }

  async startEpisode(): Promise<void> {
    this.used.clear();
  }

  tools(): ToolDefinition[] {
    return this.recording.tools;
  }

  async call(tool: string, args: JsonObject): Promise<BackendAnswer> {
    const key = callKey(tool, args);
    const list = this.answers.get(key);
    if (!list) {
      const known = this.recording.calls
        .filter((c) => c.tool === tool)
        .slice(0, 3)
        .map((c) => canonicalJson(c.arguments));
      const hint = known.length
        ? ` Recorded arguments for ${tool}: ${known.join('; ')}.`
        : ` The recording has no call of ${tool}.`;
      return {
        error: envError(
          'NO_RECORDED_ANSWER',
          `No recorded answer for ${tool} with arguments ${clip(canonicalJson(args), 300)}.${hint}`,
        ),
      };
    }
    const i = this.used.get(key) ?? 0;
    this.used.set(key, i + 1);
    return { response: structuredClone(list[Math.min(i, list.length - 1)]) };
  }

  async snapshot(): Promise<JsonValue | null> {
    return null;
  }

  dispose(): void {
    /* nothing held */
  }
}
