import type { JsonObject } from '../../core/base/json';
import type { TaskGenerator } from '../../core/tasks/generator';
import { splitOfSeed } from '../../core/tasks/generator';
import type { TaskFile } from '../../core/tasks/format/taskFile';
import { createBankWorld } from './world';

/** The bank world every choice task is played in: one world, so every task has the same prompt. */
const WORLD_SEED = 0;
const REWARDED = 'find_customer_by_phone';
const OTHER = 'find_customer_by_email';

/**
 * `bank-choice`: GRPO's sanity task family (`npm run measure:grpo-sanity`). The customer gives both
 * an email and a phone number, and either lookup finds them; only the phone lookup is rewarded
 * (a choice nothing in the prompt tells; the one item is that call, so answering without a lookup
 * earns nothing either), and the reference solution takes each way on half the
 * seeds. A policy trained on those demonstrations is near chance (about half its episodes succeed),
 * and GRPO on imagined rollouts, graded by the trajectory items alone, must raise it to nearly all.
 * Every task has the same prompt, so the family is a two-armed bandit with a real tool behind it.
 */
export const BANK_CHOICE_GENERATOR: TaskGenerator = {
  domain: 'bank',
  generate(seed: number): TaskFile {
    const world = createBankWorld(WORLD_SEED);
    const customer = Object.values(world.customers)[0];
    const tool = seed % 2 === 0 ? REWARDED : OTHER;
    const args: JsonObject =
      tool === REWARDED ? { phone: customer.phone } : { email: customer.email };
    return {
      $schema: '../../schemas/task.schema.json',
      version: 1,
      id: `bank-choice-${String(seed).padStart(4, '0')}`,
      description: `Look up the customer (only the phone lookup is rewarded); the reference uses ${tool}.`,
      domain: 'bank',
      split: splitOfSeed(seed),
      seed: WORLD_SEED,
      tags: ['grpo-sanity'],
      system:
        'You are a support agent of a retail bank. Look the customer up, then tell them their customer id.',
      turns: [
        {
          user: `Hi, I'm ${customer.name}: phone ${customer.phone}, email ${customer.email}. What is my customer id?`,
        },
      ],
      servers: { bank: { builtin: 'bank' } },
      tools: [OTHER, REWARDED],
      checks: [
        {
          id: 'phone-lookup',
          kind: 'call',
          tool: REWARDED,
          description: 'looked the customer up by phone (the rewarded choice)',
        },
      ],
      limits: { maxTurns: 4, maxCallsPerTurn: 1, callTimeoutMs: 10_000 },
      reference: {
        turns: [
          {
            calls: [{ name: tool, arguments: args }],
            answer: `Your customer id is ${customer.customer_id}.`,
          },
        ],
      },
    };
  },
};
