import * as assert from 'node:assert/strict';
import type { JsonObject } from '../../src/core/base/json';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import type { ToolEnvironment } from '../../src/core/env/toolEnvironment';
import { NPM_SERVERS, REPO } from '../support/servers';

describe('environment: third-party npm servers over stdio', function () {
  this.timeout(30_000);
  let env: ToolEnvironment;
  const logs: string[] = [];

  before(async () => {
    env = await openEnvironment(
      {
        memory: {
          type: 'stdio',
          command: process.execPath,
          args: [NPM_SERVERS.memory],
          env: { MEMORY_FILE_PATH: '${episodeDir}/memory.jsonl' },
        },
        files: {
          type: 'stdio',
          command: process.execPath,
          args: [NPM_SERVERS.filesystem, '${episodeDir}'],
          cwd: '${episodeDir}',
        },
      },
      { baseDir: REPO },
      { log: (l) => logs.push(l) },
    );
    await env.startEpisode();
  });
  after(async () => {
    await env.close();
  });

  it('lists the tools of both servers with their input schemas', () => {
    const byName = new Map(env.tools().map((t) => [t.name, t]));
    for (const name of [
      'create_entities',
      'read_graph',
      'search_nodes',
      'write_file',
      'read_text_file',
      'list_directory',
    ])
      assert.ok(byName.has(name), `missing ${name}`);
    const create = byName.get('create_entities')!.parameters as JsonObject;
    assert.equal(create['type'], 'object');
    assert.ok(((create['required'] as string[]) ?? []).includes('entities'));
  });

  it('passes their stderr to the log sink, prefixed with the server name', () => {
    assert.ok(
      logs.some((l) => l.startsWith('[memory] ')),
      logs.join('\n'),
    );
    assert.ok(
      logs.some((l) => l.startsWith('[files] ')),
      logs.join('\n'),
    );
  });

  it('calls the memory server and records its structured content', async () => {
    const created = await env.call('create_entities', {
      entities: [
        { name: 'Ada Lovelace', entityType: 'person', observations: ['wrote the first program'] },
      ],
    });
    assert.equal(created.error, undefined);
    assert.equal(created.server, 'memory');
    const graph = await env.call('read_graph', {});
    const entities = (graph.response!.structured as JsonObject)['entities'] as JsonObject[];
    assert.deepEqual(
      entities.map((e) => e['name']),
      ['Ada Lovelace'],
    );
  });

  it('calls the filesystem server inside the episode folder', async () => {
    const w = await env.call('write_file', { path: 'notes.txt', content: 'buy milk' });
    assert.equal(w.response?.isError, undefined, JSON.stringify(w));
    const r = await env.call('read_text_file', { path: 'notes.txt' });
    assert.deepEqual(r.response?.text, ['buy milk']);
    const outside = await env.call('read_text_file', { path: '/etc/hostname' });
    assert.equal(
      outside.response?.isError,
      true,
      'the server refuses paths outside its allowed folder',
    );
  });

  it('gives each episode a fresh process and a fresh ${episodeDir}, so no state leaks', async () => {
    await env.startEpisode();
    const graph = await env.call('read_graph', {});
    assert.deepEqual((graph.response!.structured as JsonObject)['entities'], []);
    const r = await env.call('read_text_file', { path: 'notes.txt' });
    assert.equal(r.response?.isError, true);
    assert.deepEqual(
      await env.snapshot(),
      { memory: null, files: null },
      'servers without rehearsal__snapshot have no state to grade',
    );
  });
});
