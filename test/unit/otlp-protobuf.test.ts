// OTLP protobuf: each fixture of real instrumentation, encoded with the studio's OTLP schema, imports
// exactly as its JSON does, through the one reader; a body that does not decode is a coded fault.
import * as assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { JsonObject } from '../../src/core/base/json';
import { importOtlpData } from '../../src/core/otlp/otlpImport';
import { emptyOtlpData, readOtlpJson } from '../../src/core/otlp/otlpJson';
import {
  decodeOtlpProtobuf,
  encodeOtlpProtobuf,
  otlpSignalOf,
  readOtlpProtobuf,
} from '../../src/core/otlp/otlpProto';
import { FIXTURES } from '../support/servers';

const fixture = (name: string) => path.join(FIXTURES, 'otlp', name);

/** A value without the fields that name where it was read (file, line, source text). */
function placeless(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(placeless);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v as Record<string, unknown>)
      .filter(([k]) => !['file', 'line', 'source', 'description'].includes(k))
      .map(([k, x]) => [k, placeless(x)]),
  );
}

const FILES: [string, string[]][] = [
  ['openai-v2-latest', ['openai-v2-latest.json']],
  ['openai-v2-events', ['openai-v2-events.json', 'openai-v2-events.logs.json']],
  ['openllmetry', ['openllmetry.json']],
  ['openai-agents', ['openai-agents.json']],
  ['pydantic-ai', ['pydantic-ai.json']],
  ['vercel-ai', ['vercel-ai.json']],
];

describe('import otlp: protobuf', () => {
  for (const [name, files] of FILES)
    it(`${name}: the protobuf encoding imports exactly as the JSON`, async () => {
      const fromJson = emptyOtlpData();
      const fromProto = emptyOtlpData();
      for (const file of files) {
        const text = await readFile(fixture(file), 'utf8');
        readOtlpJson(text, file, fromJson);
        const request = JSON.parse(text) as JsonObject;
        const signal = 'resourceLogs' in request ? 'logs' : 'traces';
        const bytes = encodeOtlpProtobuf(request, signal);
        // The body says which request it is, as a file gives no path to tell.
        assert.equal(otlpSignalOf(bytes), signal);
        assert.equal(readOtlpProtobuf(bytes, file.replace(/json$/, 'pb'), fromProto), true);
      }
      assert.ok(fromJson.spans.length + fromJson.logs.length > 0);
      assert.deepEqual(placeless(fromProto), placeless(fromJson));
      const a = importOtlpData(fromJson);
      const b = importOtlpData(fromProto);
      assert.ok(a.episodes.length > 0);
      assert.deepEqual(placeless(b), placeless(a));
    });

  it('decodes ids as hex, 64-bit times as decimal, as OTLP JSON writes them', async () => {
    const request = JSON.parse(
      await readFile(fixture('openai-v2-latest.json'), 'utf8'),
    ) as JsonObject;
    const decoded = decodeOtlpProtobuf(encodeOtlpProtobuf(request, 'traces'));
    const span = (decoded as { resourceSpans: { scopeSpans: { spans: JsonObject[] }[] }[] })
      .resourceSpans[0].scopeSpans[0].spans[0];
    const original = (
      request as typeof decoded as { resourceSpans: { scopeSpans: { spans: JsonObject[] }[] }[] }
    ).resourceSpans[0].scopeSpans[0].spans[0];
    assert.match(String(span['traceId']), /^[0-9a-f]{32}$/);
    assert.equal(span['traceId'], original['traceId']);
    assert.equal(span['spanId'], original['spanId']);
    assert.equal(span['startTimeUnixNano'], String(original['startTimeUnixNano']));
  });

  it('a body that is not OTLP protobuf is a coded fault and reads nothing', () => {
    const data = emptyOtlpData();
    assert.equal(readOtlpProtobuf(Buffer.from('{"resourceSpans":[]}'), 'x.pb', data), false);
    assert.deepEqual(
      data.faults.map((f) => [f.code, f.file, f.line]),
      [['OTLP_PROTOBUF_INVALID', 'x.pb', 1]],
    );
    assert.equal(data.spans.length, 0);
  });
});
