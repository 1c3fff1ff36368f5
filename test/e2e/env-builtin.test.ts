import * as assert from 'node:assert/strict';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import type { ToolEnvironment } from '../../src/core/env/toolEnvironment';
import type { StudioError } from '../../src/core/base/errors';
import type { JsonObject } from '../../src/core/base/json';
import { RETAIL_TOOLS } from '../../src/servers/retail/tools';
import { createRetailWorld } from '../../src/servers/retail/world';
import { REPO, ensureServerBundles, fixtureServer } from '../support/servers';

describe('environment: built-in domains', function () {
  let builtinServersDir: string;
  let env: ToolEnvironment;
  const logs: string[] = [];

  before(async function () {
    this.timeout(60_000);
    builtinServersDir = ensureServerBundles();
    env = await openEnvironment(
      { retail: { builtin: 'retail' } },
      { baseDir: REPO },
      { builtinServersDir, log: (l) => logs.push(l) },
    );
    await env.startEpisode(7);
  });
  after(async () => {
    await env.close();
  });

  it('lists the domain tools as function schemas and hides the admin tools', () => {
    const names = env.tools().map((t) => t.name);
    assert.ok(names.includes('cancel_pending_order'));
    assert.ok(names.includes('get_order_details'));
    assert.ok(
      !names.some((n) => n.startsWith('rehearsal__')),
      `admin tools leaked: ${names.join(', ')}`,
    );
    const cancel = env.tools().find((t) => t.name === 'cancel_pending_order')!;
    const params = cancel.parameters as JsonObject;
    assert.equal(params['type'], 'object');
    assert.deepEqual(params['required'], ['order_id', 'reason']);
    assert.equal(params['$schema'], undefined);
  });

  it('says which tools only read (MCP readOnlyHint): the writes are the tools with a target', () => {
    const hints = env.readOnlyHints();
    assert.equal(hints.size, env.tools().length);
    for (const tool of RETAIL_TOOLS) assert.equal(hints.get(tool.name), !tool.target, tool.name);
    assert.equal(hints.get('get_order_details'), true);
    assert.equal(hints.get('cancel_pending_order'), false);
  });

  it('answers a call with text and structured content, and records latency and server', async () => {
    const world = createRetailWorld(7);
    const user = Object.values(world.users)[0];
    const r = await env.call('find_user_id_by_email', { email: user.email });
    assert.equal(r.error, undefined);
    assert.equal(r.server, 'retail');
    assert.ok(r.latencyMs > 0);
    assert.deepEqual(r.response?.structured, { user_id: user.user_id });
    assert.deepEqual(JSON.parse(r.response!.text![0]), { user_id: user.user_id });
  });

  it('returns policy errors as error responses of the tool', async () => {
    const world = createRetailWorld(7);
    const delivered = Object.values(world.orders).find((o) => o.status === 'delivered')!;
    const r = await env.call('cancel_pending_order', {
      order_id: delivered.order_id,
      reason: 'no longer needed',
    });
    assert.equal(r.error, undefined);
    assert.equal(r.response?.isError, true);
    assert.match(r.response!.text![0], /ORDER_NOT_PENDING/);
  });

  it('refuses admin tools, unknown tools and non-object arguments with coded errors', async () => {
    const admin = await env.call('rehearsal__snapshot', {});
    assert.equal(admin.error?.code, 'UNKNOWN_TOOL');
    const unknown = await env.call('drop_database', {});
    assert.equal(unknown.error?.code, 'UNKNOWN_TOOL');
    assert.match(unknown.error!.message, /not one of this task's tools/);
    const bad = await env.call('get_order_details', ['#W1']);
    assert.equal(bad.error?.code, 'INVALID_ARGUMENTS');
  });

  it('starts each episode from the clean state of its seed through the server reset', async () => {
    const world = createRetailWorld(11);
    const pending = Object.values(world.orders).find((o) => o.status === 'pending')!;
    await env.startEpisode(11);
    const cancel = await env.call('cancel_pending_order', {
      order_id: pending.order_id,
      reason: 'ordered by mistake',
    });
    assert.equal(cancel.response?.isError, undefined, JSON.stringify(cancel));
    const after = (await env.snapshot())['retail'] as JsonObject;
    assert.equal(
      ((after['orders'] as JsonObject)[pending.order_id] as JsonObject)['status'],
      'cancelled',
    );
    assert.deepEqual(after['writes'], [{ tool: 'cancel_pending_order', target: pending.order_id }]);

    await env.startEpisode(11);
    const fresh = (await env.snapshot())['retail'] as JsonObject;
    assert.equal(
      ((fresh['orders'] as JsonObject)[pending.order_id] as JsonObject)['status'],
      'pending',
    );
    assert.deepEqual(fresh['writes'], []);
    assert.ok(
      !logs.some((l) => /restarting/.test(l)),
      'a server with a reset tool is reset, not restarted',
    );
  });

  it('applies the task allow-list and rejects an allow-list naming a tool no server offers', async () => {
    const narrow = await openEnvironment(
      { retail: { builtin: 'retail' } },
      { baseDir: REPO, allowTools: ['get_order_details'] },
      { builtinServersDir },
    );
    try {
      await narrow.startEpisode(1);
      assert.deepEqual(
        narrow.tools().map((t) => t.name),
        ['get_order_details'],
      );
      const r = await narrow.call('cancel_pending_order', {
        order_id: '#W1',
        reason: 'no longer needed',
      });
      assert.equal(r.error?.code, 'UNKNOWN_TOOL');
    } finally {
      await narrow.close();
    }
    const wrong = await openEnvironment(
      { retail: { builtin: 'retail' } },
      { baseDir: REPO, allowTools: ['get_order_details', 'refund_everything'] },
      { builtinServersDir },
    );
    try {
      await assert.rejects(
        wrong.startEpisode(1),
        (e: StudioError) => e.code === 'TASK_TOOL_MISSING' && /refund_everything/.test(e.message),
      );
    } finally {
      await wrong.close();
    }
  });

  it('reports a built-in domain without a bundle as SERVER_START_FAILED', async () => {
    await assert.rejects(
      openEnvironment({ x: { builtin: 'casino' } }, { baseDir: REPO }, { builtinServersDir }),
      (e: StudioError) => e.code === 'SERVER_START_FAILED' && /casino/.test(e.message),
    );
  });

  it("uses a third-party server's own rehearsal__reset and a JSON-text snapshot", async () => {
    const e2 = await openEnvironment(
      { counter: fixtureServer('admin-echo.mjs') },
      { baseDir: REPO },
    );
    try {
      await e2.startEpisode(5);
      assert.deepEqual(
        e2.tools().map((t) => t.name),
        ['increment'],
      );
      await e2.call('increment', {});
      await e2.call('increment', {});
      const first = (await e2.snapshot())['counter'] as JsonObject;
      assert.deepEqual({ seed: first['seed'], count: first['count'] }, { seed: 5, count: 2 });
      await e2.startEpisode(6);
      const second = (await e2.snapshot())['counter'] as JsonObject;
      assert.deepEqual({ seed: second['seed'], count: second['count'] }, { seed: 6, count: 0 });
      assert.equal(second['pid'], first['pid'], 'the same process serves both episodes');
    } finally {
      await e2.close();
    }
  });

  it('serves two servers in one environment and routes calls by tool name', async () => {
    const both = await openEnvironment(
      { retail: { builtin: 'retail' }, bank: { builtin: 'bank' } },
      { baseDir: REPO },
      { builtinServersDir },
    );
    try {
      await both.startEpisode(3);
      const names = both.tools().map((t) => t.name);
      assert.ok(names.includes('get_order_details') && names.includes('get_account'));
      const r = await both.call('get_account', { account_id: 'nope' });
      assert.equal(r.server, 'bank');
      assert.match(r.response!.text![0], /ACCOUNT_NOT_FOUND/);
      const snap = await both.snapshot();
      assert.deepEqual(Object.keys(snap).sort(), ['bank', 'retail']);
    } finally {
      await both.close();
    }
  });
});
