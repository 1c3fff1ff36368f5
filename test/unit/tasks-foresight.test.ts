import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import type { JsonObject } from '../../src/core/base/json';
import type { TaskFile } from '../../src/core/tasks/format/taskFile';
import { findTaskFault } from '../../src/core/tasks/format/loader';
import { generateTasks, NO_DEMONSTRATION_TAG } from '../../src/core/tasks/generator';
import { DomainSession } from '../../src/servers/common/domain';
import { BANK_DOMAIN, BANK_FORESIGHT_DOMAIN } from '../../src/servers/bank/domain';
import {
  BANK_FORESIGHT_GENERATOR,
  BANK_FORESIGHT_LOGGING_GENERATOR,
  BANK_FORESIGHT_TWIN_GENERATOR,
} from '../../src/servers/bank/foresightGenerator';
import { BUILTIN_GENERATORS } from '../../src/servers/generators';

/**
 * The rule as the family's documentation states it, written out here apart from the server's code:
 * transfers out of a certificate of deposit, a retirement account or a joint account are refused.
 */
function ruleRefuses(lookup: JsonObject): boolean {
  return lookup['type'] === 'cd' || lookup['type'] === 'ira' || lookup['ownership'] === 'joint';
}

function ok(session: DomainSession<unknown>, tool: string, args: JsonObject): JsonObject {
  const r = session.call(tool, args);
  assert.ok(r.ok, `${tool} ${JSON.stringify(args)}: ${JSON.stringify(r)}`);
  return r.value;
}

/** The bank's tools that change nothing, which an agent may call for free. */
const READ_TOOLS = BANK_DOMAIN.tools.filter((t) => !t.target).map((t) => t.name);

const refused = (t: TaskFile) => t.tags!.includes('foresight-refused');
const transferCalls = (t: TaskFile) =>
  t
    .reference!.turns.flatMap((turn) => turn.calls)
    .filter((c) => c.name === 'transfer_between_accounts');

describe('tasks: the bank-foresight family', () => {
  it('the rule is stationary: for any seed and transfer, the server refuses exactly when the rule over the lookup says so', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.nat(),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 20 }),
        (seed, who, fromAt, toAt, amount) => {
          const session = new DomainSession(BANK_FORESIGHT_DOMAIN, seed);
          const world = session.snapshot() as unknown as {
            customers: { [id: string]: { accounts: string[] } };
          };
          const customers = Object.values(world.customers);
          const accounts = customers[who % customers.length].accounts;
          const from = accounts[fromAt % accounts.length];
          const to = accounts[(fromAt + 1 + (toAt % (accounts.length - 1))) % accounts.length];
          const lookup = ok(session, 'get_account', { account_id: from });
          const destination = ok(session, 'get_account', { account_id: to });
          const r = session.call('transfer_between_accounts', {
            from_account_id: from,
            to_account_id: to,
            amount,
          });
          const restricted = !r.ok && r.error.code === 'TRANSFER_RESTRICTED';
          assert.equal(restricted, ruleRefuses(lookup), JSON.stringify({ lookup, r }));
          // Where the rule allows it, nothing else stands in the way of a small transfer between
          // active accounts: the rule alone decides.
          if (
            !ruleRefuses(lookup) &&
            lookup['status'] === 'active' &&
            destination['status'] === 'active'
          )
            assert.ok(r.ok, JSON.stringify(r));
          // A refusal names its reason, never in the words of a lookup's field.
          if (restricted)
            assert.match(
              r.error.message,
              /certificate of deposit|retirement account|joint account/,
            );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the default bank world has no account the rule refuses, and no ownership in any response', () => {
    for (let seed = 0; seed < 200; seed++) {
      const session = new DomainSession(BANK_DOMAIN, seed);
      const world = session.snapshot() as unknown as {
        accounts: { [id: string]: JsonObject };
        customers: { [id: string]: JsonObject };
      };
      for (const id of Object.keys(world.accounts)) {
        const lookup = ok(session, 'get_account', { account_id: id });
        assert.ok(['checking', 'savings'].includes(String(lookup['type'])), id);
        assert.equal('ownership' in lookup, false, id);
        assert.equal(ruleRefuses(lookup), false, id);
      }
      for (const id of Object.keys(world.customers))
        assert.doesNotMatch(
          JSON.stringify(ok(session, 'get_customer', { customer_id: id })),
          /ownership/,
        );
    }
  });

  it('a free lookup shows every input of the rule, for every account of the foresight world', () => {
    for (let seed = 0; seed < 50; seed++) {
      const session = new DomainSession(BANK_FORESIGHT_DOMAIN, seed);
      const world = session.snapshot() as unknown as {
        accounts: { [id: string]: { type: string; ownership: string; customer_id: string } };
      };
      for (const [id, account] of Object.entries(world.accounts)) {
        const lookup = ok(session, 'get_account', { account_id: id });
        assert.equal(lookup['type'], account.type);
        assert.equal(lookup['ownership'], account.ownership);
        const profile = ok(session, 'get_customer', { customer_id: account.customer_id });
        assert.deepEqual(
          (profile['accounts'] as JsonObject[]).find((a) => a['account_id'] === id),
          {
            account_id: id,
            type: account.type,
            nickname: lookup['nickname'],
            ownership: account.ownership,
          },
        );
      }
    }
  });

  it("no read tool's response carries the verdict: the same fields for refused and allowed accounts, no word of it", () => {
    const verdictWords = /allow|permit|refus|restrict|transferable|locked|blocked|forbid/i;
    for (const task of generateTasks(BANK_FORESIGHT_GENERATOR, { count: 60 })) {
      const session = new DomainSession(BANK_FORESIGHT_DOMAIN, task.seed!);
      const world = session.snapshot() as unknown as {
        accounts: { [id: string]: { customer_id: string } };
      };
      const from = String(transferArgs(task)['from_account_id']);
      const customer = world.accounts[from].customer_id;
      const keys = new Set<string>();
      for (const id of Object.keys(world.accounts))
        keys.add(
          Object.keys(ok(session, 'get_account', { account_id: id }))
            .sort()
            .join(','),
        );
      assert.equal(
        keys.size,
        1,
        `${task.id}: lookups differ in their fields: ${[...keys].join(' | ')}`,
      );
      const args: { [tool: string]: JsonObject } = {
        get_account: { account_id: from },
        get_customer: { customer_id: customer },
        list_transactions: { account_id: from },
        list_payees: { customer_id: customer },
      };
      for (const tool of READ_TOOLS) {
        if (!args[tool]) continue;
        const text = JSON.stringify(ok(session, tool, args[tool]));
        assert.doesNotMatch(text, verdictWords, `${task.id}: ${tool}`);
      }
    }
  });

  it('about half the tasks are refused, in every split, by each of the three restrictions', () => {
    for (const start of [0, 1000]) {
      const tasks = generateTasks(BANK_FORESIGHT_GENERATOR, { count: 200, start });
      const share = tasks.filter(refused).length / tasks.length;
      assert.ok(share >= 0.45 && share <= 0.55, `${share} refused from seed ${start}`);
      for (const split of ['train', 'validation', 'test'] as const) {
        const of = tasks.filter((t) => t.split === split);
        const s = of.filter(refused).length / of.length;
        assert.ok(s >= 0.4 && s <= 0.6, `${split}: ${s} refused from seed ${start}`);
      }
      for (const r of ['cd', 'ira', 'joint']) {
        const n = tasks.filter((t) => t.tags!.includes(`restriction-${r}`)).length;
        assert.ok(n >= 20, `only ${n} ${r} refusals from seed ${start}`);
      }
    }
  });

  it('gives valid tasks whose user names every id the transfer needs, and whose reference never reads', () => {
    for (const generator of [
      BANK_FORESIGHT_GENERATOR,
      BANK_FORESIGHT_TWIN_GENERATOR,
      BANK_FORESIGHT_LOGGING_GENERATOR,
    ]) {
      const tasks = generateTasks(generator, { count: 100 });
      assert.equal(new Set(tasks.map((t) => t.id)).size, tasks.length);
      for (const t of tasks) {
        assert.equal(findTaskFault(t), undefined, `${t.id}: ${JSON.stringify(findTaskFault(t))}`);
        const args = transferArgs(t);
        assert.ok(t.turns[0].user.includes(String(args['from_account_id'])), t.id);
        assert.ok(t.turns[0].user.includes(String(args['to_account_id'])), t.id);
        const calls = t.reference!.turns.flatMap((turn) => turn.calls);
        assert.ok(
          calls.every((c) => c.name === 'transfer_between_accounts'),
          `${t.id}: the reference reads`,
        );
      }
    }
  });

  it('a refused task forbids the attempt and asks for the reason; an allowed one asks for the transfer', () => {
    for (const t of generateTasks(BANK_FORESIGHT_GENERATOR, { count: 100 })) {
      const noCall = t.checks.find((c) => c.kind === 'no_call' && !c.args);
      const writeItem = t.checks.find((c) => c.kind === 'call' && c.ok === true);
      if (refused(t)) {
        assert.equal(transferCalls(t).length, 0, t.id);
        assert.equal(noCall?.kind === 'no_call' && noCall.tool, 'transfer_between_accounts', t.id);
        assert.ok(
          t.checks.some((c) => c.id === 'answer-reason'),
          t.id,
        );
      } else {
        assert.equal(transferCalls(t).length, 1, t.id);
        assert.ok(writeItem, t.id);
        assert.equal(noCall, undefined, t.id);
      }
    }
  });

  it('the twin is the same tasks under other ids, without the no-demonstration tag', () => {
    for (let seed = 0; seed < 100; seed++) {
      const main = BANK_FORESIGHT_GENERATOR.generate(seed);
      const twin = BANK_FORESIGHT_TWIN_GENERATOR.generate(seed);
      assert.equal(twin.id, main.id.replace('bank-foresight-', 'bank-foresight-twin-'));
      assert.equal(main.tags!.includes(NO_DEMONSTRATION_TAG), refused(main), main.id);
      assert.equal(twin.tags!.includes(NO_DEMONSTRATION_TAG), false, twin.id);
      const strip = ({ id: _id, tags: _tags, ...rest }: TaskFile) => rest;
      assert.deepEqual(strip(twin), strip(main));
    }
  });

  it('--demonstrations: bank-foresight gives only allowed tasks, its twin refused ones too', () => {
    const main = generateTasks(BANK_FORESIGHT_GENERATOR, {
      count: 50,
      split: 'train',
      demonstrations: true,
    });
    assert.equal(main.length, 50);
    assert.ok(main.every((t) => !refused(t) && t.split === 'train'));
    // The tasks keep their seeds and ids: they are the allowed tasks of the plain family.
    for (const t of main) assert.deepEqual(t, BANK_FORESIGHT_GENERATOR.generate(t.seed!));
    const twin = generateTasks(BANK_FORESIGHT_TWIN_GENERATOR, { count: 50, demonstrations: true });
    assert.ok(twin.filter(refused).length >= 15, 'the twin demonstrates refusals');
    // Families without the tag are untouched by the option.
    assert.deepEqual(
      generateTasks(BUILTIN_GENERATORS['bank']!, { count: 20, demonstrations: true }),
      generateTasks(BUILTIN_GENERATORS['bank']!, { count: 20 }),
    );
  });

  it('logging: the same requests, and a reference that attempts every transfer, refused or not', () => {
    for (let seed = 0; seed < 100; seed++) {
      const main = BANK_FORESIGHT_GENERATOR.generate(seed);
      const log = BANK_FORESIGHT_LOGGING_GENERATOR.generate(seed);
      assert.deepEqual(log.turns, main.turns);
      assert.equal(log.seed, main.seed);
      assert.deepEqual(log.servers, main.servers);
      assert.equal(transferCalls(log).length, 1, log.id);
      assert.ok(log.tags!.includes(refused(main) ? 'foresight-refused' : 'foresight-allowed'));
      assert.equal(log.tags!.includes(NO_DEMONSTRATION_TAG), false);
      assert.ok(
        log.checks.every((c) => c.kind !== 'no_call'),
        log.id,
      );
    }
  });
});

function transferArgs(t: TaskFile): JsonObject {
  const call = BANK_FORESIGHT_LOGGING_GENERATOR.generate(t.seed!).reference!.turns[0].calls[0];
  return call.arguments as JsonObject;
}
