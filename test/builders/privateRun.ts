import type { JsonObject } from '../../src/core/base/json';
import { MEMORY_SYSTEM_PROMPT } from '../../src/core/runner/privateRehearsal';
import type { RunSummary } from '../../src/core/runner/runner';
import { runTasks } from '../../src/core/runner/runner';
import type { MemoryKind } from '../../src/core/runner/settings';
import type { LoadedTask } from '../../src/core/tasks/format/taskFile';
import {
  ScriptedEnvironment,
  ScriptedPolicy,
  actResult,
  callText,
  jsonOutcome,
  rehearseResult,
  resultText,
  toolNamed,
} from './scriptedPolicy';

/**
 * A private-rehearsal run recorded by the real runner, in process (a scripted policy and a scripted
 * bank: no model, no server, no process), for tests of what the studio shows of a rehearsal memory.
 * Three imagined attempts: the first two read the account and try the transfer, which the rehearsal
 * refuses; the third reads the account and answers without a write. Then the committed episode.
 */

/** The bank's tools: one read, one write. */
export const PRIVATE_RUN_TOOLS = [
  toolNamed('get_account', 'An account.'),
  toolNamed('transfer_between_accounts', 'Move money between two accounts.'),
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

/** What a scripted private run's policy writes and rehearses. */
export interface PrivateScript {
  /** Its condensation of the attempts (the `condensed` memory). */
  condensed: string;
  /** The imagined response of `get_account`. */
  rehearsedAccount: JsonObject;
  /** The imagined response of the transfer: a refusal. */
  rehearsedRefusal: JsonObject;
  /** Its last answer after a transfer. */
  answer: string;
  /** The session (`e<N>:act`) of an attempt that answers without a write, and that answer. */
  noWrite?: { session: string; answer: string };
}

/** The script of {@link recordPrivateRun}: the third attempt answers without a write. */
export const PRIVATE_RUN_SCRIPT: PrivateScript = {
  condensed: PRIVATE_RUN_CONDENSED,
  rehearsedAccount: { account_id: 'CHK0000001', type: 'cd', owner: 'C0000001' },
  rehearsedRefusal: { error: 'Transfers out of a cd account are refused.', account: 'CHK0000001' },
  answer: 'I moved the money.',
  noWrite: { session: 'e3:act', answer: 'That account is a cd account; I did not move the money.' },
};

/**
 * A policy that reads the account, then transfers (except in `script.noWrite`'s attempt), then
 * answers; in imagination the transfer is refused as `script` says.
 */
export const scriptedPrivatePolicy = (script: PrivateScript = PRIVATE_RUN_SCRIPT) =>
  new ScriptedPolicy({
    act: (request) => {
      const tools = request.messages.filter((m) => m.role === 'tool').length;
      const noWrite = request.session === script.noWrite?.session;
      return actResult(
        request.messages[0]?.content === MEMORY_SYSTEM_PROMPT
          ? script.condensed
          : tools === 0
            ? callText('get_account', { account_id: 'CHK0000001' })
            : tools === 1 && !noWrite
              ? callText('transfer_between_accounts', {
                  from_account_id: 'CHK0000001',
                  to_account_id: 'SAV0000002',
                  amount: 50,
                })
              : noWrite
                ? script.noWrite!.answer
                : script.answer,
      );
    },
    rehearse: (request) => {
      // The call section comes last in the prompt: the tool named last is the one rehearsed.
      const prompt = request.messages.at(-1)!.content;
      const transfer =
        prompt.lastIndexOf('transfer_between_accounts') > prompt.lastIndexOf('get_account');
      return rehearseResult(
        resultText(transfer ? script.rehearsedRefusal : script.rehearsedAccount),
      );
    },
  });

/** The bank: the account is a checking account, and the transfer goes through. */
export const scriptedPrivateBank = (
  readOnlyHints: ReadonlyMap<string, boolean> = PRIVATE_RUN_HINTS,
) =>
  new ScriptedEnvironment({
    tools: PRIVATE_RUN_TOOLS,
    readOnlyHints,
    respond: (name) =>
      jsonOutcome(
        name === 'get_account'
          ? { account_id: 'CHK0000001', type: 'checking', owner: 'C0000001' }
          : { transfer_id: 'T0000004', from_account_id: 'CHK0000001', amount: 50 },
      ),
    snapshot: () => ({ bank: {} }),
  });

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
    policy: scriptedPrivatePolicy(),
    openEnvironment: () => Promise.resolve(scriptedPrivateBank(readOnlyHints)),
    settings: { mode: 'private', privateRehearsal: { budget: 3, order: 'sequential', memory } },
  });
}
