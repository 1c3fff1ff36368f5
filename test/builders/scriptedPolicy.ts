import type { JsonValue } from '../../src/core/base/json';
import type { CallOutcome, Environment, EnvironmentSnapshot } from '../../src/core/env/types';
import type {
  ActRequest,
  ActResult,
  Policy,
  RehearseRequest,
  RehearseResult,
} from '../../src/core/policy/types';
import { parseActOutput } from '../../src/core/protocol/actParser';
import { parseRehearsalOutput } from '../../src/core/protocol/rehearsalParser';
import type { ToolDefinition } from '../../src/core/protocol/types';

/**
 * Hand-written policies and environments for runner tests: fixed texts through the real parsers, so
 * that a test asserts what the runner does with an answer, never what a model happens to write.
 */

/** An act turn's text as a tool call. */
export const callText = (name: string, args: JsonValue) =>
  `\n<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

/** A rehearsal's text for a predicted response. */
export const resultText = (value: JsonValue) =>
  `\n<execution_result>\n${JSON.stringify(value)}\n</execution_result>`;

/** A tool definition with no parameters of note. */
export const toolNamed = (name: string, description = `${name}.`): ToolDefinition => ({
  name,
  description,
  parameters: { type: 'object', properties: {} },
});

/** How a scripted generation was sampled, beyond its text. */
interface Sampled {
  sampledText?: string;
  finish?: ActResult['finish'];
}

/** An act turn of `text`, parsed as the runner's policies parse theirs. */
export function actResult(text: string, sampled: Sampled = {}): ActResult {
  return {
    text,
    ...(sampled.sampledText !== undefined ? { sampledText: sampled.sampledText } : {}),
    parse: parseActOutput(text),
    finish: sampled.finish ?? 'eos',
    tokens: { prompt: 10, completion: 5 },
    latencyMs: 1,
  };
}

/** One rehearsal sample of `text`, stopped on `</execution_result>` unless said otherwise. */
export function rehearseResult(text: string, sampled: Sampled = {}): RehearseResult {
  return {
    samples: [
      {
        text,
        ...(sampled.sampledText !== undefined ? { sampledText: sampled.sampledText } : {}),
        parse: parseRehearsalOutput(text),
        finish: sampled.finish ?? 'stop',
      },
    ],
    tokens: { prompt: 10, completion: 5 },
    latencyMs: 1,
  };
}

/** A policy whose acts and rehearsals are functions of their requests; it records every request. */
export class ScriptedPolicy implements Policy {
  readonly info: Policy['info'];
  readonly acts: ActRequest[] = [];
  readonly rehearsals: RehearseRequest[] = [];

  constructor(
    private readonly script: {
      act: (request: ActRequest, n: number) => ActResult;
      rehearse?: (request: RehearseRequest, n: number) => RehearseResult;
      kind?: Policy['info']['kind'];
    },
  ) {
    this.info = { kind: script.kind ?? 'reference', id: 'scripted' };
  }

  act(request: ActRequest): Promise<ActResult> {
    const n = this.acts.push(request);
    return Promise.resolve(this.script.act(request, n));
  }

  rehearse(request: RehearseRequest): Promise<RehearseResult> {
    const n = this.rehearsals.push(request);
    if (!this.script.rehearse) throw new Error('This scripted policy does not rehearse.');
    return Promise.resolve(this.script.rehearse(request, n));
  }

  endSession(): void {}
  dispose(): void {}
}

/** An environment whose tools answer by `respond`; every call is recorded, and `snapshot` says what it holds. */
export class ScriptedEnvironment implements Environment {
  readonly source = 'mcp' as const;
  readonly calls: { name: string; args: JsonValue }[] = [];

  constructor(
    private readonly world: {
      tools: ToolDefinition[];
      respond: (name: string, args: JsonValue) => CallOutcome;
      snapshot?: () => EnvironmentSnapshot;
      readOnlyHints?: ReadonlyMap<string, boolean>;
      /** Called as each episode starts (a world that keeps state resets here). */
      onStart?: () => void;
      /** The user's own tools (τ²'s dual control) and how they answer. */
      user?: { tools: ToolDefinition[]; respond: (name: string, args: JsonValue) => CallOutcome };
    },
  ) {
    if (world.readOnlyHints) this.readOnlyHints = () => world.readOnlyHints!;
    const user = world.user;
    if (user) {
      this.userTools = () => user.tools;
      this.callUserTool = (name, args) => {
        this.userCalls.push({ name, args });
        return Promise.resolve(user.respond(name, args));
      };
    }
  }

  readOnlyHints?: () => ReadonlyMap<string, boolean>;
  userTools?: () => ToolDefinition[];
  callUserTool?: (name: string, args: JsonValue) => Promise<CallOutcome>;
  /** The user's calls, in order. */
  readonly userCalls: { name: string; args: JsonValue }[] = [];

  startEpisode(): Promise<void> {
    this.world.onStart?.();
    return Promise.resolve();
  }
  tools(): ToolDefinition[] {
    return this.world.tools;
  }
  call(name: string, args: JsonValue): Promise<CallOutcome> {
    this.calls.push({ name, args });
    return Promise.resolve(this.world.respond(name, args));
  }
  snapshot(): Promise<EnvironmentSnapshot> {
    return Promise.resolve(this.world.snapshot?.() ?? {});
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  dispose(): void {}
}

/** A tool's answer of `value` as JSON text, from `server`. */
export const jsonOutcome = (value: JsonValue, server = 'bank'): CallOutcome => ({
  response: { text: [JSON.stringify(value)] },
  latencyMs: 1,
  server,
});
