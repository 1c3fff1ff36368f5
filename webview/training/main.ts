/**
 * The training dashboard: one run's progress (bar and ETA), its command, Cancel / Resume / Use as
 * policy / Compare fidelity, and live charts (loss and reward per role, grounding NLL, validation
 * fidelity, tokens/s). The page is built once and updated in place from each whole snapshot, so
 * keyboard focus stays where it is while the run streams; after drawing it tells the host how many
 * points each chart holds.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import { dashboardProtocol } from '../../src/core/training/dashboard/dashboardProtocol';
import type {
  DashboardRequest,
  DashboardViewState,
  TrainingDashboardSnapshot,
} from '../../src/core/training/dashboard/protocol';
import { formatParameters } from '../../src/core/base/counted';
import { formatDuration } from '../../src/core/training/dashboard/progress';
import type { TrainingChartId } from '../../src/core/training/dashboard/runState';
import { TRAINING_CHARTS } from '../../src/core/training/dashboard/runState';
import { lineChart, setLineSeries } from '../shared/charts';
import { append, h } from '../shared/dom';
import { HostConnection } from '../shared/host';
import { statusLine } from '../shared/status';

const CHARTS: Record<TrainingChartId, { title: string; y: string; empty: string }> = {
  loss: { title: 'Loss per role', y: 'loss', empty: 'No step yet.' },
  reward: {
    title: 'Reward per role',
    y: 'mean reward',
    empty: "No rewards: sft has none; GRPO reports each role's mean reward.",
  },
  groundingNll: {
    title: 'Grounding NLL',
    y: 'NLL per token',
    empty: 'No grounding term in this run (GRPO with grpo.grounding rows).',
  },
  validation: {
    title: 'Validation on held-out tasks',
    y: 'score',
    empty: 'No validation: GRPO validates held-out tasks when its config has validation.command.',
  },
  tokensPerSecond: { title: 'Tokens per second', y: 'tokens/s', empty: 'No step yet.' },
};

const STATUS_TEXT: Record<TrainingDashboardSnapshot['state']['status'], string> = {
  waiting: 'starting',
  running: 'running',
  done: 'done',
  cancelled: 'cancelled',
  failed: 'failed',
};

const app = document.getElementById('app')!;
const host = new HostConnection<DashboardViewState>();
host.on(dashboardProtocol.snapshot, ({ snapshot }) => render(snapshot));
const { send } = statusLine(host, () => status);

type Button = HTMLElement & { disabled: boolean };
const button = (
  label: string,
  method: DashboardRequest['method'],
  done: string,
  secondary = false,
): Button =>
  h(
    'vscode-button',
    // @vscode-elements' button is secondary by its boolean `secondary` attribute.
    { class: method, secondary, onclick: () => void send(dashboardProtocol[method], {}, done) },
    label,
  ) as Button;

const title = h('h1', {});
const badge = h('vscode-badge', { class: 'run-status' });
const command = h('code', { class: 'command' });
const progress = h('progress', {
  class: 'progress',
  max: 1,
  value: 0,
  'aria-label': 'training progress',
});
const progressText = h('span', { class: 'progress-text' });
const buttons = {
  cancel: button(
    'Cancel',
    'cancel',
    'Cancelling: the trainer stops at once; the newest checkpoint stays.',
  ),
  resume: button('Resume from last checkpoint', 'resume', 'Resumed.'),
  usePolicy: button('Use as policy', 'usePolicy', 'Runs now use the new model.', true),
  compare: button('Compare fidelity…', 'compare', 'Compared.', true),
  showLog: button('Show log', 'showLog', 'The log is open in the Output panel.', true),
};
const status = h('div', { class: 'status', role: 'status' });
const afterRun = h('p', { class: 'after-run' });
const problem = h('div', { class: 'problem', role: 'alert' });
const warnings = h('ul', { class: 'warnings' });
const charts = new Map(
  TRAINING_CHARTS.map((id) => {
    const canvas = h('canvas', { role: 'img', 'aria-label': `${CHARTS[id].title}: no data yet` });
    const empty = h('p', { class: 'empty' }, CHARTS[id].empty);
    const latest = h('p', { class: 'latest' });
    const section = h(
      'section',
      { class: `chart ${id}`, 'data-chart': id, 'aria-labelledby': `title-${id}` },
      h('h2', { id: `title-${id}` }, CHARTS[id].title),
      latest,
      empty,
      h('div', { class: 'canvas-box' }, canvas),
    );
    return [
      id,
      { section, canvas, empty, latest, chart: lineChart(canvas, CHARTS[id].y) },
    ] as const;
  }),
);

app.replaceChildren(
  h('header', {}, title, badge, h('p', { class: 'meta' }, 'command: ', command)),
  h('div', { class: 'progress-row' }, progress, progressText),
  h(
    'div',
    { class: 'actions', role: 'toolbar', 'aria-label': 'training run actions' },
    ...Object.values(buttons),
  ),
  status,
  afterRun,
  problem,
  warnings,
  h('div', { class: 'charts' }, ...[...charts.values()].map((c) => c.section)),
);

function progressLine(s: TrainingDashboardSnapshot): string {
  const p = s.state.progress;
  const unit = p.unit === 'iterations' ? 'iteration' : 'step';
  const where = p.total !== null ? `${unit} ${p.done} of ${p.total}` : `${unit} ${p.done}`;
  const eta =
    s.state.status === 'running' && p.secondsLeft !== null
      ? ` · ETA ${formatDuration(p.secondsLeft)}`
      : '';
  const resumed = s.state.resumedFrom ? ` · resumed at step ${s.state.resumedFrom.step}` : '';
  const device = s.state.device ? ` · ${s.state.device}` : '';
  return `${where}${eta}${resumed}${device}${modelText(s.state.model)}`;
}

/** ` · LoRA r16 · 4.4M of 1.7B parameters train` (transformers runs say so; the studio's full runs say nothing new). */
function modelText(m: TrainingDashboardSnapshot['state']['model']): string {
  if (!m) return '';
  const kind =
    m.loraRank > 0 ? `LoRA r${m.loraRank}` : m.backend === 'transformers' ? 'transformers' : '';
  const share =
    m.trainable < m.parameters
      ? ` · ${formatParameters(m.trainable)} of ${formatParameters(m.parameters)} parameters train`
      : '';
  return `${kind ? ` · ${kind}` : ''}${share}`;
}

function latestValues(series: Record<string, [number, number][]>): string {
  const parts = Object.keys(series)
    .sort()
    .flatMap((name) => {
      const last = series[name].at(-1);
      return last ? [`${name} ${last[1] >= 100 ? Math.round(last[1]) : last[1].toFixed(3)}`] : [];
    });
  return parts.join(' · ');
}

function render(s: TrainingDashboardSnapshot): void {
  host.state = { outDir: s.outDir };
  title.textContent = `Training run ${s.name}`;
  badge.textContent = STATUS_TEXT[s.state.status];
  badge.className = `run-status ${s.state.status}`;
  command.textContent = s.command ?? '(not known: the run was not started from this editor)';
  const p = s.state.progress;
  progress.max = p.total ?? Math.max(1, p.done);
  progress.value = p.done;
  progressText.textContent = progressLine(s);
  for (const [name, b] of Object.entries(buttons))
    b.disabled = name === 'showLog' ? false : !s.actions[name as keyof typeof s.actions];
  afterRun.textContent = s.afterRun
    ? {
        exporting: 'Exporting the final model to ONNX…',
        exported: `Exported: ${s.model ?? ''}`,
        failed: `The export failed: ${s.afterRun.message ?? ''}`,
      }[s.afterRun.phase]
    : '';
  problem.replaceChildren();
  if (s.state.error && s.state.status !== 'done') {
    append(
      problem,
      h(
        'p',
        { class: s.state.status === 'cancelled' ? 'cancelled' : 'error' },
        `${s.state.error.code}: ${s.state.error.message}`,
      ),
      s.logTail
        ? h('pre', { class: 'log-tail', 'aria-label': 'last lines of the trainer log' }, s.logTail)
        : undefined,
    );
  }
  warnings.replaceChildren(...s.state.warnings.map((w) => h('li', {}, `${w.code}: ${w.message}`)));
  const points: Partial<Record<TrainingChartId, number>> = {};
  for (const [id, c] of charts) {
    const series = s.state.series[id];
    points[id] = setLineSeries(c.chart, series);
    const has = points[id]! > 0;
    c.empty.hidden = has;
    c.section.classList.toggle('no-data', !has);
    c.latest.textContent = has ? `latest: ${latestValues(series)}` : '';
    c.canvas.setAttribute(
      'aria-label',
      has
        ? `${CHARTS[id].title} over steps; latest ${latestValues(series)}`
        : `${CHARTS[id].title}: no data`,
    );
  }
  host.notify(dashboardProtocol.rendered, { points });
}

host.ready();
