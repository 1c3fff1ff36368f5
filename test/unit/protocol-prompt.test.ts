import * as assert from 'node:assert/strict';
import type { RehearsePromptInput } from '../../src/core/protocol/rehearsePrompt';
import type { RecordedExample } from '../../src/core/protocol/types';
import {
  buildRehearsePrompt,
  COMPACT_REHEARSE_SYSTEM_PROMPT,
  historyLine,
  parseRehearsePromptOptions,
  REHEARSE_SYSTEM_PROMPT,
  selectExamples,
} from '../../src/core/protocol/rehearsePrompt';
import { SAMPLE_TOOLS } from '../builders/samples';

const input: RehearsePromptInput = {
  tools: SAMPLE_TOOLS,
  examples: [
    { tool: 'get_order_details', arguments: { order_id: '#W1' }, result: { status: 'pending' } },
  ],
  history: [{ role: 'user', content: 'Where is my order?' }],
  latestText: 'Let me check.',
  call: { name: 'get_order_details', arguments: { order_id: '#W1' } },
};

describe('rehearse prompt', () => {
  it('takes the default for an option given as undefined (a setting left unset)', () => {
    const defaults = buildRehearsePrompt(input);
    const unset = buildRehearsePrompt(input, {
      includeTools: undefined,
      maxExamples: undefined,
      includeHistory: undefined,
      maxHistoryBytes: undefined,
      includeLatestText: undefined,
    });
    assert.deepEqual(unset, defaults);
    for (const section of [
      'Candidate tools:',
      'Recorded calls with their real results:',
      'Conversation so far:',
      "The agent's latest output:",
      'Call to simulate:',
    ]) {
      assert.ok(defaults[1].content.includes(section), section);
    }
  });

  it('starts with the simulator system prompt that names the answer format', () => {
    const [system, user] = buildRehearsePrompt(input);
    assert.deepEqual([system.role, user.role], ['system', 'user']);
    assert.equal(system.content, REHEARSE_SYSTEM_PROMPT);
    assert.match(system.content, /<execution_result>\n\{"key": "value"\}\n<\/execution_result>$/);
  });

  it('the compact profile: a one-sentence system prompt, the recent conversation and the call without its schema', () => {
    const long: RehearsePromptInput = {
      ...input,
      history: [
        { role: 'user', content: `Old ${'x'.repeat(700)}` },
        { role: 'user', content: 'Where is my order?' },
        { role: 'tool', name: 'find_user', content: '{"user_id":"u1"}' },
      ],
    };
    const [system, user] = buildRehearsePrompt(long, { profile: 'compact' });
    assert.equal(system.content, COMPACT_REHEARSE_SYSTEM_PROMPT);
    assert.ok(system.content.length < REHEARSE_SYSTEM_PROMPT.length / 4);
    assert.equal(
      user.content,
      [
        'Conversation so far (1 earlier messages omitted):',
        'User: Where is my order?',
        '',
        'Tool[find_user]: {"user_id":"u1"}',
        '',
        'Call to simulate:',
        'Tool: get_order_details',
        'Arguments: {"order_id":"#W1"}',
      ].join('\n'),
    );
    // Its defaults give way to explicit options, as the general profile's do.
    const withTools = buildRehearsePrompt(input, {
      profile: 'compact',
      includeTools: true,
      includeSchema: true,
    })[1].content;
    assert.ok(
      withTools.startsWith('Candidate tools:') && withTools.includes('Input schema: '),
      withTools,
    );
    assert.deepEqual(
      buildRehearsePrompt(input, { profile: 'general' }),
      buildRehearsePrompt(input),
    );
  });

  it('a task without examples gets the same prompt whatever maxExamples is (compact and envace profiles)', () => {
    // Grounded imagination turns examples on for a whole task set (`rollout --max-examples`): the
    // tasks whose reference gave none must keep the prompt the policy was trained on, byte for byte.
    const without: RehearsePromptInput[] = [
      { ...input, examples: undefined },
      { ...input, examples: [] },
    ];
    for (const profile of ['compact', 'envace'] as const)
      for (const task of without) {
        const off = buildRehearsePrompt(task, { profile, maxExamples: 0 });
        for (const maxExamples of [1, 4, 8])
          assert.deepEqual(
            buildRehearsePrompt(task, { profile, maxExamples }),
            off,
            `${profile}, maxExamples ${maxExamples}, examples ${JSON.stringify(task.examples)}`,
          );
      }
  });

  it("with examples and maxExamples > 0, the prompt shows the examples' recorded responses", () => {
    const examples: RecordedExample[] = [
      {
        tool: 'get_order_details',
        arguments: { order_id: '#W7' },
        result: { status: 'delivered', total: 42.5 },
        text: '{"status": "delivered", "total": 42.5}',
      },
      { tool: 'find_user', arguments: { email: 'a@b.c' }, result: { user_id: 'u_0042' } },
    ];
    const task = { ...input, examples };
    const compact = buildRehearsePrompt(task, { profile: 'compact', maxExamples: 4 })[1].content;
    assert.ok(
      compact.startsWith(
        [
          'Recorded calls with their real results:',
          'Tool: get_order_details',
          'Arguments: {"order_id":"#W7"}',
          'Result: {"status":"delivered","total":42.5}',
          '',
          'Tool: find_user',
          'Arguments: {"email":"a@b.c"}',
          'Result: {"user_id":"u_0042"}',
          '',
          'Conversation so far:',
        ].join('\n'),
      ),
      compact,
    );
    // Only the called tool's, at maxExamples 1; none at 0.
    const one = buildRehearsePrompt(task, { profile: 'compact', maxExamples: 1 })[1].content;
    assert.ok(one.includes('"delivered"') && !one.includes('u_0042'), one);
    const off = buildRehearsePrompt(task, { profile: 'compact' })[1].content;
    assert.ok(!off.includes('Recorded calls') && !off.includes('delivered'), off);
    // EnvACE's prompt shows every example, the text a result was parsed from verbatim.
    const envace = buildRehearsePrompt(task, { profile: 'envace' })[1].content;
    assert.ok(envace.includes('Tool execution result:\n{"status": "delivered", "total": 42.5}'));
    assert.ok(envace.includes('find_user') && envace.includes('u_0042'), envace);
  });

  it('options from outside are checked field by field', () => {
    assert.deepEqual(parseRehearsePromptOptions({ profile: 'compact', maxHistoryBytes: 600 }), {
      ok: true,
      options: { profile: 'compact', maxHistoryBytes: 600 },
    });
    assert.deepEqual(parseRehearsePromptOptions({ profile: 'tiny' }), {
      ok: false,
      message: 'rehearsePrompt.profile must be general, compact or envace, not "tiny"',
    });
    assert.match(
      (parseRehearsePromptOptions({ maxExamples: -1 }) as { message: string }).message,
      /maxExamples must be a whole number from 0/,
    );
    assert.match(
      (parseRehearsePromptOptions({ includeTool: false }) as { message: string }).message,
      /rehearsePrompt\.includeTool is not an option \(options: profile, includeTools,/,
    );
    assert.match(
      (parseRehearsePromptOptions({ includeTools: 'no' }) as { message: string }).message,
      /includeTools must be true or false/,
    );
    assert.deepEqual(parseRehearsePromptOptions([]), {
      ok: false,
      message: 'rehearsePrompt must be a JSON object',
    });
  });

  it("selects the called tool's examples first, keeping recorded order", () => {
    const ex = (tool: string, n: number) => ({ tool, arguments: { n }, result: { n } });
    assert.deepEqual(
      selectExamples([ex('a', 1), ex('b', 2), ex('a', 3), ex('c', 4)], 'a', 3).map(
        (e) => e.arguments,
      ),
      [{ n: 1 }, { n: 3 }, { n: 2 }],
    );
    assert.deepEqual(selectExamples([ex('a', 1)], 'z', 0), []);
  });

  it('renders one history message per role', () => {
    assert.equal(historyLine({ role: 'system', content: 'secret instructions' }), undefined);
    assert.equal(historyLine({ role: 'user', content: '' }), undefined);
    assert.equal(historyLine({ role: 'assistant', content: '' }), undefined);
    assert.equal(
      historyLine({ role: 'tool', name: 'get_order_details', content: '' }),
      'Tool[get_order_details]: ',
    );
    assert.equal(
      historyLine({
        role: 'assistant',
        content: 'Hi',
        tool_calls: [{ type: 'function', function: { name: 'x', arguments: { b: 1, a: 2 } } }],
      }),
      'Assistant: Hi\n<tool_call>\n{"name": "x", "arguments": {"a":2,"b":1}}\n</tool_call>',
    );
  });
});
