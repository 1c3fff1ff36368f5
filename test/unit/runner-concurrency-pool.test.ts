// The pieces of concurrency that start nothing: the planned order, the --concurrency argument and
// the pool. Runs at N = 1 and N = 8 against real servers: test/e2e/runner-concurrency.test.ts.
import * as assert from 'node:assert/strict';
import {
  concurrencyArg,
  concurrencyFor,
  forEachConcurrent,
  MAX_CONCURRENCY,
} from '../../src/core/runner/concurrency';
import { MAX_HELD, PlannedOrder } from '../../src/core/trace/format/plannedOrder';

describe('concurrency: the argument and the pool', () => {
  it('PlannedOrder lets ended episodes out in id order, others at once, and holds a bounded number', () => {
    const out: string[] = [];
    const order = new PlannedOrder<string>((id) => out.push(id));
    for (const id of ['e2', 'imported-7', 'e3', 'e1', 'e5']) order.add(id, id);
    assert.deepEqual(out, ['imported-7', 'e1', 'e2', 'e3']);
    order.flush();
    assert.deepEqual(out, ['imported-7', 'e1', 'e2', 'e3', 'e5']);

    const far: string[] = [];
    const gaps = new PlannedOrder<string>((id) => far.push(id));
    for (let n = MAX_HELD + 20; n > 10; n--) gaps.add(`e${n}`, `e${n}`);
    assert.ok(far.length > 0, 'a trace whose first ids never come does not hold everything');
    gaps.flush();
    assert.equal(far.length, MAX_HELD + 10);
    assert.equal(new Set(far).size, far.length, 'each episode once');
  });

  it('--concurrency takes 1 to 64; anything else is one usage error', () => {
    assert.equal(concurrencyArg('1'), 1);
    assert.equal(concurrencyArg('64'), 64);
    assert.equal(concurrencyArg(undefined), undefined);
    for (const bad of ['0', '-1', '1e9', 'abc', '65', '2.5', '', '0x8'])
      assert.throws(
        () => concurrencyArg(bad),
        (err: Error & { code?: string }) =>
          err.code === 'USAGE' &&
          err.message ===
            `--concurrency must be a whole number from 1 to ${MAX_CONCURRENCY}, not "${bad}".`,
        bad,
      );
    assert.equal(concurrencyFor(undefined, 'onnx'), 8);
    assert.equal(concurrencyFor(undefined, 'endpoint'), 16);
    assert.equal(concurrencyFor(3, 'endpoint'), 3);
  });

  it('keeps at most N in flight, starts in order, gives each a slot of its own, stops starting on request', async () => {
    let inFlight = 0;
    let most = 0;
    const started: number[] = [];
    const slotsBusy = new Set<number>();
    await forEachConcurrent(
      Array.from({ length: 20 }, (_, i) => i),
      3,
      async (item, _i, slot) => {
        assert.ok(!slotsBusy.has(slot), `slot ${slot} is used by one item at a time`);
        slotsBusy.add(slot);
        started.push(item);
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 1 + (item % 4)));
        inFlight--;
        slotsBusy.delete(slot);
      },
    );
    assert.equal(most, 3);
    assert.deepEqual(
      started,
      Array.from({ length: 20 }, (_, i) => i),
    );

    const ran: number[] = [];
    await forEachConcurrent(
      Array.from({ length: 20 }, (_, i) => i),
      2,
      async (item) => {
        ran.push(item);
        await new Promise((r) => setTimeout(r, 1));
      },
      () => ran.length >= 5,
    );
    assert.ok(ran.length >= 5 && ran.length <= 6, `${ran.length} started after the stop`);
  });
});
