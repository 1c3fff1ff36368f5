import * as assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { StudioError } from '../../src/core/base/errors';
import { resolveLaunch } from '../../src/core/env/launch';
import { parseServersSetting, readWorkspaceMcpConfig } from '../../src/core/env/mcpConfig';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import { useMcpWorkspace } from '../support/mcpWorkspace';

describe('environment: server definitions from mcp.json and the rehearsal.servers setting', function () {
  this.timeout(30_000);
  const { ws, writeMcpJson } = useMcpWorkspace();

  it('reads .vscode/mcp.json as VS Code writes it: comments, trailing commas, stdio without "type", http, inputs', async () => {
    await writeMcpJson(`{
      // servers this developer already uses
      "inputs": [{ "type": "promptString", "id": "token", "description": "API token", "password": true }],
      "servers": {
        "memory": { "command": "node", "args": ["server.js"], "env": { "TOKEN": "\${input:token}" } },
        "remote": { "type": "http", "url": "https://example.invalid/mcp", "headers": { "Authorization": "Bearer \${input:token}" } },
      },
    }`);
    const catalog = await readWorkspaceMcpConfig(ws());
    assert.deepEqual(catalog.servers['memory'], {
      type: 'stdio',
      command: 'node',
      args: ['server.js'],
      env: { TOKEN: '${input:token}' },
    });
    assert.deepEqual(catalog.servers['remote'], {
      type: 'http',
      url: 'https://example.invalid/mcp',
      headers: { Authorization: 'Bearer ${input:token}' },
    });
    assert.equal(catalog.inputs[0].id, 'token');
  });

  it('treats a missing mcp.json as no servers, and names the JSON path of a bad entry', async () => {
    await rm(path.join(ws(), '.vscode'), { recursive: true });
    assert.deepEqual((await readWorkspaceMcpConfig(ws())).servers, {});
    await mkdir(path.join(ws(), '.vscode'));
    await writeMcpJson('{ "servers": { "bad": { "command": "node", "args": "server.js" } } }');
    await assert.rejects(
      readWorkspaceMcpConfig(ws()),
      (e: StudioError) =>
        e.code === 'SERVER_CONFIG_INVALID' &&
        /\/servers\/bad\/args must be an array of strings/.test(e.message),
    );
    await writeMcpJson('{ "servers": { "x": { "command": "node" }, }'); // unbalanced
    await assert.rejects(
      readWorkspaceMcpConfig(ws()),
      (e: StudioError) => e.code === 'SERVER_CONFIG_INVALID' && /not valid JSON/.test(e.message),
    );
    assert.throws(
      () => parseServersSetting({ s: { url: 42 } }),
      (e: StudioError) => e.code === 'SERVER_CONFIG_INVALID' && /\/s\/url/.test(e.message),
    );
  });

  it('resolves ${workspaceFolder}, ${env:...}, ${input:...} (asked once), envFile and relative cwd into an argument vector', async () => {
    await writeFile(path.join(ws(), '.env'), 'FROM_FILE=1\nSHARED=file\n');
    const asked: string[] = [];
    const spec = await resolveLaunch(
      's',
      {
        type: 'stdio',
        command: '${workspaceFolder}/bin/server',
        args: [
          '--token',
          '${input:token}',
          '$(rm -rf /); echo "quoted"',
          '${env:REHEARSAL_TEST_VAR}',
        ],
        env: { SHARED: 'env', TOKEN: '${input:token}', DROPPED: null },
        envFile: '.env',
        cwd: 'sub',
      },
      {
        baseDir: ws(),
        workspaceFolder: ws(),
        env: { REHEARSAL_TEST_VAR: 'from-env' },
        resolveInput: async (id) => {
          asked.push(id);
          return 's3cret';
        },
      },
    );
    assert.equal(spec.kind, 'stdio');
    if (spec.kind !== 'stdio') return;
    assert.equal(spec.command, `${ws()}/bin/server`);
    assert.deepEqual(
      spec.args,
      ['--token', 's3cret', '$(rm -rf /); echo "quoted"', 'from-env'],
      'arguments stay one vector element each, never a shell string',
    );
    assert.deepEqual(spec.env, { FROM_FILE: '1', SHARED: 'env', TOKEN: 's3cret' });
    assert.equal(spec.cwd, path.join(ws(), 'sub'));
    assert.deepEqual(asked, ['token']);
    assert.equal(spec.perEpisode, false);
  });

  it('takes a task\'s inline server without "type" as mcp.json does: stdio with a command, http with a url', async () => {
    const stdio = await resolveLaunch('s', { command: 'node', args: ['server.js'] } as never, {
      baseDir: ws(),
    });
    assert.deepEqual([stdio.kind, stdio.kind === 'stdio' && stdio.command], ['stdio', 'node']);
    const http = await resolveLaunch('h', { url: 'http://127.0.0.1:9/mcp' } as never, {
      baseDir: ws(),
    });
    assert.equal(http.kind, 'http');
    await assert.rejects(
      resolveLaunch('n', { args: ['x'] } as never, { baseDir: ws() }),
      (e: StudioError) =>
        e.code === 'SERVER_CONFIG_INVALID' && /not an MCP server definition/.test(e.message),
    );
  });

  it('rejects unknown variables and unanswered inputs with SERVER_CONFIG_INVALID', async () => {
    await assert.rejects(
      resolveLaunch(
        's',
        { type: 'stdio', command: '${config:editor.fontSize}' },
        { baseDir: ws() },
      ),
      (e: StudioError) => e.code === 'SERVER_CONFIG_INVALID' && /Unknown variable/.test(e.message),
    );
    await assert.rejects(
      resolveLaunch(
        's',
        { type: 'stdio', command: 'x', args: ['${input:key}'] },
        {
          baseDir: ws(),
          inputs: [{ type: 'promptString', id: 'key', description: 'Your API key' }],
          resolveInput: async () => undefined,
        },
      ),
      (e: StudioError) => e.code === 'SERVER_CONFIG_INVALID' && /Your API key/.test(e.message),
    );
  });

  it('reports a task server that is configured nowhere as SERVER_NOT_CONFIGURED', async () => {
    await assert.rejects(
      openEnvironment({ kb: 'github' }, { baseDir: ws() }, { workspaceFolder: ws() }),
      (e: StudioError) => e.code === 'SERVER_NOT_CONFIGURED' && /github/.test(e.message),
    );
  });
});
