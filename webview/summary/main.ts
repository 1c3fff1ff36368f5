/**
 * The run summary panel: a run's metrics, its fidelity per tool, and a table of its episodes that
 * sorts (click or Enter on a header), filters (text, outcome), scrolls through 100,000 rows by
 * drawing only those in view, and is driven from the keyboard (arrows, Page Up/Down, Home/End,
 * Enter opens the episode's Trajectory). The host computes every value.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import type { RunSummarySnapshot } from '../../src/core/report/runSummary';
import { summaryProtocol } from '../../src/core/report/summaryProtocol';
import { append, h } from '../shared/dom';
import { HostConnection } from '../shared/host';

const app = document.getElementById('app')!;
const host = new HostConnection<{ sort?: SortState; text?: string; outcome?: string }>();
host.on(summaryProtocol.snapshot, ({ snapshot }) => show(snapshot));

type Column =
  | 'task'
  | 'outcome'
  | 'reward'
  | 'turns'
  | 'calls'
  | 'fidelity'
  | 'worst'
  | 'parseErrors'
  | 'duration';
interface SortState {
  column: Column;
  descending: boolean;
}

const COLUMNS: { key: Column; title: string; numeric: boolean }[] = [
  { key: 'task', title: 'episode · task', numeric: false },
  { key: 'outcome', title: 'outcome', numeric: false },
  { key: 'reward', title: 'reward', numeric: true },
  { key: 'turns', title: 'turns', numeric: true },
  { key: 'calls', title: 'calls', numeric: true },
  { key: 'fidelity', title: 'mean F1', numeric: true },
  { key: 'worst', title: 'worst call', numeric: true },
  { key: 'parseErrors', title: 'parse errors', numeric: true },
  { key: 'duration', title: 'duration', numeric: true },
];
const ROW_PX = 24;
const BUFFER_ROWS = 10;

let snap: RunSummarySnapshot | undefined;
let sort: SortState = host.state?.sort ?? { column: 'fidelity', descending: false };
let text = host.state?.text ?? '';
let outcome = host.state?.outcome ?? 'all';
/** Episode rows (indexes into the snapshot's columns) after filter and sort. */
let order: number[] = [];
let selected = 0;
let viewport: HTMLElement | undefined;
let body: HTMLElement | undefined;
let spacer: HTMLElement | undefined;
let countLine: HTMLElement | undefined;

const pct = (n: number, d: number) => (d > 0 ? `${((100 * n) / d).toFixed(1)}%` : '—');
const f2 = (x: number | null) => (x === null ? '—' : x.toFixed(2));
const duration = (ms: number | null) =>
  ms === null ? '—' : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;

function metric(label: string, value: string, detail?: string): HTMLElement {
  return h(
    'div',
    { class: 'metric' },
    h('span', { class: 'value' }, value),
    h('span', { class: 'label' }, label),
    detail ? h('span', { class: 'detail' }, detail) : undefined,
  );
}

function key(i: number): number | string {
  const e = snap!.episodes;
  switch (sort.column) {
    case 'task':
      return `${e.taskIds[i]} ${e.episodeIds[i]}`;
    case 'outcome':
      return e.outcomes[i];
    case 'reward':
      return e.rewards[i] ?? -Infinity;
    case 'turns':
      return e.turns[i];
    case 'calls':
      return e.calls[i];
    case 'fidelity':
      return e.meanFieldF1[i] ?? Infinity;
    case 'worst':
      return e.worstFieldF1[i] ?? Infinity;
    case 'parseErrors':
      return e.parseErrors[i];
    case 'duration':
      return e.durationMs[i] ?? -Infinity;
  }
}

function recompute(): void {
  if (!snap) return;
  const e = snap.episodes;
  const q = text.trim().toLowerCase();
  const rows: number[] = [];
  for (let i = 0; i < e.episodeIds.length; i++) {
    if (outcome !== 'all' && e.statuses[i] !== outcome) continue;
    if (
      q &&
      !`${e.episodeIds[i]} ${e.taskIds[i]} ${e.outcomes[i]} ${e.worstCallIds[i] ?? ''}`
        .toLowerCase()
        .includes(q)
    )
      continue;
    rows.push(i);
  }
  const keys = rows.map(key);
  const idx = rows.map((_, k) => k);
  const dir = sort.descending ? -1 : 1;
  idx.sort((a, b) => (keys[a] < keys[b] ? -dir : keys[a] > keys[b] ? dir : rows[a] - rows[b]));
  order = idx.map((k) => rows[k]);
  selected = Math.min(selected, Math.max(0, order.length - 1));
  host.state = { sort, text, outcome };
  if (spacer) spacer.style.height = `${order.length * ROW_PX}px`;
  if (countLine)
    countLine.textContent = `${order.length.toLocaleString('en-US')} of ${e.episodeIds.length.toLocaleString('en-US')} episodes`;
  for (const th of Array.from(document.querySelectorAll<HTMLElement>('.grid-head [data-column]'))) {
    const active = th.dataset.column === sort.column;
    th.setAttribute('aria-sort', active ? (sort.descending ? 'descending' : 'ascending') : 'none');
  }
  draw();
}

function cells(i: number): (string | HTMLElement)[] {
  const e = snap!.episodes;
  const worst = e.worstCallIds[i];
  return [
    `${e.episodeIds[i]} · ${e.taskIds[i]}`,
    h('span', { class: `outcome ${e.statuses[i]}` }, e.outcomes[i]),
    f2(e.rewards[i]),
    String(e.turns[i]),
    String(e.calls[i]),
    f2(e.meanFieldF1[i]),
    worst ? `${worst} · ${e.worstFieldF1[i] === -1 ? 'parse error' : f2(e.worstFieldF1[i])}` : '—',
    String(e.parseErrors[i]),
    duration(e.durationMs[i]),
  ];
}

/** Draws the rows in view (and a few around them). */
function draw(): void {
  if (!snap || !viewport || !body) return;
  const first = Math.max(0, Math.floor(viewport.scrollTop / ROW_PX) - BUFFER_ROWS);
  const last = Math.min(
    order.length,
    Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW_PX) + BUFFER_ROWS,
  );
  body.style.transform = `translateY(${first * ROW_PX}px)`;
  body.replaceChildren(
    ...order.slice(first, last).map((i, k) => {
      const position = first + k;
      return h(
        'div',
        {
          class: `grid-row${position === selected ? ' selected' : ''}`,
          role: 'row',
          'aria-rowindex': position + 2,
          'aria-selected': position === selected ? 'true' : 'false',
          'data-episode-id': snap!.episodes.episodeIds[i],
          onclick: () => {
            selected = position;
            draw();
          },
          ondblclick: () => open(position),
        },
        ...cells(i).map((c) => h('span', { role: 'gridcell' }, c)),
      );
    }),
  );
  host.notify(summaryProtocol.rendered, {
    rows: last - first,
    shown: order.length,
    total: snap.episodes.episodeIds.length,
  });
}

function open(position: number): void {
  const i = order[position];
  if (i === undefined || !snap) return;
  const e = snap.episodes;
  void host.request(summaryProtocol.openEpisode, {
    episodeId: e.episodeIds[i],
    ...(e.worstCallIds[i] ? { callId: e.worstCallIds[i]! } : {}),
  });
}

function move(to: number): void {
  if (!viewport || order.length === 0) return;
  selected = Math.max(0, Math.min(order.length - 1, to));
  const top = selected * ROW_PX;
  if (top < viewport.scrollTop) viewport.scrollTop = top;
  else if (top + ROW_PX > viewport.scrollTop + viewport.clientHeight)
    viewport.scrollTop = top + ROW_PX - viewport.clientHeight;
  draw();
}

function onKey(ev: Event): void {
  const event = ev as KeyboardEvent;
  const page = Math.max(1, Math.floor((viewport?.clientHeight ?? ROW_PX * 10) / ROW_PX) - 1);
  const moves: Record<string, () => number> = {
    ArrowDown: () => selected + 1,
    ArrowUp: () => selected - 1,
    PageDown: () => selected + page,
    PageUp: () => selected - page,
    Home: () => 0,
    End: () => order.length - 1,
  };
  if (moves[event.key]) {
    event.preventDefault();
    move(moves[event.key]());
  } else if (event.key === 'Enter') {
    event.preventDefault();
    open(selected);
  }
}

function sortBy(column: Column): void {
  sort =
    sort.column === column
      ? { column, descending: !sort.descending }
      : {
          column,
          descending:
            COLUMNS.find((c) => c.key === column)!.numeric &&
            column !== 'fidelity' &&
            column !== 'worst',
        };
  recompute();
}

function show(s: RunSummarySnapshot): void {
  const first = snap === undefined;
  snap = s;
  const m = s.metrics;
  const filterBox = h('input', {
    type: 'search',
    class: 'filter-text',
    placeholder: 'Filter: task, episode, outcome, call',
    'aria-label': 'filter episodes',
    value: text,
    oninput: (ev: Event) => {
      text = (ev.target as HTMLInputElement).value;
      recompute();
    },
  }) as HTMLInputElement;
  const outcomeBox = h(
    'select',
    {
      class: 'filter-outcome',
      'aria-label': 'outcome',
      onchange: (ev: Event) => {
        outcome = (ev.target as HTMLSelectElement).value;
        recompute();
      },
    },
    ...[
      ['all', 'every outcome'],
      ['ok', 'success'],
      ['mismatch', 'failure'],
      ['error', 'failed to play'],
      ['running', 'running'],
      ['info', 'ungraded'],
    ].map(([v, l]) => h('option', { value: v, selected: v === outcome }, l)),
  );
  countLine = h('span', { class: 'count', role: 'status' });
  spacer = h('div', { class: 'spacer' });
  body = h('div', { class: 'rows', role: 'rowgroup' });
  const scrollTop = viewport?.scrollTop ?? 0;
  viewport = h(
    'div',
    {
      class: 'viewport',
      tabindex: 0,
      role: 'grid',
      'aria-label': 'episodes',
      'aria-rowcount': m.episodes + 1,
      onkeydown: onKey,
      onscroll: () => draw(),
    },
    spacer,
    body,
  );
  app.replaceChildren();
  append(
    app,
    h(
      'header',
      {},
      h('h1', {}, `Run ${s.runId}`),
      ' ',
      h('vscode-badge', { class: `run-status ${s.status}` }, s.status),
      h(
        'p',
        { class: 'meta' },
        `${s.mode} · ${s.policy}${s.device ? ` · device ${s.device}` : ''}`,
      ),
    ),
    h(
      'section',
      { class: 'metrics', 'aria-label': 'metrics' },
      metric('success', pct(m.successes, m.graded), `${m.successes} of ${m.graded} graded`),
      metric('mean reward', f2(m.meanReward)),
      metric('act parse validity', pct(m.actParseValid, m.turns), `${m.turns} turns`),
      metric(
        'rehearsal validity',
        pct(m.rehearsalParseValid, m.rehearsed),
        `${m.rehearsed} rehearsed`,
      ),
      metric('exact rehearsals', pct(m.exact, m.scored), `${m.scored} scored`),
      metric('mean field F1', f2(m.meanFieldF1)),
      metric(
        'act tokens/s',
        m.actTokensPerSecond === null ? '—' : m.actTokensPerSecond.toFixed(0),
        s.device ? `on ${s.device}` : undefined,
      ),
    ),
    s.bfcl
      ? h(
          'table',
          { class: 'per-tool bfcl' },
          h(
            'caption',
            {},
            `BFCL-v4 accuracy per category (BFCL's verdict per record) · overall ${s.bfcl.overall === null ? '—' : `${(100 * s.bfcl.overall).toFixed(1)}%`}`,
          ),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['category', 'graded', 'passed', 'accuracy'].map((t) =>
                h('th', { scope: 'col' }, t),
              ),
            ),
          ),
          h(
            'tbody',
            {},
            ...s.bfcl.categories.map((c) =>
              h(
                'tr',
                {},
                h('th', { scope: 'row' }, c.category),
                h('td', {}, String(c.graded)),
                h('td', {}, String(c.passed)),
                h('td', {}, pct(c.passed, c.graded)),
              ),
            ),
          ),
        )
      : undefined,
    s.perTool.length
      ? h(
          'table',
          { class: 'per-tool' },
          h('caption', {}, 'Fidelity per tool'),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...[
                'tool',
                'calls',
                'scored',
                'exact',
                'mean field F1',
                'rehearsal parse errors',
              ].map((t) => h('th', { scope: 'col' }, t)),
            ),
          ),
          h(
            'tbody',
            {},
            ...s.perTool.map((t) =>
              h(
                'tr',
                {},
                h('th', { scope: 'row' }, t.tool),
                h('td', {}, String(t.calls)),
                h('td', {}, String(t.scored)),
                h('td', {}, pct(t.exact, t.scored)),
                h('td', {}, f2(t.meanFieldF1)),
                h('td', {}, String(t.rehearsalParseErrors)),
              ),
            ),
          ),
        )
      : undefined,
    h(
      'section',
      { class: 'episodes', 'aria-label': 'episodes' },
      h(
        'div',
        { class: 'controls' },
        filterBox,
        outcomeBox,
        countLine,
        h(
          'span',
          { class: 'hint' },
          '↑↓ select · Enter opens the Trajectory · click a header to sort',
        ),
      ),
      h(
        'div',
        { class: 'grid-head', role: 'row' },
        ...COLUMNS.map((c) =>
          h(
            'span',
            {
              role: 'columnheader',
              tabindex: 0,
              'data-column': c.key,
              class: c.numeric ? 'numeric' : '',
              onclick: () => sortBy(c.key),
              onkeydown: (ev: Event) => {
                if ((ev as KeyboardEvent).key === 'Enter') sortBy(c.key);
              },
            },
            c.title,
          ),
        ),
      ),
      viewport,
    ),
  );
  viewport.scrollTop = scrollTop;
  recompute();
  if (first) viewport.focus();
}

window.addEventListener('resize', () => draw());
host.ready();
