/**
 * The Compare Runs panel: two runs of the same tasks, per task (success and mean field F1 of each)
 * and the calls where one rehearsed right and the other wrong, each row's button opening both
 * diffs. The host computes every value.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import type { RunComparison, TaskSide } from '../../src/core/report/compareRuns';
import { runsProtocol } from '../../src/core/report/runsProtocol';
import { append, h } from '../shared/dom';
import { HostConnection } from '../shared/host';

const app = document.getElementById('app')!;
const host = new HostConnection<Record<string, never>>();
host.on(runsProtocol.snapshot, ({ snapshot }) => show(snapshot));

const f2 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(2));
const success = (s: TaskSide | undefined) => (s ? `${s.successes}/${s.graded}` : 'not played');

function delta(a: number | null | undefined, b: number | null | undefined): HTMLElement {
  if (a === null || a === undefined || b === null || b === undefined) return h('td', {}, '—');
  const d = b - a;
  return h(
    'td',
    { class: d > 0 ? 'up' : d < 0 ? 'down' : '' },
    `${d >= 0 ? '+' : ''}${d.toFixed(2)}`,
  );
}

function show(c: RunComparison): void {
  app.replaceChildren();
  append(
    app,
    h(
      'header',
      {},
      h('h1', {}, 'Compare runs'),
      h('p', { class: 'meta' }, h('strong', {}, 'A '), `${c.a.runId} · ${c.a.policy}`),
      h('p', { class: 'meta' }, h('strong', {}, 'B '), `${c.b.runId} · ${c.b.policy}`),
    ),
    h(
      'table',
      { class: 'per-tool tasks' },
      h('caption', {}, `Per task (${c.tasks.length})`),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['task', 'A success', 'B success', 'A mean F1', 'B mean F1', 'Δ F1 (B − A)'].map((t) =>
            h('th', { scope: 'col' }, t),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        ...c.tasks.map((t) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, t.taskId),
            h('td', {}, success(t.a)),
            h('td', {}, success(t.b)),
            h('td', {}, f2(t.a?.meanFieldF1)),
            h('td', {}, f2(t.b?.meanFieldF1)),
            delta(t.a?.meanFieldF1, t.b?.meanFieldF1),
          ),
        ),
      ),
    ),
    h(
      'p',
      { class: 'meta' },
      `${c.matchedCalls} calls matched in both runs (same task, episode, turn, position and tool); ${c.pairs.length + c.morePairs} where one rehearsed right and the other wrong${c.morePairs ? ` (the first ${c.pairs.length} listed)` : ''}.`,
    ),
    c.pairs.length
      ? h(
          'table',
          { class: 'per-tool pairs' },
          h('caption', {}, 'Rehearsed right in one run, wrong in the other'),
          h(
            'thead',
            {},
            h('tr', {}, ...['task', 'tool', 'A', 'B', ''].map((t) => h('th', { scope: 'col' }, t))),
          ),
          h(
            'tbody',
            {},
            ...c.pairs.map((p) =>
              h(
                'tr',
                { class: `pair a-${p.a.verdict}`, 'data-a': p.a.callId, 'data-b': p.b.callId },
                h('th', { scope: 'row' }, p.taskId),
                h('td', {}, p.tool),
                h(
                  'td',
                  { class: p.a.verdict === 'right' ? 'up' : 'down' },
                  `${p.a.callId} · ${p.a.badge}`,
                ),
                h(
                  'td',
                  { class: p.b.verdict === 'right' ? 'up' : 'down' },
                  `${p.b.callId} · ${p.b.badge}`,
                ),
                h(
                  'td',
                  {},
                  h(
                    'vscode-button',
                    {
                      appearance: 'secondary',
                      class: 'open-pair',
                      onclick: () =>
                        void host.request(runsProtocol.openPair, { a: p.a.callId, b: p.b.callId }),
                    },
                    'Open both diffs',
                  ),
                ),
              ),
            ),
          ),
        )
      : h('p', { class: 'meta' }, 'No call was rehearsed right in one run and wrong in the other.'),
  );
  host.notify(runsProtocol.rendered, { tasks: c.tasks.length, pairs: c.pairs.length });
}

host.ready();
