/**
 * The Trajectory panel: one episode as a timeline (user messages, the policy's acts, each call with
 * its rehearsed and actual response side by side, differences highlighted, scores, parse errors)
 * with the controls to mark fidelity errors. It renders whole snapshots from the host and keeps
 * only view state (which episode, scroll position) itself.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '@vscode-elements/elements/dist/vscode-divider/index.js';
import type { HostMessage, PanelRequest, TrajectoryViewState } from '../../src/core/trajectory/protocol';
import type { TrajectoryCall, TrajectorySide, TrajectorySnapshot, TrajectoryTurn } from '../../src/core/trajectory/snapshot';
import { h } from '../shared/dom';
import { HostConnection } from '../shared/host';
import { statusLine } from '../shared/status';

const app = document.getElementById('app')!;
const host = new HostConnection<PanelRequest, HostMessage, TrajectoryViewState>((m) => { if (m.type === 'snapshot') render(m.snapshot); });
const { send } = statusLine(host, () => status);
let current: TrajectorySnapshot | undefined;
let status: HTMLElement | undefined;

const DIFF_WORDS: Record<string, string> = { changed: 'value differs', typeChanged: 'type differs', added: 'missing from the rehearsal', removed: 'invented by the rehearsal' };


function render(snapshot: TrajectorySnapshot): void {
  const first = current === undefined;
  const scrollY = first ? host.state?.scrollY ?? 0 : window.scrollY;
  current = snapshot;
  host.state = { file: snapshot.file, episodeId: snapshot.episode.episodeId, scrollY };
  status = h('div', { class: 'status', role: 'status' });
  app.replaceChildren(header(snapshot), status, timeline(snapshot));
  if (snapshot.focusCallId && first) document.getElementById(`call-${snapshot.focusCallId}`)?.scrollIntoView({ block: 'start' });
  else window.scrollTo(0, scrollY);
}

function header(s: TrajectorySnapshot): HTMLElement {
  const ep = s.episode;
  const checks = ep.checks.length ? h('ul', { class: 'checks' }, ...ep.checks.map((c) => h('li', { class: c.passed === true ? 'pass' : c.passed === false ? 'fail' : 'skip' },
    c.passed === true ? '✓ ' : c.passed === false ? '✗ ' : '– ', c.id, c.detail ? ` — ${c.detail}` : ''))) : undefined;
  return h('header', { class: 'episode' },
    h('h1', {}, `${ep.episodeId} · ${ep.taskId}`, ep.role ? ` (${ep.role})` : ''),
    h('vscode-badge', { class: `outcome ${ep.nodeStatus}`, variant: 'counter' }, ep.description),
    h('p', { class: 'meta' }, `run ${s.runId} · ${s.mode} · policy ${s.policy}`),
    ep.instruction ? h('p', { class: 'instruction' }, ep.instruction) : undefined,
    checks,
    ep.error ? h('p', { class: 'error' }, `${ep.error.code}: ${ep.error.message}`) : undefined,
    s.readOnly ? h('p', { class: 'readonly' }, s.readOnly) : undefined,
  );
}

/** The longest act, rehearsal or tool call of the episode: latency bars are drawn against it. */
let longestMs = 1;

/** A latency bar: its length against the episode's longest step, and the time as text. */
function latencyBar(what: string, ms: number | undefined): HTMLElement | undefined {
  if (ms === undefined) return undefined;
  const bar = h('span', { class: 'bar' });
  bar.style.width = `${Math.max(1, Math.round((100 * ms) / longestMs))}%`;
  return h('span', { class: `latency ${what}`, title: `${what}: ${ms} ms`, role: 'img', 'aria-label': `${what} ${ms} ms` }, h('span', { class: 'track' }, bar), h('span', { class: 'ms' }, `${what} ${ms} ms`));
}

function timeline(s: TrajectorySnapshot): HTMLElement {
  longestMs = Math.max(1, ...s.turns.flatMap((t) => [t.latencyMs ?? 0, ...t.calls.flatMap((c) => [c.latency.rehearsalMs ?? 0, c.latency.actualMs ?? 0])]));
  return h('ol', { class: 'timeline' }, ...s.turns.map((t) => turn(s, t)));
}

function turn(s: TrajectorySnapshot, t: TrajectoryTurn): HTMLElement {
  const meta = t.tokens ? `${t.tokens.completion} tokens` : '';
  return h('li', { class: 'turn', id: `turn-${t.turnId}` },
    t.user !== undefined ? h('div', { class: 'message user' }, h('span', { class: 'role' }, 'user'), h('p', {}, t.user)) : undefined,
    h('div', { class: 'message act' },
      h('span', { class: 'role' }, `policy · turn ${t.index + 1}`, meta ? ` · ${meta}` : ''),
      latencyBar('act', t.latencyMs),
      t.parse.kind === 'error' ? h('p', { class: 'parse-error' }, `act parse error ${t.parse.code}: ${t.parse.message}`) : undefined,
      t.parse.kind === 'final' ? h('p', { class: 'final' }, h('strong', {}, 'final answer: '), t.parse.answer) : h('pre', { class: 'act-text' }, t.text.trim())),
    ...t.calls.map((c) => call(s, c)),
  );
}

function scores(c: TrajectoryCall): HTMLElement | undefined {
  const sc = c.scores;
  if (!sc) return c.notCompared ? h('span', { class: 'not-compared' }, `not compared: ${c.notCompared}`) : undefined;
  const f = (x: number | null) => (x === null ? '–' : x.toFixed(2));
  return h('span', { class: 'scores' },
    h('span', { title: 'exact match' }, sc.exactMatch ? 'exact' : 'not exact'),
    h('span', { title: 'field F1' }, `F1 ${f(sc.fieldF1)}`),
    h('span', { title: 'key Jaccard' }, `keys ${f(sc.keyJaccard)}`),
    h('span', { title: 'type agreement' }, `types ${f(sc.typeAgreement)}`),
    h('span', { title: 'error agreement', class: sc.errorAgreement ? '' : 'bad' }, sc.errorAgreement ? 'error state agrees' : 'error state differs'));
}

function side(title: string, which: 'rehearsal' | 'actual', sd: TrajectorySide): HTMLElement {
  let body: HTMLElement;
  if (sd.words) {
    body = h('pre', { class: 'text' }, ...sd.words.map((w) => (w.changed ? h('span', { class: `w-changed ${which}` }, w.value) : w.value)));
  } else {
    // A line where a differing path starts is highlighted; the rest of its value is only outlined.
    const marks = new Map<number, { kind: string; first: boolean }>();
    for (const l of sd.lines) if (!marks.get(l.line)?.first) marks.set(l.line, { kind: l.kind, first: l.first });
    const lines = sd.text.replace(/\n$/, '').split('\n');
    body = h('pre', { class: sd.language === 'json' ? 'json' : 'text' }, ...lines.map((line, i) => {
      const mark = marks.get(i);
      return h('span', { class: mark ? `line k-${mark.kind}${mark.first ? '' : ' body'}` : 'line', title: mark ? DIFF_WORDS[mark.kind] : undefined }, line, '\n');
    }));
  }
  return h('div', { class: `side ${which}` }, h('h3', {}, title), body);
}

function call(s: TrajectorySnapshot, c: TrajectoryCall): HTMLElement {
  const form = annotateForm(s, c);
  return h('section', { class: 'call', id: `call-${c.callId}`, 'data-call-id': c.callId },
    h('header', {},
      h('span', { class: 'tool' }, c.tool), ' ', h('span', { class: 'call-id' }, c.callId), ' ',
      h('vscode-badge', { class: `fidelity ${c.badge.status}` }, c.badge.text), ' ',
      scores(c),
      h('vscode-button', { appearance: 'secondary', class: 'open-diff', onclick: () => void send({ method: 'openDiff', callId: c.callId }, 'Opened the diff beside.') }, 'Open diff')),
    c.latency.rehearsalMs !== undefined || c.latency.actualMs !== undefined
      ? h('div', { class: 'latencies' }, latencyBar('rehearse', c.latency.rehearsalMs), latencyBar('tool', c.latency.actualMs)) : undefined,
    h('details', { class: 'arguments' }, h('summary', {}, 'arguments'), h('pre', { class: 'json' }, c.arguments)),
    h('div', { class: 'sides' }, side('Rehearsed', 'rehearsal', c.rehearsal), side('Actual', 'actual', c.actual)),
    c.diff.length ? diffTable(c, form) : undefined,
    annotations(s, c),
    form.container,
  );
}

interface FormHandle {
  /** The form, folded until asked for (it repeated under every call). */
  container: HTMLElement;
  preset(path: string, kind: string): void;
}

function diffTable(c: TrajectoryCall, form: FormHandle): HTMLElement {
  return h('table', { class: 'diff' },
    h('thead', {}, h('tr', {}, h('th', {}, 'path'), h('th', {}, 'difference'), h('th', {}, 'rehearsed'), h('th', {}, 'actual'), h('th', {}))),
    h('tbody', {}, ...c.diff.map((d) => h('tr', { class: `k-${d.kind}` },
      h('td', {}, h('code', {}, d.path)), h('td', {}, DIFF_WORDS[d.kind]),
      h('td', {}, h('code', {}, d.rehearsal ?? '—')), h('td', {}, h('code', {}, d.actual ?? '—')),
      h('td', {}, h('vscode-button', { appearance: 'secondary', class: 'mark-path', onclick: () => form.preset(d.path, d.suggestedKind) }, 'Mark…'))))));
}

function annotations(s: TrajectorySnapshot, c: TrajectoryCall): HTMLElement | undefined {
  if (!c.annotations.length) return undefined;
  const label = (code?: string) => s.kinds.find((k) => k.code === code)?.label ?? code ?? '';
  return h('ul', { class: 'annotations' }, ...c.annotations.map((a) => h('li', { class: a.verdict === 'error' ? `annotation ${a.severity}` : 'annotation accepted' },
    a.verdict === 'error' ? `⚑ ${label(a.kind)} (${a.severity})${a.path ? ` at ${a.path}` : ''}` : '✓ acceptable rehearsal',
    a.note ? h('span', { class: 'note' }, ` — ${a.note}`) : undefined,
    h('span', { class: 'author' }, ` · ${a.author}`),
    s.readOnly ? undefined : h('vscode-button', { appearance: 'icon', class: 'delete', title: 'Delete annotation', 'aria-label': 'Delete annotation', onclick: () => void send({ method: 'delete', annotationId: a.id }, 'Deleted.') }, '✕'))));
}

function select(name: string, options: { value: string; label: string; description?: string }[], selected: string): HTMLElement & { value: string } {
  const el = h('vscode-single-select', { name, class: name, 'aria-label': name }, ...options.map((o) => h('vscode-option', { value: o.value, description: o.description, selected: o.value === selected }, o.label)));
  return el as HTMLElement & { value: string };
}

function annotateForm(s: TrajectorySnapshot, c: TrajectoryCall): FormHandle {
  const kind = select('kind', s.kinds.map((k) => ({ value: k.code, label: k.label, description: k.description })), c.suggestedKind);
  const severity = select('severity', s.severities.map((v) => ({ value: v, label: v })), 'major');
  const path = select('path', [{ value: '', label: 'the whole call' }, ...c.diff.map((d) => ({ value: d.path, label: d.path, description: DIFF_WORDS[d.kind] }))], '');
  const note = h('vscode-textarea', { class: 'note', placeholder: 'Note (optional): what was wrong, what the tool really does', rows: 2, resize: 'vertical', 'aria-label': 'note' }) as HTMLElement & { value: string };
  const disabled = s.readOnly !== undefined;
  const mark = h('vscode-button', { class: 'mark', disabled, onclick: () => void send({ method: 'mark', callId: c.callId, kind: kind.value as never, severity: severity.value as never, ...(path.value ? { path: path.value } : {}), ...(note.value.trim() ? { note: note.value.trim() } : {}) }, `Marked ${c.callId}.`) }, 'Mark error');
  const accept = h('vscode-button', { class: 'accept', appearance: 'secondary', disabled, onclick: () => void send({ method: 'accept', callId: c.callId, ...(note.value.trim() ? { note: note.value.trim() } : {}) }, `Accepted the rehearsal of ${c.callId}.`) }, 'Rehearsal acceptable');
  const element = h('div', { class: 'annotate', role: 'group', 'aria-label': `annotate ${c.callId}` },
    h('label', {}, 'Kind', kind), h('label', {}, 'Severity', severity), h('label', {}, 'Path', path), h('label', { class: 'grow' }, 'Note', note),
    h('div', { class: 'actions' }, mark, accept));
  const container = h('details', { class: 'annotate-open' }, h('summary', {}, s.readOnly ? 'Annotate (view only)' : 'Mark error or accept…'), element) as HTMLDetailsElement;
  return {
    container,
    preset: (p, k) => { container.open = true; path.value = p; kind.value = k; element.scrollIntoView({ block: 'nearest' }); (note as HTMLElement).focus(); },
  };
}

let scrollTimer: number | undefined;
window.addEventListener('scroll', () => {
  clearTimeout(scrollTimer);
  scrollTimer = window.setTimeout(() => { if (current) host.state = { file: current.file, episodeId: current.episode.episodeId, scrollY: window.scrollY }; }, 200);
});

host.ready();
