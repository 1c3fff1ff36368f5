/**
 * The fidelity comparison panel: two policies replayed on a held-out trace, per tool, as a table of
 * `A→B (Δ)` cells and a bar chart of the deltas. Renders whole snapshots from the host, then tells
 * it how many table rows and bars it drew.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import { compareProtocol } from '../../src/core/training/dashboard/compareProtocol';
import type { CompareSnapshot } from '../../src/core/training/dashboard/compareView';
import type { Chart } from 'chart.js';
import { barChart } from '../shared/charts';
import { append, h } from '../shared/dom';
import { HostConnection } from '../shared/host';

const app = document.getElementById('app')!;
const host = new HostConnection<Record<string, never>>();
host.on(compareProtocol.snapshot, ({ snapshot }) => render(snapshot));
let chart: Chart<'bar', (number | null)[]> | undefined;

function table(t: NonNullable<CompareSnapshot['table']>): HTMLElement {
  return h(
    'table',
    { class: 'comparison' },
    h('caption', {}, 'Per tool: A→B (Δ = B − A)'),
    h('thead', {}, h('tr', {}, ...t.header.map((c) => h('th', { scope: 'col' }, c)))),
    h(
      'tbody',
      {},
      ...t.rows.map((r) =>
        h(
          'tr',
          { class: r[0] === '(all)' ? 'overall' : '' },
          h('th', { scope: 'row' }, r[0]),
          ...r
            .slice(1)
            .map((c) => h('td', { class: /\(\+/.test(c) ? 'up' : /\(-/.test(c) ? 'down' : '' }, c)),
        ),
      ),
    ),
  );
}

function render(s: CompareSnapshot): void {
  chart?.destroy();
  chart = undefined;
  const canvas = s.bars
    ? h('canvas', {
        role: 'img',
        'aria-label': 'Bar chart of the per-tool deltas; the same numbers are in the table above',
      })
    : undefined;
  app.replaceChildren();
  append(
    app,
    h(
      'header',
      {},
      h('h1', {}, 'Fidelity comparison'),
      h('vscode-badge', { class: `compare-status ${s.status}` }, s.status),
      h('p', { class: 'meta' }, 'A: ', h('code', {}, s.a)),
      h('p', { class: 'meta' }, 'B: ', h('code', {}, s.b)),
      h('p', { class: 'meta' }, 'held-out trace: ', h('code', {}, s.trace)),
    ),
    s.message
      ? h('p', { class: s.status === 'failed' ? 'error' : 'status', role: 'status' }, s.message)
      : undefined,
    s.table ? table(s.table) : undefined,
    canvas
      ? h(
          'section',
          { class: 'chart' },
          h('h2', {}, 'Δ per tool'),
          h('div', { class: 'canvas-box' }, canvas),
        )
      : undefined,
    ...s.notes.map((n) => h('p', { class: 'note' }, n)),
  );
  if (canvas && s.bars) chart = barChart(canvas, s.bars.labels, s.bars.datasets, 'Δ (B − A)');
  const bars = s.bars
    ? s.bars.datasets.reduce((n, d) => n + d.data.filter((v) => v !== null).length, 0)
    : 0;
  host.notify(compareProtocol.rendered, { rows: s.table?.rows.length ?? 0, bars });
}

host.ready();
