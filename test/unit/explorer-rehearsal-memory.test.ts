// What the editor shows of a private rehearsal's memory (issue 41): the memory a committed episode
// read, and the imagined attempts it was made from, an `outcomes` memory line by line, read from a
// trace the real runner recorded (a scripted policy and bank, in process).
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { memoryTreeChildren, memoryTreeParent } from '../../src/core/explorer/memoryTree';
import { loadRehearsalMemory } from '../../src/core/explorer/rehearsalMemory';
import type { TraceTreeNode } from '../../src/core/explorer/tree';
import { episodeNode, traceTreeChildren } from '../../src/core/explorer/tree';
import { TraceLibrary } from '../../src/core/trace/index/library';
import type { TraceEvent } from '../../src/core/trace/format/schema';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import { serializeTraceEvent } from '../../src/core/trace/format/writer';
import { TraceIndex } from '../../src/core/trace/index/traceIndex';
import {
  PRIVATE_RUN_CONDENSED,
  PRIVATE_RUN_OUTCOMES,
  recordPrivateRun,
} from '../builders/privateRun';
import { useTempDir } from '../support/tempDir';

/** The committed episode of the recorded run: three attempts (e1-e3), then e4. */
const COMMITTED = 'e4';

async function record(
  dir: string,
  options: Parameters<typeof recordPrivateRun>[2] = {},
): Promise<string> {
  const summary = await recordPrivateRun(dir, 'private-memory', options);
  assert.equal(summary.status, 'completed', JSON.stringify(summary.error));
  return summary.traceFile;
}

/** A copy of the trace with `change` applied to its events (or only those it keeps). */
async function rewrite(
  file: string,
  change: (events: TraceEvent[]) => TraceEvent[],
): Promise<string> {
  const { events } = await readTraceEvents(file);
  const copy = path.join(path.dirname(file), 'copy.jsonl');
  await fs.writeFile(
    copy,
    change(events)
      .map((e) => serializeTraceEvent(e) + '\n')
      .join(''),
  );
  return copy;
}

describe('a committed episode’s rehearsal memory, read from its trace', () => {
  const tmp = useTempDir();

  it('an outcomes memory: each line with the attempts and calls behind it, each attempt with its lines', async () => {
    const index = await TraceIndex.build(await record(tmp()));
    const memory = await loadRehearsalMemory(index, COMMITTED);
    assert.ok(memory);
    assert.equal(memory.kind, 'outcomes');
    assert.equal(memory.text, PRIVATE_RUN_OUTCOMES);
    assert.equal(memory.mapped, true);
    assert.equal(memory.unmapped, undefined);
    assert.deepEqual(memory.lines, [
      {
        text: PRIVATE_RUN_OUTCOMES.split('\n')[0],
        attempts: [1, 2],
        calls: [
          { attempt: 1, episodeId: 'e1', callId: 'e1.t2.c1', tool: 'transfer_between_accounts' },
          { attempt: 2, episodeId: 'e2', callId: 'e2.t2.c1', tool: 'transfer_between_accounts' },
        ],
      },
      { text: 'Imagined attempt 3: no write', attempts: [3], calls: [] },
    ]);
    assert.deepEqual(
      memory.attempts.map((a) => [a.attempt, a.episodeId, a.lines]),
      [
        [1, 'e1', [0]],
        [2, 'e2', [0]],
        [3, 'e3', [1]],
      ],
    );
    for (const a of memory.attempts)
      assert.match(a.description, /^(success|failure) · reward /, a.description);
  });

  it('the servers’ read-only hints are not in the trace: the memory’s own lines tell which tools were writes', async () => {
    // The bank says get_account writes (the name says read): its three calls make a line.
    const writesOnRead = await TraceIndex.build(
      await record(tmp(), {
        readOnlyHints: new Map([
          ['get_account', false],
          ['transfer_between_accounts', false],
        ]),
      }),
    );
    const a = (await loadRehearsalMemory(writesOnRead, COMMITTED))!;
    assert.equal(a.mapped, true);
    assert.deepEqual(
      a.lines.map((l) => [l.text, l.attempts]),
      [
        ['Imagined get_account -> ok (x3)', [1, 2, 3]],
        [PRIVATE_RUN_OUTCOMES.split('\n')[0], [1, 2]],
      ],
    );
    assert.deepEqual(
      a.lines[0].calls.map((c) => c.callId),
      ['e1.t1.c1', 'e2.t1.c1', 'e3.t1.c1'],
    );
  });

  it('a tool its server calls read-only, though named like a write, made no line', async () => {
    const dir = path.join(tmp(), 'read-only');
    const index = await TraceIndex.build(
      await record(dir, {
        readOnlyHints: new Map([
          ['get_account', true],
          ['transfer_between_accounts', true],
        ]),
      }),
    );
    const memory = (await loadRehearsalMemory(index, COMMITTED))!;
    assert.equal(memory.text, 'Imagined attempts 1, 2, 3: no write');
    assert.equal(memory.mapped, true);
    assert.deepEqual(memory.lines[0].attempts, [1, 2, 3]);
    assert.deepEqual(
      memory.attempts.map((a) => a.lines),
      [[0], [0], [0]],
    );
  });

  it('while the committed episode plays, its memory is read from its start', async () => {
    const file = await record(tmp());
    const live = await rewrite(file, (events) =>
      events.slice(
        0,
        events.findIndex((e) => e.type === 'episode' && e.episodeId === COMMITTED) + 1,
      ),
    );
    const index = await TraceIndex.build(live);
    assert.equal(index.episode(COMMITTED)?.end, undefined, 'the committed episode has not ended');
    const memory = (await loadRehearsalMemory(index, COMMITTED))!;
    assert.equal(memory.text, PRIVATE_RUN_OUTCOMES);
    assert.equal(memory.mapped, true);
    assert.deepEqual(
      memory.lines.map((l) => l.attempts),
      [[1, 2], [3]],
    );
  });

  it('a condensed memory: its text, and the attempts beside it, with no line mapped', async () => {
    const index = await TraceIndex.build(await record(tmp(), { memory: 'condensed' }));
    const memory = (await loadRehearsalMemory(index, COMMITTED))!;
    assert.equal(memory.kind, 'condensed');
    assert.equal(memory.text, PRIVATE_RUN_CONDENSED);
    assert.equal(memory.mapped, false);
    assert.equal(memory.unmapped, undefined);
    assert.deepEqual(
      memory.lines,
      PRIVATE_RUN_CONDENSED.split('\n').map((text) => ({ text, attempts: [], calls: [] })),
    );
    assert.deepEqual(
      memory.attempts.map((a) => [a.attempt, a.episodeId, a.lines]),
      [
        [1, 'e1', []],
        [2, 'e2', []],
        [3, 'e3', []],
      ],
    );
  });

  it('an outcomes memory its attempts do not make is shown as recorded, and says why it is not mapped', async () => {
    const edited = 'Imagined transfer_between_accounts -> ok';
    const file = await rewrite(await record(tmp()), (events) =>
      events.map((e) =>
        e.type === 'episode.end' && e.episodeId === COMMITTED ? { ...e, memory: edited } : e,
      ),
    );
    const memory = (await loadRehearsalMemory(await TraceIndex.build(file), COMMITTED))!;
    assert.equal(memory.text, edited);
    assert.equal(memory.mapped, false);
    assert.match(memory.unmapped!, /not what the imagined attempts in this trace make/);
    assert.deepEqual(memory.lines, [{ text: edited, attempts: [], calls: [] }]);
    assert.equal(memory.attempts.length, 3);
  });

  it('an imagined episode, or one that is not there, has no memory', async () => {
    const index = await TraceIndex.build(await record(tmp()));
    assert.equal(await loadRehearsalMemory(index, 'e1'), undefined);
    assert.equal(await loadRehearsalMemory(index, 'e9'), undefined);
  });
});

describe('the Trace Explorer rows of a rehearsal memory', () => {
  const tmp = useTempDir();
  let library: TraceLibrary;
  afterEach(() => library?.dispose());

  const rowsOf = (nodes: TraceTreeNode[]) => nodes.map((n) => [n.kind, n.label, n.description]);

  async function committedRows(
    options: Parameters<typeof recordPrivateRun>[2] = {},
    cut?: (events: TraceEvent[]) => TraceEvent[],
  ): Promise<TraceTreeNode[]> {
    let file = await record(tmp(), options);
    if (cut) file = await rewrite(file, cut);
    library = new TraceLibrary();
    await library.setFiles([file]);
    const [run] = traceTreeChildren(library);
    const committed = traceTreeChildren(library, run).find((n) => n.entityId === COMMITTED)!;
    assert.equal(committed.label, 'e4 bank-foresight-0001 (committed)');
    return traceTreeChildren(library, committed);
  }

  it('a committed episode opens on its memory: each line with its attempts, each attempt with its lines', async () => {
    const [memory, ...turns] = await committedRows();
    assert.deepEqual(rowsOf([memory]), [
      ['memory', 'rehearsal memory', 'outcomes · from 3 imagined attempts (e1–e3)'],
    ]);
    assert.deepEqual(
      turns.map((t) => t.kind),
      ['turn', 'turn', 'turn'],
    );
    const rows = await memoryTreeChildren(library, memory);
    assert.deepEqual(
      rows.map((r) => [
        r.kind,
        r.label,
        r.description.replace(/ · (success|failure) · reward \d\.\d\d/, ''),
      ]),
      [
        ['memoryLine', PRIVATE_RUN_OUTCOMES.split('\n')[0], 'attempts 1, 2'],
        ['memoryLine', 'Imagined attempt 3: no write', 'attempt 3'],
        ['attempt', 'attempt 1', 'e1 · line 1'],
        ['attempt', 'attempt 2', 'e2 · line 1'],
        ['attempt', 'attempt 3', 'e3 · line 2'],
      ],
    );
    // A line opens on the imagined calls that made it; the no-write line on the attempts it names.
    assert.deepEqual(rowsOf(await memoryTreeChildren(library, rows[0])), [
      ['memoryCall', 'attempt 1 · transfer_between_accounts', 'e1.t2.c1'],
      ['memoryCall', 'attempt 2 · transfer_between_accounts', 'e2.t2.c1'],
    ]);
    const named = await memoryTreeChildren(library, rows[1]);
    assert.deepEqual(
      named.map((r) => [r.kind, r.label, r.entityId]),
      [['attempt', 'attempt 3', 'e3']],
    );
    // Every row has an id of its own, and a parent to reveal it through.
    const all = [memory, ...rows, ...(await memoryTreeChildren(library, rows[0])), ...named];
    assert.equal(new Set(all.map((r) => r.id)).size, all.length);
    const parentOf = (n: TraceTreeNode) =>
      memoryTreeParent(library, n, (file, ep) => episodeNode(file, library.index(file)!, ep));
    assert.equal((await parentOf(memory))?.entityId, COMMITTED);
    assert.equal((await parentOf(rows[1]))?.id, memory.id);
    assert.equal((await parentOf(rows[2]))?.id, memory.id);
    assert.equal((await parentOf(named[0]))?.id, rows[1].id);
  });

  it('while the committed episode has not acted yet, it opens on its memory already', async () => {
    const rows = await committedRows({}, (events) =>
      events.slice(
        0,
        events.findIndex((e) => e.type === 'episode' && e.episodeId === COMMITTED) + 1,
      ),
    );
    assert.deepEqual(
      rows.map((r) => r.kind),
      ['memory'],
    );
    assert.deepEqual(
      (await memoryTreeChildren(library, rows[0])).map((r) => r.label),
      [...PRIVATE_RUN_OUTCOMES.split('\n'), 'attempt 1', 'attempt 2', 'attempt 3'],
    );
  });

  it('a condensed memory: its lines, then the attempts, with no line opening on attempts', async () => {
    const [memory] = await committedRows({ memory: 'condensed' });
    assert.equal(memory.description, 'condensed · from 3 imagined attempts (e1–e3)');
    const rows = await memoryTreeChildren(library, memory);
    assert.deepEqual(
      rows.map((r) => [r.kind, r.label, r.hasChildren]),
      [
        ...PRIVATE_RUN_CONDENSED.split('\n').map((l) => ['memoryLine', l, false]),
        ['attempt', 'attempt 1', false],
        ['attempt', 'attempt 2', false],
        ['attempt', 'attempt 3', false],
      ],
    );
  });
});
