import * as assert from 'node:assert/strict';
import type { PanelEnvelope, PanelTransport } from '../../src/core/base/panelProtocol';
import {
  notification,
  PanelConnection,
  PanelRequestError,
  request,
} from '../../src/core/base/panelProtocol';
import { parsePanelMessage } from '../../src/core/trajectory/protocol';
import { trajectoryProtocol } from '../../src/core/trajectory/trajectoryProtocol';

/** Two ends of an in-memory channel: what one posts the other receives on a later tick, as a webview's messages. */
function channel(): {
  host: PanelTransport & { sent: PanelEnvelope[] };
  page: PanelTransport & { sent: PanelEnvelope[] };
  raw: (to: 'host' | 'page', message: unknown) => void;
} {
  const listeners = {
    host: new Set<(raw: unknown) => void>(),
    page: new Set<(raw: unknown) => void>(),
  };
  const deliver = (to: 'host' | 'page', message: unknown) =>
    setImmediate(() => {
      for (const l of listeners[to]) l(structuredClone(message));
    });
  const end = (self: 'host' | 'page', other: 'host' | 'page') => {
    const sent: PanelEnvelope[] = [];
    return {
      sent,
      post: (message: PanelEnvelope) => {
        sent.push(message);
        deliver(other, message);
      },
      onMessage: (listener: (raw: unknown) => void) => {
        listeners[self].add(listener);
        return { dispose: () => listeners[self].delete(listener) };
      },
    };
  };
  return { host: end('host', 'page'), page: end('page', 'host'), raw: deliver };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const countCalls = request<{ text: string }, { calls: number }>('countCalls');
const slow = request<Record<never, never>, string>('slow', { timeoutMs: 30 });
const drew = notification<{ rows: number }>('rendered');

describe('panel protocol', () => {
  it('resolves a request with the answer its handler returns, typed by the definition', async () => {
    const { host, page } = channel();
    const hostSide = new PanelConnection(host);
    const pageSide = new PanelConnection(page);
    hostSide.onRequest(countCalls, ({ text }) => ({ calls: text.split(' ').length }));
    const answer: { calls: number } = await pageSide.sendRequest(countCalls, { text: 'a b c' });
    assert.deepEqual(answer, { calls: 3 });
    assert.deepEqual(page.sent[0], {
      type: 'request',
      id: 1,
      request: { text: 'a b c', method: 'countCalls' },
    });
    assert.deepEqual(host.sent[0], { type: 'response', id: 1, ok: true, result: { calls: 3 } });
    hostSide.dispose();
    pageSide.dispose();
  });

  it('rejects a request with the error its handler threw', async () => {
    const { host, page } = channel();
    const hostSide = new PanelConnection(host);
    hostSide.onRequest(countCalls, () => {
      throw new Error('No call c9 in this run.');
    });
    await assert.rejects(
      new PanelConnection(page).sendRequest(countCalls, { text: '' }),
      /^Error: No call c9 in this run\.$/,
    );
    hostSide.dispose();
  });

  it('rejects a request that gets no answer in time, naming it', async () => {
    const { page } = channel();
    const pageSide = new PanelConnection(page);
    const err = await pageSide.sendRequest(slow, {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof PanelRequestError);
    assert.equal(err.message, 'slow: no answer within 0.03 s');
    pageSide.dispose();
  });

  it('on dispose rejects the pending requests and delivers nothing more', async () => {
    const { host, page } = channel();
    const hostSide = new PanelConnection(host);
    const pageSide = new PanelConnection(page);
    const seen: number[] = [];
    hostSide.onNotification(drew, ({ rows }) => seen.push(rows));
    hostSide.onRequest(countCalls, async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { calls: 1 };
    });
    const pending = pageSide.sendRequest(countCalls, { text: 'a' });
    await pageSide.notify(drew, { rows: 1 });
    await tick();
    assert.deepEqual(seen, [1]);
    pageSide.dispose();
    await assert.rejects(
      pending,
      (e: unknown) =>
        e instanceof PanelRequestError &&
        e.message === 'countCalls: the panel closed before it answered',
    );
    await assert.rejects(pageSide.sendRequest(countCalls, { text: 'b' }), PanelRequestError);
    hostSide.dispose();
    await new PanelConnection(page).notify(drew, { rows: 2 });
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.deepEqual(seen, [1], 'a disposed connection hears nothing');
    assert.equal(host.sent.length, 0, 'and answers nothing');
  });

  it("sends what the host validates: each page request passes its panel's parser", async () => {
    const { page } = channel();
    const pageSide = new PanelConnection(page);
    void pageSide
      .sendRequest(trajectoryProtocol.mark, {
        callId: 'e1.t2.c1',
        kind: 'wrong_type',
        severity: 'minor',
        path: '$.total',
      })
      .catch(() => undefined);
    void pageSide
      .sendRequest(trajectoryProtocol.openDiff, { callId: 'e1.t2.c1' })
      .catch(() => undefined);
    await pageSide.notify(trajectoryProtocol.ready, {});
    assert.deepEqual(
      page.sent.map((m) => parsePanelMessage(m)),
      [
        {
          type: 'request',
          id: 1,
          request: {
            method: 'mark',
            callId: 'e1.t2.c1',
            kind: 'wrong_type',
            severity: 'minor',
            path: '$.total',
          },
        },
        { type: 'request', id: 2, request: { method: 'openDiff', callId: 'e1.t2.c1' } },
        { type: 'ready' },
      ],
    );
    pageSide.dispose();
  });

  it('answers a request nobody handles with an error naming it', async () => {
    const { host, page } = channel();
    const hostSide = new PanelConnection(host);
    await assert.rejects(
      new PanelConnection(page).sendRequest(countCalls, { text: 'a' }),
      /^Error: no handler for countCalls$/,
    );
    hostSide.dispose();
  });

  it('drops a malformed message at the parser and tells the host', async () => {
    const { host, raw } = channel();
    const malformed: unknown[] = [];
    const marks: unknown[] = [];
    const hostSide = new PanelConnection(host, {
      parse: parsePanelMessage,
      onMalformed: (m) => malformed.push(m),
    });
    hostSide.onRequest(trajectoryProtocol.mark, (params) => {
      marks.push(params);
    });
    raw('host', {
      type: 'request',
      id: 1,
      request: { method: 'mark', callId: 'e1.t1.c1', kind: 'not_a_kind', severity: 'major' },
    });
    raw('host', {
      type: 'request',
      id: 2,
      request: {
        method: 'mark',
        callId: 'e1.t1.c1',
        kind: 'hallucinated_value',
        severity: 'major',
      },
    });
    await tick();
    await tick();
    assert.equal(malformed.length, 1);
    assert.deepEqual(marks, [
      { callId: 'e1.t1.c1', kind: 'hallucinated_value', severity: 'major' },
    ]);
    assert.deepEqual(
      host.sent,
      [{ type: 'response', id: 2, ok: true }],
      'only the valid request is answered',
    );
    hostSide.dispose();
  });
});
