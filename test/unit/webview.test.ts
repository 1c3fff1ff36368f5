import * as assert from 'node:assert/strict';
import { buildWebviewHtml, contentSecurityPolicy, newNonce } from '../../src/extension/webviewHtml';
import { isTrajectoryViewState, parsePanelMessage } from '../../src/core/trajectory/protocol';
import { HostConnection } from '../../webview/shared/host';

const page = (nonce = 'bm9uY2Utbm9uY2Utbm9uY2U=') => ({
  title: 'Trajectory e1 · run <1>',
  cspSource: 'https://webview.example',
  nonce,
  scriptUri: 'https://webview.example/dist/webview/trajectory.js',
  styleUris: ['https://webview.example/media/webview/trajectory.css'],
});

describe('webview page', () => {
  it('has a strict Content Security Policy: nothing by default, scripts only by nonce, no eval, no inline styles', () => {
    const html = buildWebviewHtml(page());
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1];
    assert.ok(csp, 'the page has a CSP meta tag');
    const directives = new Map(
      csp
        .replace(/&#39;/g, "'")
        .split(';')
        .map((d) => d.trim().split(/\s+/))
        .map(([name, ...values]) => [name, values]),
    );
    assert.deepEqual(directives.get('default-src'), ["'none'"]);
    assert.deepEqual(directives.get('script-src'), ["'nonce-bm9uY2Utbm9uY2Utbm9uY2U='"]);
    assert.deepEqual(directives.get('style-src'), [
      'https://webview.example',
      "'nonce-bm9uY2Utbm9uY2Utbm9uY2U='",
    ]);
    assert.ok(!csp.includes('unsafe-eval') && !csp.includes('unsafe-inline'), csp);
  });

  it('loads its one script with the nonce and writes no data into the page', () => {
    const html = buildWebviewHtml(page());
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    assert.equal(scripts.length, 1);
    assert.match(scripts[0][1], / nonce="bm9uY2Utbm9uY2Utbm9uY2U="/);
    assert.match(scripts[0][1], / src="https:\/\/webview\.example\/dist\/webview\/trajectory\.js"/);
    assert.equal(scripts[0][2].trim(), '', 'no inline script body');
    assert.match(
      html,
      /<link rel="stylesheet" href="https:\/\/webview\.example\/media\/webview\/trajectory\.css">/,
    );
    assert.match(html, /<title>Trajectory e1 · run &lt;1&gt;<\/title>/, 'text is escaped');
  });

  it('makes a fresh 128-bit nonce from crypto for every page', () => {
    const nonces = new Set(Array.from({ length: 50 }, () => newNonce()));
    assert.equal(nonces.size, 50);
    for (const n of nonces) assert.equal(Buffer.from(n, 'base64').length, 16);
    assert.equal(
      contentSecurityPolicy({ cspSource: 'x', nonce: 'abc' }).includes("'nonce-abc'"),
      true,
    );
  });
});

describe('trajectory panel protocol', () => {
  it('accepts the ready notification and well-formed requests', () => {
    assert.deepEqual(parsePanelMessage({ type: 'ready' }), { type: 'ready' });
    assert.deepEqual(
      parsePanelMessage({
        type: 'request',
        id: 3,
        request: {
          method: 'mark',
          callId: 'e1.t2.c1',
          kind: 'hallucinated_value',
          severity: 'major',
          path: '$.status',
          note: 'n',
        },
      }),
      {
        type: 'request',
        id: 3,
        request: {
          method: 'mark',
          callId: 'e1.t2.c1',
          kind: 'hallucinated_value',
          severity: 'major',
          path: '$.status',
          note: 'n',
        },
      },
    );
    assert.ok(
      parsePanelMessage({
        type: 'request',
        id: 4,
        request: { method: 'accept', callId: 'e1.t1.c1' },
      }),
    );
    assert.ok(
      parsePanelMessage({
        type: 'request',
        id: 5,
        request: { method: 'delete', annotationId: 'a-1' },
      }),
    );
    assert.ok(
      parsePanelMessage({
        type: 'request',
        id: 6,
        request: { method: 'openDiff', callId: 'e1.t1.c1' },
      }),
    );
    assert.deepEqual(
      parsePanelMessage({
        type: 'request',
        id: 7,
        request: { method: 'openEpisode', episodeId: 'e2', callId: 'e2.t2.c1' },
      }),
      {
        type: 'request',
        id: 7,
        request: { method: 'openEpisode', episodeId: 'e2', callId: 'e2.t2.c1' },
      },
    );
  });

  it('refuses anything else: unknown types and methods, bad kinds, ids that could name paths, missing ids', () => {
    for (const bad of [
      null,
      'ready',
      {},
      { type: 'snapshot' },
      { type: 'request', request: { method: 'accept', callId: 'e1' } },
      { type: 'request', id: -1, request: { method: 'accept', callId: 'e1' } },
      { type: 'request', id: 1, request: { method: 'run', callId: 'e1' } },
      {
        type: 'request',
        id: 1,
        request: { method: 'mark', callId: 'e1', kind: 'typo', severity: 'major' },
      },
      {
        type: 'request',
        id: 1,
        request: { method: 'mark', callId: '../../etc', kind: 'other', severity: 'major' },
      },
      {
        type: 'request',
        id: 1,
        request: { method: 'mark', callId: 'e1', kind: 'other', severity: 'major', path: 'status' },
      },
      { type: 'request', id: 1, request: { method: 'openEpisode' } },
      { type: 'request', id: 1, request: { method: 'openEpisode', episodeId: '../e1' } },
    ])
      assert.equal(parsePanelMessage(bad), undefined, JSON.stringify(bad));
  });

  it('restores only a view state that names a trace and an episode', () => {
    assert.equal(
      isTrajectoryViewState({
        file: '/w/.rehearsal/runs/r/trace.jsonl',
        episodeId: 'e1',
        scrollY: 20,
      }),
      true,
    );
    assert.equal(isTrajectoryViewState({ file: '/w/trace.jsonl' }), false);
    assert.equal(isTrajectoryViewState({ file: '/w/trace.jsonl', episodeId: '../x' }), false);
    assert.equal(isTrajectoryViewState(undefined), false);
  });
});

describe('webview page connection', () => {
  const posted: unknown[] = [];
  const globals = globalThis as Record<string, unknown>;
  before(() => {
    globals.window = new EventTarget();
    globals.acquireVsCodeApi = () => ({
      postMessage: (m: unknown) => posted.push(m),
      getState: () => undefined,
      setState: () => undefined,
    });
  });
  after(() => {
    delete globals.window;
    delete globals.acquireVsCodeApi;
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const readies = () => posted.filter((m) => (m as { type?: string }).type === 'ready').length;

  it('says ready again until the host answers (a dropped ready leaves no empty page), then stops', async () => {
    const host = new HostConnection<unknown>();
    host.ready(10);
    await sleep(80);
    const before = readies();
    assert.ok(before >= 3, `ready said ${before} times while the host was silent`);
    (globals.window as EventTarget).dispatchEvent(
      new MessageEvent('message', { data: { type: 'snapshot', snapshot: {} } }),
    );
    const answered = readies();
    await sleep(80);
    assert.equal(readies(), answered, 'no ready after the host answered');
  });
});
