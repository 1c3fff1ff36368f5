// Private rehearsal with `--memory outcomes` through the real runner (issue 41): the committed
// episode reads one line per imagined write, its real conversation gets the same identifier slots
// with and without that memory (which `condensed` cannot promise), and the memory reaches training
// rows as the other kinds do.
import * as assert from 'node:assert/strict';
import { IdentifierSlots } from '../../src/core/protocol/identifierSlots';
import type { ChatMessage } from '../../src/core/protocol/types';
import { MEMORY_SYSTEM_PROMPT } from '../../src/core/runner/privateRehearsal';
import type { RunSummary } from '../../src/core/runner/runner';
import { runTasks } from '../../src/core/runner/runner';
import type { RunSettings } from '../../src/core/runner/settings';
import { runDefaultsFromSettings } from '../../src/core/runner/editorSettings';
import type { LoadedTask } from '../../src/core/tasks/format/taskFile';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import type { TraceEvent } from '../../src/core/trace/format/schema';
import type { DatasetRow } from '../../src/core/training/datasetRow';
import { exportRows, readMemories } from '../../src/core/training/exportRows';
import { scriptedPrivateBank, scriptedPrivatePolicy } from '../builders/privateRun';
import type { ScriptedPolicy } from '../builders/scriptedPolicy';
import { useTempDir } from '../support/tempDir';

const USER = 'Please move $50 from CHK0000001 to SAV0000002. I am customer C0000001.';
const TASK: LoadedTask = {
  file: '/tasks/bank-train-0001.task.json',
  baseDir: '/tasks',
  task: {
    version: 1,
    id: 'bank-train-0001',
    turns: [{ user: USER }],
    servers: { bank: { builtin: 'bank' } },
    checks: [{ kind: 'answer', contains: ['refused'] }],
  },
};

/**
 * Reads the account, transfers, then answers; in imagination the account has an invented owner and
 * the transfer is refused with a reason that names the account. Its condensation (the `condensed`
 * kind) invents a customer, as the memories did.
 */
const scriptedPolicy = () =>
  scriptedPrivatePolicy({
    condensed: 'Customer C0000009 owns CHK0000003; it is frozen.',
    rehearsedAccount: { account_id: 'CHK0000001', type: 'cd', owner: 'C0000007' },
    rehearsedRefusal: { error: 'Transfers out of a cd account are refused (CHK0000001).' },
    answer: 'The transfer was refused.',
  });

const MEMORY_PREFIX = 'Rehearsal memory (from your private rehearsal of this task):\n';
const OUTCOMES =
  'Imagined transfer_between_accounts -> refused: Transfers out of a cd account are refused (ID). (x2)';

interface Played {
  summary: RunSummary;
  events: TraceEvent[];
  policy: ScriptedPolicy;
}

async function playPrivate(
  runsDir: string,
  memory: NonNullable<RunSettings['privateRehearsal']['memory']>,
): Promise<Played> {
  const policy = scriptedPolicy();
  const summary = await runTasks({
    runsDir,
    tasks: [TASK],
    policy,
    openEnvironment: () => Promise.resolve(scriptedPrivateBank()),
    settings: { mode: 'private', privateRehearsal: { budget: 2, order: 'sequential', memory } },
  });
  const { events } = await readTraceEvents(summary.traceFile);
  return { summary, events, policy };
}

const committedStart = (p: Played) =>
  p.events.find(
    (e): e is Extract<TraceEvent, { type: 'episode' }> =>
      e.type === 'episode' && e.role === 'committed',
  )!;

/** The committed episode's last act request: the whole real conversation, after the memory. */
function committedConversation(p: Played): ChatMessage[] {
  const context = committedStart(p).context!;
  const acts = p.policy.acts.filter((a) =>
    a.messages.some((m) => m.role === 'system' && m.content === context),
  );
  return acts.at(-1)!.messages;
}

/**
 * The placeholders of the user's message and the tool responses, hidden as a model with identifier
 * slots reads them: with the memory, and with the memory's system message left out.
 */
function slotsWithAndWithout(p: Played): { with: string[]; without: string[] } {
  const messages = committedConversation(p);
  const context = committedStart(p).context!;
  const real = (hidden: ChatMessage[]) =>
    hidden.filter((m) => m.role === 'user' || m.role === 'tool').map((m) => m.content);
  return {
    with: real(new IdentifierSlots().hideMessages(messages)),
    without: real(
      new IdentifierSlots().hideMessages(messages.filter((m) => m.content !== context)),
    ),
  };
}

describe('private rehearsal with --memory outcomes, through the runner', () => {
  const tmp = useTempDir();

  it('the committed episode reads one line per imagined write, and records it as its memory', async () => {
    const p = await playPrivate(tmp(), 'outcomes');
    assert.equal(p.summary.status, 'completed');
    const start = committedStart(p);
    assert.equal(start.context, `${MEMORY_PREFIX}${OUTCOMES}`);
    const end = p.events.find(
      (e): e is Extract<TraceEvent, { type: 'episode.end' }> =>
        e.type === 'episode.end' && e.episodeId === start.episodeId,
    )!;
    assert.equal(end.memory, OUTCOMES);
    // No condensation act: the memory is built, not written by the policy.
    assert.ok(!p.policy.acts.some((a) => a.messages[0]?.content === MEMORY_SYSTEM_PROMPT));
    // The run's settings say which memory it read.
    const run = p.events.find((e) => e.type === 'run')!;
    assert.equal((run as { settings?: RunSettings }).settings?.privateRehearsal.memory, 'outcomes');
  });

  it('the real conversation gets the same identifier slots with and without the outcomes memory', async () => {
    const p = await playPrivate(tmp(), 'outcomes');
    const slots = slotsWithAndWithout(p);
    assert.deepEqual(slots.with, slots.without);
    assert.equal(slots.with.length, 3, 'the user message and two tool responses');
    assert.match(slots.with[0], /CHK#1 to SAV#1\. I am customer C#1\./);
  });

  it('a condensed memory that names an invented customer renumbers the real one (the hazard outcomes avoids)', async () => {
    const p = await playPrivate(tmp(), 'condensed');
    assert.match(committedStart(p).context!, /C0000009/);
    const slots = slotsWithAndWithout(p);
    assert.match(slots.without[0], /I am customer C#1\./);
    assert.match(slots.with[0], /I am customer C#2\./);
  });

  it('readMemories and --memory-from rows carry the outcomes memory as they carry the others', async () => {
    const p = await playPrivate(tmp(), 'outcomes');
    const context = committedStart(p).context!;
    const memories = await readMemories([p.summary.traceFile]);
    assert.deepEqual([...memories.entries()], [[TASK.task.id, [context]]]);
    const rows: DatasetRow[] = [];
    await exportRows(
      [p.summary.traceFile],
      { actSource: 'demonstration', roles: ['act'], memories: (id) => memories.get(id) ?? [] },
      (r) => rows.push(r),
    );
    // The first imagined attempt read no context: it is written again, read with the memory.
    const first = rows.filter((r) => r.episode === 'e1' && !r.id.endsWith('/memory-1'));
    const again = rows.filter((r) => r.episode === 'e1' && r.id.endsWith('/memory-1'));
    assert.ok(first.length > 0);
    assert.equal(again.length, first.length);
    for (const [i, r] of again.entries()) {
      assert.equal(r.target, first[i].target);
      assert.deepEqual(r.messages, [{ role: 'system', content: context }, ...first[i].messages]);
    }
  });
});

describe("the editor's setting of the memory kind", () => {
  it('rehearsal.run.privateRehearsal.memory picks the kind; an unknown word is the default, condensed', () => {
    const memory = (value: unknown) =>
      runDefaultsFromSettings((key) => (key === 'run.privateRehearsal.memory' ? value : undefined))
        .privateRehearsal?.memory;
    assert.equal(memory('outcomes'), 'outcomes');
    assert.equal(memory('attempts'), 'attempts');
    assert.equal(memory(undefined), 'condensed');
    assert.equal(memory('plan'), 'condensed');
  });
});
