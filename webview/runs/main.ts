/**
 * The Compare Runs panel: two runs of the same tasks, per task (success, mean field F1 and key
 * Jaccard, parse errors; each row's button opens both Trajectories) and per call whose rehearsal
 * scored differently (field F1, key Jaccard, error state, parse; each row's button opens both
 * diffs), regressions first. The host computes every value.
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

function delta(d: number | null | undefined): HTMLElement {
  if (d === null || d === undefined) return h('td', {}, '—');
  return h(
    'td',
    { class: d > 1e-9 ? 'up' : d < -1e-9 ? 'down' : '' },
    `${d >= 0 ? '+' : ''}${d.toFixed(2)}`,
  );
}

const minus = (a: number | null | undefined, b: number | null | undefined) =>
  a === null || a === undefined || b === null || b === undefined ? null : b - a;

/** `agrees → differs` of a yes/no score, marked when it changed. */
function flip(a: boolean | null, b: boolean | null, yes: string, no: string): HTMLElement {
  const word = (x: boolean | null) => (x === null ? '—' : x ? yes : no);
  if (a === b) return h('td', {}, word(a));
  return h('td', { class: b ? 'up' : 'down' }, `${word(a)} → ${word(b)}`);
}

function button(label: string, onclick: () => void, cls: string): HTMLElement {
  return h('vscode-button', { secondary: true, class: cls, onclick }, label);
}

/** A table of the panel: its caption, column titles and rows. */
function table(cls: string, caption: string, columns: string[], rows: HTMLElement[]): HTMLElement {
  return h(
    'table',
    { class: `per-tool ${cls}` },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...columns.map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, ...rows),
  );
}

function tasksTable(c: RunComparison): HTMLElement {
  const regressions = c.tasks.filter((t) => t.regression).length;
  return table(
    'tasks',
    `Per task (${c.tasks.length}; ${regressions} where B did worse, listed first)`,
    [
      'task',
      'A success',
      'B success',
      'A mean F1',
      'B mean F1',
      'Δ F1',
      'Δ key Jaccard',
      'parse errors A → B',
      '',
    ],
    c.tasks.map((t) =>
      h(
        'tr',
        { class: t.regression ? 'task regression' : 'task', 'data-task': t.taskId },
        h('th', { scope: 'row' }, t.taskId),
        h('td', {}, success(t.a)),
        h('td', {}, success(t.b)),
        h('td', {}, f2(t.a?.meanFieldF1)),
        h('td', {}, f2(t.b?.meanFieldF1)),
        delta(minus(t.a?.meanFieldF1, t.b?.meanFieldF1)),
        delta(minus(t.a?.meanKeyJaccard, t.b?.meanKeyJaccard)),
        h('td', {}, `${t.a?.parseErrors ?? '—'} → ${t.b?.parseErrors ?? '—'}`),
        h(
          'td',
          {},
          button(
            'Open both',
            () => void host.request(runsProtocol.openTask, { taskId: t.taskId }),
            'open-task',
          ),
        ),
      ),
    ),
  );
}

function pairsTable(c: RunComparison): HTMLElement {
  const regressions = c.pairs.filter((p) => p.regression).length;
  return table(
    'pairs',
    `Calls whose rehearsal scored differently: ${regressions} worse in B (first), ${c.pairs.length - regressions} better`,
    ['task', 'tool', 'A', 'B', 'Δ F1', 'Δ key Jaccard', 'error state', 'parse', ''],
    c.pairs.map((p) =>
      h(
        'tr',
        {
          class: `pair ${p.regression ? 'regression' : 'improvement'} a-${p.a.verdict}`,
          'data-a': p.a.callId,
          'data-b': p.b.callId,
        },
        h('th', { scope: 'row' }, p.taskId),
        h('td', {}, p.tool),
        h('td', {}, `${p.a.callId} · ${p.a.badge}`),
        h('td', {}, `${p.b.callId} · ${p.b.badge}`),
        delta(p.change.fieldF1),
        delta(p.change.keyJaccard),
        flip(p.a.scores.errorState, p.b.scores.errorState, 'agrees', 'differs'),
        flip(p.a.scores.parsed, p.b.scores.parsed, 'parsed', 'did not parse'),
        h(
          'td',
          {},
          button(
            'Open both diffs',
            () => void host.request(runsProtocol.openPair, { a: p.a.callId, b: p.b.callId }),
            'open-pair',
          ),
        ),
      ),
    ),
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
    tasksTable(c),
    h(
      'p',
      { class: 'meta' },
      `${c.matchedCalls} calls matched in both runs (same task, episode, turn, position and tool); ${c.pairs.length + c.morePairs} whose rehearsal scored differently${c.morePairs ? ` (the first ${c.pairs.length} listed)` : ''}.`,
    ),
    c.pairs.length
      ? pairsTable(c)
      : h(
          'p',
          { class: 'meta' },
          'Every call matched in both runs was rehearsed with the same scores.',
        ),
  );
  host.notify(runsProtocol.rendered, { tasks: c.tasks.length, pairs: c.pairs.length });
}

host.ready();
