import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { StudioError } from '../../src/core/base/errors';
import type { JsonObject } from '../../src/core/base/json';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import { createBankWorld } from '../../src/servers/bank/world';
import { REPO, ensureServerBundles, startHttpServer } from '../support/servers';

describe('environment: streamable HTTP on loopback', function () {
  this.timeout(30_000);
  let server: { child: ChildProcess; url: string };

  before(async () => {
    server = await startHttpServer(path.join(ensureServerBundles(), 'bank.js'));
  });
  after(() => {
    server.child.kill('SIGTERM');
  });

  it('lists tools, calls them, resets and snapshots through an http definition', async () => {
    const env = await openEnvironment(
      { bank: { type: 'http', url: server.url } },
      { baseDir: REPO },
    );
    try {
      await env.startEpisode(42);
      assert.ok(env.tools().some((t) => t.name === 'transfer_between_accounts'));
      assert.ok(!env.tools().some((t) => t.name.startsWith('rehearsal__')));
      const world = createBankWorld(42);
      const customer = Object.values(world.customers)[0];
      const found = await env.call('find_customer_by_email', { email: customer.email });
      assert.deepEqual(found.response?.structured, { customer_id: customer.customer_id });
      assert.equal(found.server, 'bank');
      const snap = (await env.snapshot())['bank'] as JsonObject;
      assert.equal(snap['today'], world.today);

      // A second episode on a new seed: the remote server's own reset gives the new world.
      await env.startEpisode(43);
      const snap43 = (await env.snapshot())['bank'] as JsonObject;
      assert.equal(snap43['today'], createBankWorld(43).today);
    } finally {
      await env.close();
    }
  });

  it('a server that is not listening: SERVER_START_FAILED', async () => {
    const url = server.url.replace(/:\d+\//, ':1/');
    const env = await openEnvironment(
      { bank: { type: 'http', url } },
      { baseDir: REPO },
      { startTimeoutMs: 5_000 },
    );
    try {
      await assert.rejects(
        env.startEpisode(1),
        (e: StudioError) => e.code === 'SERVER_START_FAILED',
      );
    } finally {
      await env.close();
    }
  });

  it('a server that goes away mid-episode: the next call is a coded error, not a hang', async () => {
    const own = await startHttpServer(path.join(ensureServerBundles(), 'bank.js'));
    const env = await openEnvironment(
      { bank: { type: 'http', url: own.url } },
      { baseDir: REPO },
      { startTimeoutMs: 5_000 },
    );
    try {
      await env.startEpisode(1);
      own.child.kill('SIGKILL');
      await new Promise((r) => own.child.once('exit', r));
      const r = await env.call('get_account', { account_id: 'x' }, { timeoutMs: 3_000 });
      assert.ok(r.error, JSON.stringify(r));
      assert.equal(r.error!.code, 'SERVER_CRASHED', r.error!.message);
      assert.match(r.error!.message, /could not be reached/);
      assert.ok(r.latencyMs < 3_000);
    } finally {
      await env.close();
    }
  });
});
