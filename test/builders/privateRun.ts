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
import { MEMORY_SYSTEM_PROMPT } from '../../src/core/runner/privateRehearsal';
import type { RunSummary } from '../../src/core/runner/runner';
import { runTasks } from '../../src/core/runner/runner';
import type { MemoryKind } from '../../src/core/runner/settings';
import type { LoadedTask } from '../../src/core/tasks/format/taskFile';

/**
 * A private-rehearsal run recorded by the real runner, in process (a scripted policy and a scripted
 * bank: no model, no server, no process), for tests of what the studio shows of a rehearsal memory.
 * Three imagined attempts: the first two read the account and try the transfer, which the rehearsal
 * refuses; the third reads the account and answers without a write. Then the committed episode.
 */

const tool = (name: string, description: string): ToolDefinition => ({
  name,
  description,
  parameters: { type: 'object', properties: {} },
});

/** The bank's tools: one read, one write. */
export const PRIVATE_RUN_TOOLS = [
  tool('get_account', 'An account.'),
  tool('transfer_between_accounts', 'Move money between two accounts.'),
];

/** The task the run plays. */
export const PRIVATE_RUN_TASK: LoadedTask = {
  file: '/tasks/bank-foresight-0001.task.json',
  baseDir: '/tasks',
  task: {
    version: 1,
    id: 'bank-foresight-0001',
    turns: [{ user: 'Please move $50 from CHK0000001 to SAV0000002. I am customer C0000001.' }],
    servers: { bank: { builtin: 'bank' } },
    checks: [{ kind: 'answer', contains: ['moved'] }],
  },
};

/** The `outcomes` memory the run's committed episode reads. */
export const PRIVATE_RUN_OUTCOMES = [
  'Imagined transfer_between_accounts -> refused: Transfers out of a cd account are refused. (x2)',
  'Imagined attempt 3: no write',
].join('\n');

/** What the policy writes when asked to condense its attempts (the `condensed` memory). */
export const PRIVATE_RUN_CONDENSED =
  'Read the account first.\nA transfer out of a cd account is refused: say so.';

const callText = (name: string, args: JsonValue) =>
  `\n<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
const resultText = (value: JsonValue) =>
  `\n<execution_result>\n${JSON.stringify(value)}\n</execution_result>`;

/**
 * Reads the account, then (except in the third attempt, `e3`) transfers, then answers. In imagination
 * the transfer is refused, with a reason that names the account.
 */
class ScriptedPolicy implements Policy {
  readonly info = { kind: 'reference' as const, id: 'scripted' };

  act(request: ActRequest): Promise<ActResult> {
    const tools = request.messages.filter((m) => m.role === 'tool').length;
    const noWrite = request.session === 'e3:act';
    const text =
      request.messages[0]?.content === MEMORY_SYSTEM_PROMPT
        ? PRIVATE_RUN_CONDENSED
        : tools === 0
          ? callText('get_account', { account_id: 'CHK0000001' })
          : tools === 1 && !noWrite
            ? callText('transfer_between_accounts', {
                from_account_id: 'CHK0000001',
                to_account_id: 'SAV0000002',
                amount: 50,
              })
            : noWrite
              ? 'That account is a cd account; I did not move the money.'
              : 'I moved the money.';
    return Promise.resolve({
      text,
      parse: parseActOutput(text),
      finish: 'eos',
      tokens: { prompt: 10, completion: 5 },
      latencyMs: 1,
    });
  }

  rehearse(request: RehearseRequest): Promise<RehearseResult> {
    // The call section comes last in the prompt: the tool named last is the one rehearsed.
    const prompt = request.messages.at(-1)!.content;
    const transfer =
      prompt.lastIndexOf('transfer_between_accounts') > prompt.lastIndexOf('get_account');
    const text = transfer
      ? resultText({ error: 'Transfers out of a cd account are refused.', account: 'CHK0000001' })
      : resultText({ account_id: 'CHK0000001', type: 'cd', owner: 'C0000001' });
    return Promise.resolve({
      samples: [{ text, parse: parseRehearsalOutput(text), finish: 'stop' }],
      tokens: { prompt: 10, completion: 5 },
      latencyMs: 1,
    });
  }

  endSession(): void {}
  dispose(): void {}
}

/** The bank: the account is a checking account, and the transfer goes through. */
class ScriptedBank implements Environment {
  readonly source = 'mcp' as const;
  constructor(private readonly hints: ReadonlyMap<string, boolean>) {}
  startEpisode(): Promise<void> {
    return Promise.resolve();
  }
  tools(): ToolDefinition[] {
    return PRIVATE_RUN_TOOLS;
  }
  readOnlyHints(): ReadonlyMap<string, boolean> {
    return this.hints;
  }
  call(name: string): Promise<CallOutcome> {
    const value =
      name === 'get_account'
        ? { account_id: 'CHK0000001', type: 'checking', owner: 'C0000001' }
        : { transfer_id: 'T0000004', from_account_id: 'CHK0000001', amount: 50 };
    return Promise.resolve({
      response: { text: [JSON.stringify(value)] },
      latencyMs: 1,
      server: 'bank',
    });
  }
  snapshot(): Promise<EnvironmentSnapshot> {
    return Promise.resolve({ bank: {} });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
  dispose(): void {}
}

/** The bank's own read-only hints, which agree with the tools' names. */
export const PRIVATE_RUN_HINTS: ReadonlyMap<string, boolean> = new Map([
  ['get_account', true],
  ['transfer_between_accounts', false],
]);

/**
 * Plays the run into `<runsDir>/<runId>/trace.jsonl`: three imagined attempts, in sequence, made
 * into a memory of `memory`'s kind, then the committed episode. `readOnlyHints` are the bank's.
 */
export function recordPrivateRun(
  runsDir: string,
  runId: string,
  {
    memory = 'outcomes',
    readOnlyHints = PRIVATE_RUN_HINTS,
  }: { memory?: MemoryKind; readOnlyHints?: ReadonlyMap<string, boolean> } = {},
): Promise<RunSummary> {
  return runTasks({
    runsDir,
    runId,
    tasks: [PRIVATE_RUN_TASK],
    policy: new ScriptedPolicy(),
    openEnvironment: () => Promise.resolve(new ScriptedBank(readOnlyHints)),
    settings: { mode: 'private', privateRehearsal: { budget: 3, order: 'sequential', memory } },
  });
}
