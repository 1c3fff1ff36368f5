import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import * as path from 'node:path';
import type { StudioError } from '../../src/core/base/errors';
import type { JsonObject } from '../../src/core/base/json';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import { sessionServers } from '../../src/core/env/sessionServers';
import type { ToolEnvironment } from '../../src/core/env/toolEnvironment';
import { createRetailWorld } from '../../src/servers/retail/world';
import { REPO, ensureServerBundles, startHttpServer } from '../support/servers';
import { processAlive as alive } from '../support/crash/kill';

async function gone(pid: number, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return !alive(pid);
}

function orderStatus(snapshot: JsonObject, id: string): unknown {
  return ((snapshot['orders'] as JsonObject)[id] as JsonObject)['status'];
}

describe('environment: built-in domains share a process, a world per session', function () {
  this.timeout(30_000);
  let builtinServersDir: string;
  const open: ToolEnvironment[] = [];
  const retail = (logs?: string[]) =>
    openEnvironment(
      { retail: { builtin: 'retail' } },
      { baseDir: REPO },
      { builtinServersDir, ...(logs ? { log: (l) => logs.push(l) } : {}) },
    ).then((env) => (open.push(env), env));

  before(() => {
    builtinServersDir = ensureServerBundles();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((e) => e.close()));
  });

  it('two environments run on one process, and a write in one is not seen in the other', async () => {
    const world = createRetailWorld(11);
    const pending = Object.values(world.orders).find((o) => o.status === 'pending')!;
    const [a, b] = [await retail(), await retail()];
    await Promise.all([a.startEpisode(11), b.startEpisode(11)]);
    const pids = sessionServers.pids();
    assert.equal(pids.length, 1, `one retail process, not ${pids.length}`);

    const cancel = await a.call('cancel_pending_order', {
      order_id: pending.order_id,
      reason: 'ordered by mistake',
    });
    assert.equal(cancel.response?.isError, undefined, JSON.stringify(cancel));
    const seenByA = (await a.snapshot())['retail'] as JsonObject;
    const seenByB = (await b.snapshot())['retail'] as JsonObject;
    assert.equal(orderStatus(seenByA, pending.order_id), 'cancelled');
    assert.equal(orderStatus(seenByB, pending.order_id), 'pending');
    assert.deepEqual(seenByB['writes'], []);

    // A's next episode starts from its seed again; B's world is still its own.
    await a.startEpisode(11);
    assert.equal(
      orderStatus((await a.snapshot())['retail'] as JsonObject, pending.order_id),
      'pending',
    );

    await a.close();
    assert.ok(alive(pids[0]), 'the process outlives one environment while another holds it');
    await b.close();
    assert.ok(await gone(pids[0], 3_000), 'the last environment closed ends the process');
    assert.deepEqual(sessionServers.pids(), []);
  });

  it('the shared process killed mid-episode: SERVER_CRASHED, and a fresh process next episode', async () => {
    const logs: string[] = [];
    const env = await retail(logs);
    await env.startEpisode(3);
    const [first] = sessionServers.pids();
    process.kill(first, 'SIGKILL');
    assert.ok(await gone(first, 3_000));
    const r = await env.call('list_all_product_types', {});
    assert.equal(r.error?.code, 'SERVER_CRASHED', JSON.stringify(r));
    assert.match(r.error!.message, /restarted for the next episode/);

    await env.startEpisode(3);
    const [second] = sessionServers.pids();
    assert.ok(second !== undefined && second !== first);
    const again = await env.call('list_all_product_types', {});
    assert.equal(again.error, undefined, JSON.stringify(again));
  });

  it('a server at its session bound refuses the next session with a clear error', async () => {
    const server = await startHttpServer(path.join(ensureServerBundles(), 'retail.js'), [
      '--world-per-session',
      '--max-sessions',
      '1',
    ]);
    try {
      const byUrl = () =>
        openEnvironment({ retail: { type: 'http', url: server.url } }, { baseDir: REPO }).then(
          (env) => (open.push(env), env),
        );
      const [one, two] = [await byUrl(), await byUrl()];
      await one.startEpisode(1);
      await assert.rejects(two.startEpisode(1), (err: StudioError) => {
        assert.equal(err.code, 'SERVER_START_FAILED');
        assert.match(err.message, /Too many sessions \(1 open\)/);
        return true;
      });
      await one.close();
      await two.startEpisode(1);
      assert.equal((await two.call('list_all_product_types', {})).error, undefined);
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('refuses a web page (an Origin header) and a Host that is not its loopback address', async () => {
    const server = await startHttpServer(path.join(ensureServerBundles(), 'retail.js'), [
      '--world-per-session',
    ]);
    try {
      const initialize = (headers: Record<string, string>) =>
        fetch(server.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...headers,
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: {
              protocolVersion: '2025-03-26',
              capabilities: {},
              clientInfo: { name: 'test', version: '1' },
            },
          }),
        });
      assert.equal((await initialize({})).status, 200);
      const page = await initialize({ origin: 'http://page.example' });
      assert.equal(page.status, 403);
      assert.match(await page.text(), /Only loopback clients that are not web pages/);
      // fetch sets Host itself; node:http sends the one it is given, as a rebound name would.
      const rebound = await new Promise<number>((resolve, reject) => {
        const url = new URL(server.url);
        request(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: 'POST',
            headers: { host: 'rebound.example', 'content-type': 'application/json' },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        )
          .on('error', reject)
          .end('{}');
      });
      assert.equal(rebound, 403);
    } finally {
      server.child.kill('SIGKILL');
    }
  });

  it('a studio killed by SIGKILL leaves no domain server behind (its stdin is a lifeline)', async () => {
    const module = path.join(REPO, 'out', 'src', 'core', 'env', 'openEnvironment.js');
    const servers = path.join(REPO, 'out', 'src', 'core', 'env', 'sessionServers.js');
    const script = `
      const { openEnvironment } = require(${JSON.stringify(module)});
      const { sessionServers } = require(${JSON.stringify(servers)});
      (async () => {
        const env = await openEnvironment({ bank: { builtin: 'bank' } }, { baseDir: ${JSON.stringify(REPO)} },
          { builtinServersDir: ${JSON.stringify(builtinServersDir)} });
        await env.startEpisode(1);
        process.stdout.write(String(sessionServers.pids()[0]) + '\\n');
        setInterval(() => undefined, 1000);
      })();`;
    const studio = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const pid = await new Promise<number>((resolve, reject) => {
      let out = '';
      let err = '';
      studio.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) resolve(Number(out.trim()));
      });
      studio.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      studio.on('exit', (code) => reject(new Error(`the studio exited (${code}): ${err}`)));
    });
    assert.ok(Number.isInteger(pid) && alive(pid), `a bank server is running (${pid})`);
    studio.kill('SIGKILL');
    assert.ok(await gone(pid, 5_000), 'the bank server ended with the studio');
  });
});
