import * as assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import type { StudioError } from '../../src/core/base/errors';
import { openEnvironment } from '../../src/core/env/openEnvironment';
import type { ReplayRecording } from '../../src/core/env/replayRecording';

const RECORDING: ReplayRecording = {
  version: 1,
  source: 'test',
  tools: [
    {
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, unit: { type: 'string' } },
        required: ['city'],
      },
    },
    { name: 'next_ticket', parameters: { type: 'object', properties: {} } },
  ],
  calls: [
    {
      tool: 'get_weather',
      arguments: { city: 'Oslo', unit: 'C' },
      response: { text: ['{"temp": -3}'] },
    },
    {
      tool: 'get_weather',
      arguments: { city: 'Lima' },
      response: { text: ['city not covered'], isError: true },
    },
    {
      tool: 'next_ticket',
      arguments: {},
      response: { structured: { ticket: 1 }, text: ['{"ticket":1}'] },
    },
    {
      tool: 'next_ticket',
      arguments: {},
      response: { structured: { ticket: 2 }, text: ['{"ticket":2}'] },
    },
  ],
};

describe('environment: replay of recorded answers', () => {
  let dir: string;
  let file: string;

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'rehearsal-replay-'));
    file = path.join(dir, 'rec.replay.json');
    await writeFile(file, JSON.stringify(RECORDING));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('answers by tool name and canonical arguments (key order does not matter)', async () => {
    const env = await openEnvironment(
      { recorded: { replay: 'rec.replay.json' } },
      { baseDir: dir },
    );
    assert.equal(env.source, 'replay');
    await env.startEpisode();
    assert.deepEqual(
      env.tools().map((t) => t.name),
      ['get_weather', 'next_ticket'],
    );
    const r = await env.call('get_weather', { unit: 'C', city: 'Oslo' });
    assert.deepEqual(r.response, { text: ['{"temp": -3}'] });
    assert.equal(r.server, 'recorded');
    const err = await env.call('get_weather', { city: 'Lima' });
    assert.equal(err.response?.isError, true, 'a recorded error response is replayed as one');
    await env.close();
  });

  it('never invents an answer: an unrecorded call is NO_RECORDED_ANSWER, an unknown tool UNKNOWN_TOOL', async () => {
    const env = await openEnvironment({ recorded: { replay: file } }, { baseDir: '/' });
    await env.startEpisode();
    const miss = await env.call('get_weather', { city: 'Oslo' });
    assert.equal(miss.error?.code, 'NO_RECORDED_ANSWER');
    assert.match(
      miss.error!.message,
      /"city":"Oslo","unit":"C"/,
      'the message shows what was recorded',
    );
    assert.equal(miss.response, undefined);
    assert.equal((await env.call('book_flight', {})).error?.code, 'UNKNOWN_TOOL');
    await env.close();
  });

  it('serves repeated identical calls in recorded order, repeats the last, and starts over each episode', async () => {
    const env = await openEnvironment({ recorded: { replay: file } }, { baseDir: '/' });
    await env.startEpisode();
    const seen = [];
    for (let i = 0; i < 3; i++) seen.push((await env.call('next_ticket', {})).response?.structured);
    assert.deepEqual(seen, [{ ticket: 1 }, { ticket: 2 }, { ticket: 2 }]);
    await env.startEpisode();
    assert.deepEqual((await env.call('next_ticket', {})).response?.structured, { ticket: 1 });
    await env.close();
  });

  it('rejects a recording whose values nest past the depth bound', async () => {
    const bad = path.join(dir, 'deep.replay.json');
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    await writeFile(
      bad,
      JSON.stringify({
        ...RECORDING,
        calls: [{ tool: 'x', arguments: {}, response: { structured: '@deep@' } }],
      }).replace('"@deep@"', deep),
    );
    await assert.rejects(
      openEnvironment({ r: { replay: bad } }, { baseDir: dir }),
      (e: StudioError) =>
        e.code === 'REPLAY_INVALID' && /nest deeper than 256 levels/.test(e.message),
    );
  });

  it('rejects a malformed recording with the JSON path of the fault', async () => {
    const bad = path.join(dir, 'bad.replay.json');
    await writeFile(
      bad,
      JSON.stringify({
        ...RECORDING,
        calls: [{ tool: 'x', arguments: {}, response: { text: 'not a list' } }],
      }),
    );
    await assert.rejects(
      openEnvironment({ r: { replay: bad } }, { baseDir: dir }),
      (e: StudioError) =>
        e.code === 'REPLAY_INVALID' && /\/calls\/0\/response\/text/.test(e.message),
    );
  });
});
