// What the editor shows of a private rehearsal's memory (issue 41): the memory a committed episode
// read, and the imagined attempts it was made from, an `outcomes` memory line by line, read from a
// trace the real runner recorded (a scripted policy and bank, in process).
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { loadRehearsalMemory } from '../../src/core/explorer/rehearsalMemory';
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
