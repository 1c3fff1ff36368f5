import type { JsonObject } from '../../src/core/base/json';
import type { ToolDefinition } from '../../src/core/protocol/types';
import { TraceBuilder } from './traceBuilder';

const call = (name: string, args: object, preamble = '') =>
  `${preamble}\n<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

/** Tools of the sample retail runs. */
export const SAMPLE_TOOLS: ToolDefinition[] = [
  {
    name: 'find_user_id_by_email',
    description: 'Find a user id by email.',
    parameters: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
  },
  {
    name: 'get_order_details',
    description: 'Get the status and items of an order.',
    parameters: {
      type: 'object',
      properties: { order_id: { type: 'string' } },
      required: ['order_id'],
    },
  },
  {
    name: 'cancel_pending_order',
    description: 'Cancel an order that is still pending.',
    parameters: {
      type: 'object',
      properties: {
        order_id: { type: 'string' },
        reason: { type: 'string', enum: ['no longer needed', 'ordered by mistake'] },
      },
      required: ['order_id', 'reason'],
    },
  },
];

const order = (status: string, extra: JsonObject = {}): JsonObject => ({
  order_id: '#W2611340',
  user_id: 'mia_garcia_4516',
  status,
  items: [
    { item_id: '6777246137', name: 'Desk Lamp', price: 47.1, options: { color: 'black' } },
    { item_id: '4648362606', name: 'Water Bottle', price: 23.25 },
  ],
  ...extra,
});

/**
 * A shadow run on retail tasks with the cases a person meets: exact rehearsals, a rehearsal that
 * guessed the wrong state (pending vs delivered) and so the wrong error state, a rehearsal parse
 * error, an act parse error, a plain-text tool answer, and a tool that timed out.
 */
export function sampleShadowRun(runId = '20261129-120000-shadow-sample'): TraceBuilder {
  const t = new TraceBuilder(runId, 'shadow');

  const e1 = t.episode('retail-test-0007', {
    instruction:
      'Cancel my order #W2611340, I ordered it by mistake. My email is mia.garcia@example.com.',
    tools: SAMPLE_TOOLS,
  });
  e1.turn(
    call('find_user_id_by_email', { email: 'mia.garcia@example.com' }, 'Let me find your account.'),
    'Cancel my order #W2611340, I ordered it by mistake. My email is mia.garcia@example.com.',
  )
    .rehearse(0, { user_id: 'mia_garcia_4516' })
    .actual(0, { json: { user_id: 'mia_garcia_4516' } });
  e1.turn(call('get_order_details', { order_id: '#W2611340' }))
    .rehearse(
      0,
      order('pending'),
      'The user wants to cancel, so the order is probably still pending.',
    )
    .actual(0, {
      json: order('delivered', {
        fulfillments: [{ tracking_id: ['357962501027'], item_ids: ['6777246137', '4648362606'] }],
      }),
    });
  e1.turn(call('cancel_pending_order', { order_id: '#W2611340', reason: 'ordered by mistake' }))
    .rehearse(0, {
      order_id: '#W2611340',
      status: 'cancelled',
      refund: { amount: 70.35, method: 'original payment' },
    })
    .actual(0, { json: { error: 'Non-pending order cannot be cancelled' }, isError: true });
  e1.turn(
    'Your order #W2611340 was already delivered, so it cannot be cancelled. I can help you return it instead.',
  );
  e1.end({
    reward: 0.5,
    success: false,
    answer: 'Your order #W2611340 was already delivered...',
    checks: [
      { id: 'order-not-cancelled', kind: 'state', weight: 1, passed: true },
      {
        id: 'offers-return',
        kind: 'answer_contains',
        weight: 1,
        passed: false,
        detail: 'answer does not mention the return steps',
      },
    ],
  });

  const e2 = t.episode('retail-test-0012', {
    instruction: 'What is the status of order #W2611340?',
    tools: SAMPLE_TOOLS,
  });
  e2.turn(
    call('get_order_details', { order_id: '#W2611340' }),
    'What is the status of order #W2611340?',
  )
    .rehearse(
      0,
      order('delivered', {
        fulfillments: [{ tracking_id: ['357962501027'], item_ids: ['6777246137', '4648362606'] }],
      }),
    )
    .actual(0, {
      json: order('delivered', {
        fulfillments: [{ tracking_id: ['357962501027'], item_ids: ['6777246137', '4648362606'] }],
      }),
    });
  e2.turn(
    '\n<tool_call>\n{"name": "get_order_details", "arguments": {"order_id": "#W2611340"\n</tool_call>',
  );
  e2.turn(call('get_order_details', { order_id: '#W2611340' }))
    .rehearseText(0, 'The order was delivered; I will report it.')
    .actual(0, { json: order('delivered') });
  e2.turn('It was delivered.');
  e2.end({
    reward: 1,
    success: true,
    answer: 'It was delivered.',
    checks: [{ id: 'answer-status', kind: 'answer_contains', weight: 1, passed: true }],
  });

  const e3 = t.episode('retail-test-0031', {
    instruction: 'Find the account for noah.kim@example.com.',
    tools: SAMPLE_TOOLS,
  });
  e3.turn(
    call('find_user_id_by_email', { email: 'noah.kim@example.com' }),
    'Find the account for noah.kim@example.com.',
  )
    .rehearse(0, { user_id: 'noah_kim_1180' })
    .actual(0, { text: 'Error: user not found', isError: true });
  e3.turn(call('find_user_id_by_email', { email: 'noah.kim@example.org' }))
    .rehearse(0, { user_id: 'noah_kim_1180' })
    .actual(0, {
      error: {
        code: 'TOOL_TIMEOUT',
        message: 'find_user_id_by_email did not answer within 10000 ms',
      },
    });
  e3.end({
    status: 'failed',
    reward: 0,
    success: false,
    error: { code: 'TOOL_TIMEOUT', message: 'the tool did not answer in time' },
  });
  return t.end();
}

/** A second, small imagine-mode run, so that the explorer shows more than one run. */
export function sampleImagineRun(runId = '20261129-113000-imagine-sample'): TraceBuilder {
  const t = new TraceBuilder(runId, 'imagine');
  const e1 = t.episode('retail-train-0101', {
    instruction: 'Is order #W9000001 pending?',
    tools: SAMPLE_TOOLS,
  });
  e1.turn(call('get_order_details', { order_id: '#W9000001' }), 'Is order #W9000001 pending?')
    .rehearse(0, { order_id: '#W9000001', status: 'pending', items: [] })
    .actual(0, { json: { order_id: '#W9000001', status: 'pending', items: [] } });
  e1.turn('Yes, it is still pending.');
  e1.end({ reward: 1, success: true, answer: 'Yes, it is still pending.' });
  return t.end();
}

/**
 * A second shadow run of the sample's first task by another policy, to compare with the sample
 * run: it rehearses the user lookup wrong (the sample's was exact) and the order exactly (the
 * sample's missed its status).
 */
export function sampleAfterRun(runId = '20261202-120000-shadow-after'): TraceBuilder {
  const t = new TraceBuilder(runId, 'shadow', 'checkpoints/after');
  const e1 = t.episode('retail-test-0007', {
    instruction:
      'Cancel my order #W2611340, I ordered it by mistake. My email is mia.garcia@example.com.',
    tools: SAMPLE_TOOLS,
  });
  e1.turn(
    call('find_user_id_by_email', { email: 'mia.garcia@example.com' }),
    'Cancel my order #W2611340, I ordered it by mistake. My email is mia.garcia@example.com.',
  )
    .rehearse(0, { user_id: 'mia_garcia_0000' })
    .actual(0, { json: { user_id: 'mia_garcia_4516' } });
  e1.turn(call('get_order_details', { order_id: '#W2611340' }))
    .rehearse(0, order('delivered'))
    .actual(0, { json: order('delivered') });
  e1.turn('Your order #W2611340 was already delivered, so it cannot be cancelled.');
  e1.end({ reward: 1, success: true, answer: 'It was delivered.' });
  return t.end();
}
