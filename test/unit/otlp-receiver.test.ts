// The OTLP receiver's grouping: spans gathered by trace and handed over when the trace completes (its
// root span ended, or a quiet period without spans for it), each trace once, and what is pending
// handed over on close. A real receiver on loopback, fed over HTTP.
import * as assert from 'node:assert/strict';
import type { JsonObject } from '../../src/core/base/json';
import type { OtlpData } from '../../src/core/otlp/otlpJson';
import { OtlpReceiver } from '../../src/core/otlp/otlpReceiver';
import { encodeOtlpProtobuf } from '../../src/core/otlp/otlpProto';

const TOKEN = 'test-token-0123456789';

function request(traceId: string, spans: { id: string; parent?: string }[]): JsonObject {
  return {
    resourceSpans: [
      {
        scopeSpans: [
          {
            spans: spans.map((s) => ({
              traceId,
              spanId: s.id,
              ...(s.parent ? { parentSpanId: s.parent } : {}),
              name: 'span',
            })),
          },
        ],
      },
    ],
  };
}

describe('otlp receiver: traces handed over as they complete', () => {
  let batches: OtlpData[];
  let receiver: OtlpReceiver;
  let url: string;
  beforeEach(async () => {
    batches = [];
    receiver = new OtlpReceiver({
      token: TOKEN,
      onTraces: (data) => {
        batches.push(data);
        return Promise.resolve();
      },
      onError: (err) => assert.fail(String(err)),
      quietMs: 400,
      rootGraceMs: 50,
    });
    url = await receiver.listen(0);
  });
  afterEach(() => receiver.close());

  const send = async (body: JsonObject) => {
    const r = await fetch(`${url}/v1/traces`, {
      method: 'POST',
      body: new Uint8Array(encodeOtlpProtobuf(body, 'traces')),
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-protobuf' },
    });
    assert.equal(r.status, 200);
  };
  const traces = () => batches.map((b) => [...new Set(b.spans.map((s) => s.spanId))]);
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('a trace whose root ended is handed over with its children, once', async () => {
    const t = 'a'.repeat(32);
    await send(request(t, [{ id: '1'.repeat(16), parent: '2'.repeat(16) }]));
    await wait(150);
    assert.deepEqual(traces(), [], 'no root yet, not quiet yet');
    await send(request(t, [{ id: '2'.repeat(16) }]));
    await wait(250);
    assert.deepEqual(traces(), [['1'.repeat(16), '2'.repeat(16)]]);
    await wait(500);
    assert.equal(batches.length, 1);
  });

  it('a trace with no root is handed over after the quiet period; close hands over the rest', async () => {
    await send(request('b'.repeat(32), [{ id: '3'.repeat(16), parent: '9'.repeat(16) }]));
    await wait(700);
    assert.deepEqual(traces(), [['3'.repeat(16)]]);
    await send(request('c'.repeat(32), [{ id: '4'.repeat(16), parent: '9'.repeat(16) }]));
    await receiver.close();
    assert.deepEqual(traces(), [['3'.repeat(16)], ['4'.repeat(16)]]);
  });
});
