// Server definitions from mcp.json and the rehearsal.servers setting, with the servers started for
// real. Reading and resolving the definitions: test/unit/env-config.test.ts.
import * as assert from 'node:assert/strict';
import type { StudioError } from '../../src/core/base/errors';
import type { JsonObject } from '../../src/core/base/json';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import { useMcpWorkspace } from '../support/mcpWorkspace';
import { NPM_SERVERS, fixtureServer } from '../support/servers';

describe('environment: server definitions from mcp.json and the rehearsal.servers setting', function () {
  this.timeout(30_000);
  const { ws, writeMcpJson } = useMcpWorkspace();

  it('runs a task server named after a server in mcp.json, and lets the setting override it', async () => {
    await writeMcpJson(
      JSON.stringify({
        servers: {
          memory: {
            command: process.execPath,
            args: [NPM_SERVERS.memory],
            env: { MEMORY_FILE_PATH: '${episodeDir}/memory.jsonl' },
          },
        },
      }),
    );
    const env = await openEnvironment(
      { kb: 'memory' },
      { baseDir: ws() },
      { workspaceFolder: ws() },
    );
    try {
      await env.startEpisode();
      assert.ok(env.tools().some((t) => t.name === 'read_graph'));
      const r = await env.call('read_graph', {});
      assert.deepEqual((r.response!.structured as JsonObject)['entities'], []);
    } finally {
      await env.close();
    }
    const overridden = await openEnvironment(
      { kb: 'memory' },
      { baseDir: ws() },
      { workspaceFolder: ws(), settingServers: { memory: fixtureServer('admin-echo.mjs') } },
    );
    try {
      await overridden.startEpisode(1);
      assert.deepEqual(
        overridden.tools().map((t) => t.name),
        ['increment'],
        'the setting wins over mcp.json',
      );
    } finally {
      await overridden.close();
    }
  });

  it('does not read a broken mcp.json for tasks that define their servers themselves', async () => {
    await writeMcpJson('{ "servers": { oops');
    const env = await openEnvironment(
      { counter: fixtureServer('admin-echo.mjs') },
      { baseDir: ws() },
      { workspaceFolder: ws() },
    );
    try {
      await env.startEpisode(1);
      assert.deepEqual(
        env.tools().map((t) => t.name),
        ['increment'],
      );
    } finally {
      await env.close();
    }
    await assert.rejects(
      openEnvironment({ kb: 'memory' }, { baseDir: ws() }, { workspaceFolder: ws() }),
      (e: StudioError) => e.code === 'SERVER_CONFIG_INVALID',
    );
  });
});
