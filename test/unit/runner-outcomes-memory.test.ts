// Private rehearsal's `outcomes` memory (issue 41): one line per imagined write, no identifier, no
// argument, no fragment of a rehearsal that did not parse, bounded whatever the attempts were.
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import type { JsonValue } from '../../src/core/base/json';
import { isWriteTool, namedLikeRead } from '../../src/core/env/writeTools';
import { IdentifierSlots, hasIdentifier } from '../../src/core/protocol/identifierSlots';
import {
  MAX_OUTCOME_LINES,
  MAX_OUTCOMES_BYTES,
  MAX_REASON_BYTES,
  outcomesMemory,
  outcomesMemoryLines,
} from '../../src/core/runner/outcomesMemory';
import type { AttemptCall, ImaginedAttempt } from '../../src/core/runner/outcomesMemory';
import { rehearsedToolResult, simulatorErrorText } from '../../src/core/runner/toolMessages';
import type { EpisodeTranscript, TranscriptCall } from '../../src/core/tasks/checks/transcript';
import { BANK_TOOLS } from '../../src/servers/bank/tools';
import { RETAIL_TOOLS } from '../../src/servers/retail/tools';

/** A call whose imagined response is `value`, as an imagined episode's transcript records it. */
const imagined = (name: string, value: JsonValue, args: JsonValue = {}): TranscriptCall => ({
  name,
  arguments: args,
  outcome: { response: rehearsedToolResult(value) },
});

/** A call whose rehearsal did not parse: the act read the simulator's error in its place. */
const unparsed = (name: string, message: string): TranscriptCall => ({
  name,
  arguments: {},
  outcome: {
    response: {
      text: [simulatorErrorText('SIMULATOR_JSON_DECODE_ERROR', message)],
      isError: true,
    },
  },
});

const attempt = (...calls: TranscriptCall[]): EpisodeTranscript => ({
  turns: [{ user: 'Move $50 from CHK0000001.', calls, answer: 'Done.' }],
  snapshot: { ok: false, error: 'imagined' },
});

const READ = imagined('get_account', { account_id: 'CHK0000001', type: 'cd' });
const REFUSED = imagined(
  'transfer_between_accounts',
  { error: 'account is frozen', code: 'FROZEN' },
  { from_account_id: 'CHK0000001', amount: 50 },
);
const OK = imagined('pay_bill', { ok: true, payment_id: 'PAY0000007', amount: 12.5 });

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
/** What the promise of no identifier means: identifier slots find nothing to number or reveal. */
const numbersNothing = (text: string) => {
  const slots = new IdentifierSlots();
  return slots.hide(text) === text && slots.reveal(text) === text;
};

describe('private rehearsal: the outcomes memory', () => {
  it('a refused write: the tool, refused, and the reason as the rehearsal gave it', () => {
    assert.equal(
      outcomesMemory([attempt(READ, REFUSED)]),
      'Imagined transfer_between_accounts -> refused: account is frozen',
    );
  });

  it('an ok write, and reads are left out', () => {
    assert.equal(outcomesMemory([attempt(READ, OK)]), 'Imagined pay_bill -> ok');
  });

  it('a rehearsal that did not parse is unknown, and none of its text is kept', () => {
    const memory = outcomesMemory([
      attempt(unparsed('pay_bill', 'Expecting value: <tool_call>{"payee_id": "P0000001"')),
    ]);
    assert.equal(memory, 'Imagined pay_bill -> unknown');
  });

  it('a call that was never made, and a response that is not JSON, are unknown', () => {
    const notMade: TranscriptCall = {
      name: 'pay_bill',
      arguments: null,
      // The runner's own code, outside the environment's (episode.ts, refuseCall).
      outcome: { error: { code: 'CALL_LIMIT', message: 'not made' } },
    } as unknown as TranscriptCall;
    const text: TranscriptCall = {
      name: 'freeze_card',
      arguments: {},
      outcome: { response: { text: ['Card CARD0000001 frozen'] } },
    };
    assert.equal(
      outcomesMemory([attempt(notMade, text)]),
      'Imagined pay_bill -> unknown\nImagined freeze_card -> unknown',
    );
  });

  it('an attempt with no write says so, by its number', () => {
    assert.equal(
      outcomesMemory([attempt(READ, REFUSED), attempt(READ), attempt()]),
      'Imagined transfer_between_accounts -> refused: account is frozen\nImagined attempts 2, 3: no write',
    );
    assert.equal(
      outcomesMemory([attempt(OK), attempt(READ)]).split('\n')[1],
      'Imagined attempt 2: no write',
    );
  });

  it('an id in the reason becomes a neutral word; arguments never appear', () => {
    const memory = outcomesMemory([
      attempt(
        imagined(
          'transfer_between_accounts',
          {
            error: {
              message:
                'Account CHK0000001 of C0000001 (jane.doe@example.com, +1-555-123-4567) is frozen; see #W0000002 and C#1',
            },
          },
          { from_account_id: 'CHK0000001', memo: 'secret-memo' },
        ),
      ),
    ]);
    assert.equal(
      memory,
      'Imagined transfer_between_accounts -> refused: Account ID of ID (ID, ID) is frozen; see #ID and ID',
    );
    assert.ok(!hasIdentifier(memory) && numbersNothing(memory));
    assert.ok(!memory.includes('secret-memo'));
  });

  it('a reason with markup or JSON keeps only its words', () => {
    const memory = outcomesMemory([
      attempt(
        imagined('pay_bill', {
          error: '<execution_result>{"status": "declined"}</execution_result>',
        }),
      ),
    ]);
    assert.equal(memory, 'Imagined pay_bill -> refused: status : declined');
  });

  it('a very long reason is cut to its bound', () => {
    const memory = outcomesMemory([attempt(imagined('pay_bill', { error: 'é'.repeat(2000) }))]);
    const reason = memory.replace('Imagined pay_bill -> refused: ', '');
    assert.ok(bytes(reason) <= MAX_REASON_BYTES, `${bytes(reason)} bytes`);
    assert.ok(reason.endsWith('…'));
  });

  it('identical lines once with a count; many attempts stay within the bounds, the rest counted', () => {
    assert.equal(
      outcomesMemory([attempt(REFUSED), attempt(READ, REFUSED), attempt(OK, REFUSED)]),
      'Imagined transfer_between_accounts -> refused: account is frozen (x3)\nImagined pay_bill -> ok',
    );
    const many = Array.from({ length: 40 }, (_, i) =>
      attempt(imagined(`close_account_${'x'.repeat(i % 7)}${i}`, { error: 'r'.repeat(100) })),
    );
    const memory = outcomesMemory(many);
    const lines = memory.split('\n');
    assert.equal(lines.length <= MAX_OUTCOME_LINES, true, `${lines.length} lines`);
    assert.ok(bytes(memory) <= MAX_OUTCOMES_BYTES, `${bytes(memory)} bytes`);
    assert.match(lines.at(-1)!, /^\(\d+ more lines\)$/);
    const shown = lines.length - 1;
    assert.equal(lines.at(-1), `(${40 - shown} more lines)`);
  });

  it('many attempts with no write name the first ones and count the rest', () => {
    const memory = outcomesMemory(Array.from({ length: 20 }, () => attempt(READ)));
    assert.equal(memory, 'Imagined attempts 1, 2, 3, 4, 5, 6, 7, 8 and 12 more: no write');
  });

  it('the environment’s read-only hints decide over the name', () => {
    const hints = new Map([
      ['apply_hold', true],
      ['get_refund', false],
    ]);
    const memory = outcomesMemory(
      [
        attempt(
          imagined('apply_hold', { ok: true }),
          imagined('get_refund', { ok: false, reason: 'too late' }),
        ),
      ],
      hints,
    );
    assert.equal(memory, 'Imagined get_refund -> refused: too late');
  });
});

/** An attempt read back from a trace: its calls carry the trace's call ids. */
const traced = (attemptNo: number, ...calls: TranscriptCall[]): ImaginedAttempt => ({
  turns: [
    {
      calls: calls.map((c, i): AttemptCall => ({ ...c, callId: `e${attemptNo}.t${i + 1}.c1` })),
    },
  ],
});

describe('the outcomes memory, line by line: which attempts made each line', () => {
  it('each line names the attempts and the calls behind it; identical writes share a line', () => {
    const lines = outcomesMemoryLines([
      traced(1, READ, REFUSED),
      traced(2, OK),
      traced(3, READ),
      traced(4, REFUSED, OK),
    ]);
    assert.deepEqual(lines, [
      {
        text: 'Imagined transfer_between_accounts -> refused: account is frozen (x2)',
        attempts: [1, 4],
        calls: [
          { attempt: 1, tool: 'transfer_between_accounts', callId: 'e1.t2.c1' },
          { attempt: 4, tool: 'transfer_between_accounts', callId: 'e4.t1.c1' },
        ],
      },
      {
        text: 'Imagined pay_bill -> ok (x2)',
        attempts: [2, 4],
        calls: [
          { attempt: 2, tool: 'pay_bill', callId: 'e2.t1.c1' },
          { attempt: 4, tool: 'pay_bill', callId: 'e4.t2.c1' },
        ],
      },
      { text: 'Imagined attempt 3: no write', attempts: [3], calls: [] },
    ]);
  });

  it('one attempt that writes the same line twice is named once, with both calls', () => {
    const [line] = outcomesMemoryLines([traced(1, OK, OK)]);
    assert.equal(line.text, 'Imagined pay_bill -> ok (x2)');
    assert.deepEqual(line.attempts, [1]);
    assert.deepEqual(
      line.calls.map((c) => c.callId),
      ['e1.t1.c1', 'e1.t2.c1'],
    );
  });

  it('the no-write line names every attempt behind it, those it only counts too', () => {
    const lines = outcomesMemoryLines(Array.from({ length: 10 }, (_, i) => traced(i + 1, READ)));
    assert.equal(lines.length, 1);
    assert.equal(lines[0].text, 'Imagined attempts 1, 2, 3, 4, 5, 6, 7, 8 and 2 more: no write');
    assert.deepEqual(lines[0].attempts, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('the line counting the lines left out names the attempts and calls of those lines', () => {
    const many = Array.from({ length: 20 }, (_, i) =>
      traced(i + 1, imagined(`close_account_${i}`, { error: 'r'.repeat(100) })),
    );
    const lines = outcomesMemoryLines(many);
    const last = lines.at(-1)!;
    const shown = lines.length - 1;
    assert.equal(last.text, `(${20 - shown} more lines)`);
    assert.deepEqual(
      last.attempts,
      Array.from({ length: 20 - shown }, (_, i) => shown + i + 1),
    );
    assert.deepEqual(
      last.calls.map((c) => c.callId),
      last.attempts.map((n) => `e${n}.t1.c1`),
    );
  });

  it('the memory is the lines joined, for the runner and the editor alike', () => {
    const attempts = [traced(1, READ, REFUSED), traced(2), traced(3, OK)];
    const hints = new Map([['pay_bill', true]]);
    assert.equal(
      outcomesMemory(attempts, hints),
      outcomesMemoryLines(attempts, hints)
        .map((l) => l.text)
        .join('\n'),
    );
    assert.deepEqual(
      outcomesMemoryLines(attempts, hints).map((l) => [l.text, l.attempts]),
      [
        ['Imagined transfer_between_accounts -> refused: account is frozen', [1]],
        ['Imagined attempts 2, 3: no write', [2, 3]],
      ],
    );
  });

  it('no attempt: one line, from no attempt', () => {
    assert.deepEqual(outcomesMemoryLines([]), [
      { text: 'No imagined attempt.', attempts: [], calls: [] },
    ]);
  });
});

describe('which tools are writes', () => {
  it('a tool named like a read is not a write; any other name is', () => {
    for (const name of [
      'get_account',
      'find_user_id_by_email',
      'list_payees',
      'search_flights',
      'getCustomer',
      'GetOrder',
      'LIST_ITEMS',
      'calculate',
      'think',
    ])
      assert.ok(namedLikeRead(name), name);
    for (const name of [
      'transfer_between_accounts',
      'pay_bill',
      'getaway_booking',
      'listen',
      'cancel_pending_order',
      'update',
      '',
    ])
      assert.ok(!namedLikeRead(name), name);
  });

  it('the name rule agrees with the built-in domains, whose write tools are the ones with a target', () => {
    for (const tool of [...BANK_TOOLS, ...RETAIL_TOOLS])
      assert.equal(isWriteTool(tool.name), tool.target !== undefined, tool.name);
  });
});

/** Text rich in identifiers, placeholders, markup and odd characters. */
const awkwardText = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        'C0000001',
        '#W2760537',
        'credit_card_5385845',
        'jane@example.com',
        '+1-555-123-4567',
        '1234567',
        'CHK0000001',
        'C#1',
        'id#2',
        'C1234',
        '12345',
        '_',
        '@',
        '.',
        '-',
        '#',
        ' ',
        '\n',
        '<tool_call>',
        '</execution_result>',
        '{"a": 1}',
        'é',
        '\u0000',
        '\u200b',
        '…',
        'x',
      ),
      fc.string({ maxLength: 8 }),
      fc.string({ unit: 'binary', maxLength: 4 }),
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''));

const toolName = fc.oneof(
  fc.constantFrom('transfer_between_accounts', 'get_account', 'pay_bill', 'list_payees'),
  awkwardText,
);

const response: fc.Arbitrary<TranscriptCall['outcome']> = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue().map((v) => ({ response: rehearsedToolResult(v as JsonValue) })),
  fc
    .record({ error: awkwardText, message: awkwardText, reason: awkwardText })
    .map((v) => ({ response: rehearsedToolResult(v) })),
  fc
    .record({ error: fc.record({ message: awkwardText }) })
    .map((v) => ({ response: rehearsedToolResult(v) })),
  awkwardText.map((t) => ({ response: { text: [t], isError: true } })),
  awkwardText.map((t) => ({
    response: { text: [simulatorErrorText('NO_EXECUTION_RESULT_TAG_FOUND', t)], isError: true },
  })),
  fc.constant({
    error: { code: 'CALL_LIMIT', message: 'C0000001' },
  } as unknown as TranscriptCall['outcome']),
);

const transcript: fc.Arbitrary<EpisodeTranscript> = fc
  .array(
    fc.array(fc.record({ name: toolName, arguments: fc.jsonValue(), outcome: response }), {
      maxLength: 6,
    }),
    { maxLength: 3 },
  )
  .map((turns) => ({
    turns: turns.map((calls) => ({
      user: 'C0000001',
      calls: calls.map((c) => ({ ...c, arguments: c.arguments as JsonValue })),
    })),
    snapshot: { ok: false, error: 'imagined' },
  }));

describe('the outcomes memory, whatever the attempts', () => {
  it('no line holds an identifier or a placeholder, nor markup; the memory stays within its bounds', () => {
    fc.assert(
      fc.property(fc.array(transcript, { maxLength: 12 }), (transcripts) => {
        const memory = outcomesMemory(transcripts);
        const lines = memory.split('\n');
        assert.ok(lines.length <= MAX_OUTCOME_LINES, `${lines.length} lines`);
        assert.ok(bytes(memory) <= MAX_OUTCOMES_BYTES, `${bytes(memory)} bytes`);
        for (const line of lines) {
          assert.ok(numbersNothing(line), line);
          assert.ok(!hasIdentifier(line), line);
          // The one `>` is the arrow the memory writes.
          assert.ok(!/[<{}"]/.test(line) && (line.match(/>/g) ?? []).length <= 1, line);
        }
      }),
      { numRuns: 300 },
    );
  });
});
