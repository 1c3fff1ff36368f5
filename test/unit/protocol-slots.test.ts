import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import {
  IdentifierSlots,
  RevealingStream,
  hasIdentifier,
  withoutIdentifiers,
} from '../../src/core/protocol/identifierSlots';
import { readPolicySettings } from '../../src/core/policy/policySettings';
import { hideRow } from '../../src/core/training/exportRows';
import type { DatasetRow } from '../../src/core/training/datasetRow';

describe('identifier slots', () => {
  const text =
    'My email is olivia.mitchell@mailbox.test, phone +1-555-311-1660. Order #W2760537, cards CARD702678 and CARD763522, ' +
    'item 6227039837, paid with credit_card_5385845, user priya_chen_7878, customer C442404 on 2025-04-27 for $46.66, zip 95178, ending in 2183.';

  it('hides each identifier behind a placeholder of its kind, numbered by first appearance, and leaves numbers as they are', () => {
    const hidden = new IdentifierSlots().hide(text);
    assert.equal(
      hidden,
      'My email is email#1, phone phone#1. Order #W#1, cards CARD#1 and CARD#2, item id#1, paid with credit_card#1, ' +
        'user priya_chen#1, customer C#1 on 2025-04-27 for $46.66, zip 95178, ending in 2183.',
    );
  });

  it('gives a value the same placeholder every time, and reveals what it hid', () => {
    const slots = new IdentifierSlots();
    const hidden = slots.hide(`${text} Again: C442404, CARD763522.`);
    assert.match(hidden, /Again: C#1, CARD#2\.$/);
    assert.equal(slots.reveal(hidden), `${text} Again: C442404, CARD763522.`);
  });

  it('numbers a conversation the same way as it grows, so earlier turns keep their prompt (and the KV cache)', () => {
    const turns = [
      'Find C442404 please.',
      '{"accounts":["CHK98754706","SAV42098846"],"customer_id":"C442404"}',
      'Moving from SAV42098846 to CHK98754706.',
    ];
    const short = new IdentifierSlots().hideMessages([
      { role: 'user', content: turns[0] },
      { role: 'tool', content: turns[1] },
    ]);
    const long = new IdentifierSlots().hideMessages(
      turns.map((content) => ({ role: 'user' as const, content })),
    );
    assert.deepEqual(
      long.slice(0, 2).map((m) => m.content),
      short.map((m) => m.content),
    );
    assert.equal(long[2].content, 'Moving from SAV#1 to CHK#1.');
  });

  it('turns a placeholder the conversation does not have into a new value of the same shape, the same one each time', () => {
    const slots = new IdentifierSlots();
    slots.hide('customer C442404, card CARD702678, item 6227039837');
    const revealed = slots.reveal(
      '{"customer_id":"C#2","card":"CARD#4","item":"id#2","again":"C#2","email":"email#3","phone":"phone#1","pm":"paypal#2"}',
    );
    assert.deepEqual(JSON.parse(revealed), {
      customer_id: 'C000002',
      card: 'CARD000004',
      item: '9000000002',
      again: 'C000002',
      email: 'someone3@example.invalid',
      phone: '+1-555-000-0001',
      pm: 'paypal_0000002',
    });
    // A new value is an identifier again: the next prompt numbers it like any other.
    assert.equal(
      new IdentifierSlots().hide(revealed),
      '{"customer_id":"C#1","card":"CARD#1","item":"id#1","again":"C#1","email":"email#1","phone":"phone#1","pm":"paypal#1"}',
    );
  });

  it('reveals any text of identifiers and words that it hid (property)', () => {
    const piece = fc.oneof(
      fc.constantFrom(
        'the',
        'order',
        'card',
        'on',
        '2025-04-27',
        '$46.66',
        '95178',
        ',',
        ':',
        '"',
        '{',
        '}',
        ' ',
      ),
      fc
        .tuple(
          fc.constantFrom('C', 'CARD', 'CHK', 'T', 'W'),
          fc.integer({ min: 1000, max: 99_999_999 }),
        )
        .map(([p, n]) => `${p}${n}`),
      fc
        .tuple(
          fc.constantFrom('credit_card', 'gift_card', 'ann_lee'),
          fc.integer({ min: 1000, max: 9_999_999 }),
        )
        .map(([p, n]) => `${p}_${n}`),
      fc
        .tuple(fc.constantFrom('ann', 'bo.li', 'x_y'), fc.integer({ min: 0, max: 99 }))
        .map(([u, n]) => `${u}${n}@example.com`),
      fc.integer({ min: 1_000_000, max: 2_000_000_000 }).map(String),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const original = pieces.join(' ');
        const slots = new IdentifierSlots();
        const hidden = slots.hide(original);
        assert.doesNotMatch(hidden, /\d{7,}|@/, 'no identifier is left in the hidden text');
        assert.equal(slots.reveal(hidden), original);
      }),
      { numRuns: 300 },
    );
  });

  it('streams a revealed text that ends exactly as the finished one', () => {
    const slots = new IdentifierSlots();
    slots.hide('C442404 with #W2760537');
    const generated =
      '<tool_call>\n{"name": "get", "arguments": {"customer_id":"C#1","order":"#W#1","new":"C#12"}}\n</tool_call>';
    for (const size of [1, 2, 3, 7]) {
      let streamed = '';
      const stream = new RevealingStream(slots, (d) => {
        streamed += d;
      });
      for (let i = 0; i < generated.length; i += size) stream.push(generated.slice(i, i + size));
      stream.end();
      assert.equal(streamed, slots.reveal(generated), `chunks of ${size}`);
      assert.doesNotMatch(streamed, /C#|W#/);
    }
  });

  it("hides a training row's messages and target with one numbering, as the policy reads and writes them", () => {
    const row: DatasetRow = {
      v: 1,
      reward: null,
      group: null,
      task: 'bank-0000',
      episode: 'e1',
      id: 'e1/e1.t2/act',
      role: 'act',
      weight: 1,
      source: 'demonstration',
      messages: [
        { role: 'user', content: 'My email is mia@mailbox.test.' },
        { role: 'assistant', content: '{"email":"mia@mailbox.test"}' },
        { role: 'tool', content: '{"customer_id":"C228569"}' },
      ],
      target: '{"name": "get_customer", "arguments": {"customer_id":"C228569"}}',
    };
    const hidden = hideRow(row);
    assert.deepEqual(
      hidden.messages.map((m) => m.content),
      ['My email is email#1.', '{"email":"email#1"}', '{"customer_id":"C#1"}'],
    );
    assert.equal(hidden.target, '{"name": "get_customer", "arguments": {"customer_id":"C#1"}}');
    assert.equal(row.target.includes('C228569'), true, 'the row given is left as it was');
  });

  it("is asked for by a model folder's rehearsal_config.json, and a wrong value there is a clear error", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slots-'));
    try {
      await fs.writeFile(
        path.join(dir, 'rehearsal_config.json'),
        JSON.stringify({ identifierSlots: true }),
      );
      assert.equal((await readPolicySettings(dir)).identifierSlots, true);
      await fs.writeFile(
        path.join(dir, 'rehearsal_config.json'),
        JSON.stringify({ identifierSlots: 'yes' }),
      );
      await assert.rejects(
        readPolicySettings(dir),
        (err: Error & { code?: string }) =>
          err.code === 'MODEL_FILE_BROKEN' &&
          /identifierSlots must be true or false/.test(err.message),
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

describe('text without identifiers', () => {
  it('replaces every identifier and placeholder by a word; dates, amounts and short numbers stay', () => {
    const text =
      'Order #W2760537 of C442404 (olivia@mailbox.test, +1-555-311-1660, credit_card_5385845, C#1) on 2025-04-27 for $46.66, zip 95178';
    const plain = withoutIdentifiers(text);
    assert.equal(plain, 'Order #ID of ID (ID, ID, ID, ID) on 2025-04-27 for $46.66, zip 95178');
    assert.ok(hasIdentifier(text) && !hasIdentifier(plain));
    const slots = new IdentifierSlots();
    assert.equal(slots.hide(plain), plain, 'nothing left to number');
  });

  it('never leaves one, nor grows the text, whatever the text', () => {
    const part = fc.oneof(
      fc.constantFrom(
        'C1234',
        '1234567',
        'a_1234',
        'x@y.z',
        'C#1',
        '#',
        '_',
        '@',
        '.',
        ' ',
        '9',
        'A',
      ),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 20 }), (parts) => {
        const text = parts.join('');
        const plain = withoutIdentifiers(text);
        assert.ok(!hasIdentifier(plain), plain);
        assert.ok(plain.length <= text.length);
      }),
    );
  });
});
