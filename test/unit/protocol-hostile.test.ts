import * as assert from 'node:assert/strict';
import { canonicalJson } from '../../src/core/base/canonicalJson';
import { MAX_JSON_DEPTH } from '../../src/core/base/json';
import { formatToolCalls, parseActOutput, TOOL_CALL_OPEN } from '../../src/core/protocol/actParser';
import {
  EXECUTION_RESULT_OPEN,
  formatRehearsal,
  parseRehearsalOutput,
} from '../../src/core/protocol/rehearsalParser';

const MB = 1024 * 1024;

/** A realistic ~`bytes` JSON document: a page of orders. */
function bigOrders(bytes: number): {
  orders: { order_id: string; status: string; items: { sku: string; price: number }[] }[];
} {
  const orders = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const o = {
      order_id: `#W${1000000 + i}`,
      status: i % 3 ? 'delivered' : 'pending',
      items: [{ sku: `SKU-${i}`, price: (i % 997) + 0.25 }],
    };
    size += JSON.stringify(o).length + 1;
    orders.push(o);
  }
  return { orders };
}

function errorCode(r: ReturnType<typeof parseActOutput>): string | undefined {
  return r.kind === 'error' ? r.error.code : undefined;
}

describe('protocol parsers on hostile input', () => {
  it('empty and whitespace-only input', () => {
    assert.equal(parseActOutput('').kind, 'final');
    assert.equal(parseActOutput(' \n ').kind, 'final');
    for (const text of ['', ' \n\t ']) {
      const r = parseRehearsalOutput(text);
      assert.ok(!r.ok && r.error.code === 'EMPTY_SIMULATOR_OUTPUT');
    }
  });

  it('a 10 MB JSON document inside tags parses completely', () => {
    const doc = bigOrders(10 * MB);
    const body = JSON.stringify(doc);
    assert.ok(body.length >= 10 * MB);
    const act = parseActOutput(formatToolCalls([{ name: 'import_orders', arguments: doc }]));
    assert.equal(act.kind, 'calls');
    if (act.kind === 'calls')
      assert.equal((act.calls[0].arguments as typeof doc).orders.length, doc.orders.length);
    const rehearsal = parseRehearsalOutput(formatRehearsal(body, 'a long answer'));
    assert.ok(rehearsal.ok);
    if (rehearsal.ok)
      assert.equal((rehearsal.value as typeof doc).orders.length, doc.orders.length);
  });

  // No timing assertions: a quadratic scan would take minutes here and hit mocha's timeout.
  it('1 MB of unclosed tool_call openings finishes (no block found)', () => {
    const text = TOOL_CALL_OPEN.repeat(Math.ceil(MB / TOOL_CALL_OPEN.length));
    assert.equal(errorCode(parseActOutput(text)), 'NO_TOOL_CALL_FOUND');
    assert.equal(
      errorCode(parseActOutput('\n</tool_call>'.repeat(40000) + text)),
      'NO_TOOL_CALL_FOUND',
    );
  });

  it('1 MB of unclosed execution_result and think openings finishes', () => {
    const opens = EXECUTION_RESULT_OPEN.repeat(Math.ceil(MB / EXECUTION_RESULT_OPEN.length));
    const a = parseRehearsalOutput(opens);
    assert.ok(!a.ok && a.error.code === 'EXECUTION_RESULT_TAG_MALFORMED');
    const b = parseRehearsalOutput('<think>'.repeat(MB / 8) + opens);
    assert.ok(!b.ok && b.error.code === 'EXECUTION_RESULT_TAG_MALFORMED');
    const c = parseRehearsalOutput(
      '<think></think>'.repeat(MB / 16) + '\n<execution_result>\n[1]\n</execution_result>',
    );
    assert.ok(
      c.ok &&
        c.think ===
          Array(MB / 16)
            .fill('')
            .join('\n\n'),
    );
  });

  it('100,000-deep nesting neither throws nor overflows the stack: past 256 levels it is a coded error', () => {
    // Accepted, such a value broke every recursive writer after the parser (JSON.stringify overflows
    // near 5,000 levels, and the trace writer is one).
    const depth = 100_000;
    const deep = '['.repeat(depth) + ']'.repeat(depth);
    const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);
    const act = parseActOutput(
      `\n<tool_call>\n{"name": "nest", "arguments": {"a": ${deep}}}\n</tool_call>`,
    );
    assert.ok(
      act.kind === 'error' &&
        act.error.code === 'NON_SERIALIZABLE_ARGUMENTS' &&
        act.error.message.includes(`deeper than ${MAX_JSON_DEPTH} levels`),
      JSON.stringify(act).slice(0, 200),
    );
    assert.equal(
      parseActOutput(
        `\n<tool_call>\n{"name": "nest", "arguments": {"a": ${nested(MAX_JSON_DEPTH - 1)}}}\n</tool_call>`,
      ).kind,
      'calls',
    );
    const rehearsal = parseRehearsalOutput(`\n<execution_result>\n${deep}\n</execution_result>`);
    assert.ok(
      !rehearsal.ok &&
        rehearsal.error.code === 'SIMULATOR_JSON_DECODE_ERROR' &&
        rehearsal.error.message.includes('deeper than'),
    );
    const limit = parseRehearsalOutput(
      `\n<execution_result>\n${nested(MAX_JSON_DEPTH)}\n</execution_result>`,
    );
    assert.ok(limit.ok);
    if (limit.ok) assert.equal(canonicalJson(limit.value).length, 2 * MAX_JSON_DEPTH);
    const objects = '{"a":'.repeat(depth) + '1e999' + '}'.repeat(depth);
    assert.equal(
      errorCode(
        parseActOutput(`\n<tool_call>\n{"name": "nest", "arguments": ${objects}}\n</tool_call>`),
      ),
      'NON_SERIALIZABLE_ARGUMENTS',
    );
    const unbalanced = parseRehearsalOutput(
      `\n<execution_result>\n${'['.repeat(depth)}\n</execution_result>`,
    );
    assert.ok(!unbalanced.ok && unbalanced.error.code === 'SIMULATOR_JSON_DECODE_ERROR');
  });

  it('every truncation of a tool call is an error or a final answer, never a call', () => {
    const full =
      'Checking.' +
      formatToolCalls([
        { name: 'get_order_details', arguments: { order_id: '#W2611340', note: 'ünïcode 🚀' } },
      ]);
    assert.equal(parseActOutput(full).kind, 'calls');
    const start = full.indexOf('<tool_call>') + '<tool_call>'.length;
    for (let n = 0; n < full.length; n++) {
      const r = parseActOutput(full.slice(0, n));
      assert.equal(r.kind, n < start ? 'final' : 'error', `cut at ${n}: ${JSON.stringify(r)}`);
    }
  });

  it('every truncation of a rehearsal is a parse error, never a value', () => {
    const full = formatRehearsal(
      canonicalJson({ order_id: '#W2611340', items: [{ price: 47.1 }] }),
      'pending, probably',
    );
    assert.ok(parseRehearsalOutput(full).ok);
    for (let n = 0; n < full.length; n++) {
      const r = parseRehearsalOutput(full.slice(0, n));
      assert.equal(r.ok, false, `cut at ${n}`);
    }
  });
});
