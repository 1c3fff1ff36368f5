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
import type { AnnotationKind, AnnotationSeverity } from '../../src/core/annotations/schema';
import type { TrajectoryViewState } from '../../src/core/trajectory/protocol';
import type {
  TrajectoryCall,
  TrajectorySide,
  TrajectorySnapshot,
  TrajectoryTurn,
  TrajectoryUserCall,
} from '../../src/core/trajectory/snapshot';
import { trajectoryProtocol } from '../../src/core/trajectory/trajectoryProtocol';
import { h } from '../shared/dom';
import { HostConnection } from '../shared/host';
import { statusLine } from '../shared/status';

const app = document.getElementById('app')!;
const host = new HostConnection<TrajectoryViewState>();
host.on(trajectoryProtocol.snapshot, ({ snapshot }) => render(snapshot));
const { send } = statusLine(host, () => status);
let current: TrajectorySnapshot | undefined;
let status: HTMLElement | undefined;

const DIFF_WORDS: Record<string, string> = {
  changed: 'value differs',
  typeChanged: 'type differs',
  added: 'missing from the rehearsal',
  removed: 'invented by the rehearsal',
};

function render(snapshot: TrajectorySnapshot): void {
  const first = current === undefined;
  const scrollY = first ? (host.state?.scrollY ?? 0) : window.scrollY;
  current = snapshot;
  host.state = { file: snapshot.file, episodeId: snapshot.episode.episodeId, scrollY };
  status = h('div', { class: 'status', role: 'status' });
  app.replaceChildren(
    ...[header(snapshot), status, memorySection(snapshot.memory), timeline(snapshot)].filter(
      (part): part is HTMLElement => part !== undefined,
    ),
  );
  if (snapshot.focusCallId && first)
    document.getElementById(`call-${snapshot.focusCallId}`)?.scrollIntoView({ block: 'start' });
  else window.scrollTo(0, scrollY);
}

function header(snapshot: TrajectorySnapshot): HTMLElement {
  const episode = snapshot.episode;
  const checks = episode.checks.length
    ? h(
        'ul',
        { class: 'checks' },
        ...episode.checks.map((check) =>
          h(
            'li',
            { class: check.passed === true ? 'pass' : check.passed === false ? 'fail' : 'skip' },
            check.passed === true ? '✓ ' : check.passed === false ? '✗ ' : '– ',
            check.id,
            check.detail ? ` — ${check.detail}` : '',
          ),
        ),
      )
    : undefined;
  return h(
    'header',
    { class: 'episode' },
    h(
      'h1',
      {},
      `${episode.episodeId} · ${episode.taskId}`,
      episode.role ? ` (${episode.role})` : '',
    ),
    h(
      'vscode-badge',
      { class: `outcome ${episode.nodeStatus}`, variant: 'counter' },
      episode.description,
    ),
    h(
      'p',
      { class: 'meta' },
      `run ${snapshot.runId} · ${snapshot.mode} · policy ${snapshot.policy}`,
    ),
    episode.instruction ? h('p', { class: 'instruction' }, episode.instruction) : undefined,
    checks,
    episode.error
      ? h('p', { class: 'error' }, `${episode.error.code}: ${episode.error.message}`)
      : undefined,
    snapshot.readOnly ? h('p', { class: 'readonly' }, snapshot.readOnly) : undefined,
  );
}

/** A committed episode's memory, as its snapshot carries it. */
type RehearsalMemory = NonNullable<TrajectorySnapshot['memory']>;

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

/** `attempts 1, 2` / `attempt 3`. */
function attemptsText(attempts: readonly number[]): string {
  return `${plural(attempts.length, 'attempt', 'attempts')} ${attempts.join(', ')}`;
}

/** A button that opens an imagined attempt's own Trajectory panel. */
function attemptButton(attempt: RehearsalMemory['attempts'][number], label: string): HTMLElement {
  return h(
    'vscode-button',
    {
      secondary: true,
      class: 'open-attempt',
      'data-episode-id': attempt.episodeId,
      'aria-label': `Open the Trajectory of attempt ${attempt.attempt} (${attempt.episodeId})`,
      onclick: () =>
        void send(
          trajectoryProtocol.openEpisode,
          { episodeId: attempt.episodeId },
          `Opened attempt ${attempt.attempt}.`,
        ),
    },
    label,
  );
}

/** An `outcomes` memory line by line: each line, the attempts behind it, and their calls (each opens its diff). */
function memoryLines(memory: RehearsalMemory): HTMLElement {
  return h(
    'ol',
    { class: 'memory-lines' },
    ...memory.lines.map((line, n) =>
      h(
        'li',
        { class: 'memory-line', 'data-line': n },
        h('code', { class: 'memory-line-text' }, line.text),
        line.attempts.length
          ? h('span', { class: 'memory-from' }, `from ${attemptsText(line.attempts)}`)
          : undefined,
        h(
          'span',
          { class: 'memory-sources' },
          ...line.calls.map((call) =>
            h(
              'vscode-button',
              {
                secondary: true,
                class: 'memory-call',
                'data-call-id': call.callId,
                title: `Open the diff of ${call.tool} ${call.callId}`,
                'aria-label': `Open the diff of ${call.tool} ${call.callId}, attempt ${call.attempt}`,
                onclick: () =>
                  void send(
                    trajectoryProtocol.openDiff,
                    { callId: call.callId },
                    'Opened the diff beside.',
                  ),
              },
              `attempt ${call.attempt} · ${call.callId}`,
            ),
          ),
          // A line made by no call (the attempts that made no write) opens on the attempts it names.
          ...(line.calls.length
            ? []
            : memory.attempts
                .filter((a) => line.attempts.includes(a.attempt))
                .map((a) => attemptButton(a, `attempt ${a.attempt} · ${a.episodeId}`))),
        ),
      ),
    ),
  );
}

/**
 * A committed episode of private rehearsal: the memory it read, before its turns, and the imagined
 * attempts it was made from, each with the lines it made when the memory is mapped line by line.
 */
function memorySection(memory: RehearsalMemory | undefined): HTMLElement | undefined {
  if (!memory) return undefined;
  const from = `${memory.attempts.length} imagined ${plural(memory.attempts.length, 'attempt', 'attempts')}`;
  return h(
    'section',
    { class: 'memory', 'aria-labelledby': 'memory-title' },
    h('h2', { id: 'memory-title' }, 'Rehearsal memory', memory.kind ? ` · ${memory.kind}` : ''),
    h(
      'p',
      { class: 'meta' },
      memory.text === undefined
        ? `No memory was recorded: the episode's tools did not start. It was to be made from ${from}.`
        : `What this episode read before it acted, made from ${from}.`,
    ),
    memory.unmapped ? h('p', { class: 'memory-unmapped' }, memory.unmapped) : undefined,
    memory.mapped
      ? memoryLines(memory)
      : memory.text !== undefined
        ? h('pre', { class: 'memory-text' }, memory.text)
        : undefined,
    memory.attempts.length
      ? h(
          'div',
          { class: 'memory-attempts' },
          h('h3', {}, 'Imagined attempts'),
          h(
            'ul',
            {},
            ...memory.attempts.map((attempt) =>
              h(
                'li',
                { class: `memory-attempt ${attempt.status}`, 'data-episode-id': attempt.episodeId },
                h('span', { class: 'attempt-name' }, `attempt ${attempt.attempt}`),
                ` · ${attempt.episodeId} · ${attempt.description}`,
                memory.mapped
                  ? h(
                      'span',
                      { class: 'attempt-lines' },
                      attempt.lines.length
                        ? ` · made ${plural(attempt.lines.length, 'line', 'lines')} ${attempt.lines.map((n) => n + 1).join(', ')}`
                        : ' · made no line',
                    )
                  : undefined,
                ' ',
                attemptButton(attempt, 'Open trajectory'),
              ),
            ),
          ),
        )
      : undefined,
  );
}

/** The longest act, rehearsal or tool call of the episode: latency bars are drawn against it. */
let longestMs = 1;

/** A latency bar: its length against the episode's longest step, and the time as text. */
function latencyBar(what: string, ms: number | undefined): HTMLElement | undefined {
  if (ms === undefined) return undefined;
  const bar = h('span', { class: 'bar' });
  bar.style.width = `${Math.max(1, Math.round((100 * ms) / longestMs))}%`;
  return h(
    'span',
    {
      class: `latency ${what}`,
      title: `${what}: ${ms} ms`,
      role: 'img',
      'aria-label': `${what} ${ms} ms`,
    },
    h('span', { class: 'track' }, bar),
    h('span', { class: 'ms' }, `${what} ${ms} ms`),
  );
}

function timeline(snapshot: TrajectorySnapshot): HTMLElement {
  longestMs = Math.max(
    1,
    ...snapshot.turns.flatMap((turn) => [
      turn.latencyMs ?? 0,
      ...turn.calls.flatMap((call) => [call.latency.rehearsalMs ?? 0, call.latency.actualMs ?? 0]),
    ]),
  );
  return h(
    'ol',
    { class: 'timeline' },
    ...snapshot.turns.map((turn) => turnItem(snapshot, turn)),
    snapshot.userCallsAfter
      ? h('li', { class: 'turn' }, ...snapshot.userCallsAfter.map(userCallItem))
      : undefined,
  );
}

/** A call the user made with a tool of its own (τ²'s telecom user on its phone): the user's, not the policy's. */
function userCallItem(call: TrajectoryUserCall): HTMLElement {
  return h(
    'div',
    { class: 'message user user-call' },
    h('span', { class: 'role' }, "user's own call (not the policy's)"),
    h('pre', {}, `${call.tool}(${call.arguments})`),
    h('pre', { class: call.error ? 'parse-error' : '' }, call.result),
  );
}

function turnItem(snapshot: TrajectorySnapshot, turn: TrajectoryTurn): HTMLElement {
  const meta = turn.tokens ? `${turn.tokens.completion} tokens` : '';
  return h(
    'li',
    { class: 'turn', id: `turn-${turn.turnId}` },
    ...(turn.userCalls ?? []).map(userCallItem),
    turn.user !== undefined
      ? h(
          'div',
          { class: 'message user' },
          h('span', { class: 'role' }, 'user'),
          h('p', {}, turn.user),
        )
      : undefined,
    h(
      'div',
      { class: 'message act' },
      h('span', { class: 'role' }, `policy · turn ${turn.index + 1}`, meta ? ` · ${meta}` : ''),
      latencyBar('act', turn.latencyMs),
      turn.parse.kind === 'error'
        ? h(
            'p',
            { class: 'parse-error' },
            `act parse error ${turn.parse.code}: ${turn.parse.message}`,
          )
        : undefined,
      turn.parse.kind === 'final'
        ? h('p', { class: 'final' }, h('strong', {}, 'final answer: '), turn.parse.answer)
        : h('pre', { class: 'act-text' }, turn.text.trim()),
    ),
    ...turn.calls.map((call) => callSection(snapshot, call)),
  );
}

function scoreLine(call: TrajectoryCall): HTMLElement | undefined {
  const scores = call.scores;
  if (!scores)
    return call.notCompared
      ? h('span', { class: 'not-compared' }, `not compared: ${call.notCompared}`)
      : undefined;
  const formatScore = (value: number | null) => (value === null ? '–' : value.toFixed(2));
  return h(
    'span',
    { class: 'scores' },
    h('span', { title: 'exact match' }, scores.exactMatch ? 'exact' : 'not exact'),
    h('span', { title: 'field F1' }, `F1 ${formatScore(scores.fieldF1)}`),
    h('span', { title: 'key Jaccard' }, `keys ${formatScore(scores.keyJaccard)}`),
    h('span', { title: 'type agreement' }, `types ${formatScore(scores.typeAgreement)}`),
    h(
      'span',
      { title: 'error agreement', class: scores.errorAgreement ? '' : 'bad' },
      scores.errorAgreement ? 'error state agrees' : 'error state differs',
    ),
  );
}

function sidePane(title: string, which: 'rehearsal' | 'actual', side: TrajectorySide): HTMLElement {
  let body: HTMLElement;
  if (side.words) {
    body = h(
      'pre',
      { class: 'text' },
      ...side.words.map((word) =>
        word.changed ? h('span', { class: `w-changed ${which}` }, word.value) : word.value,
      ),
    );
  } else {
    // A line where a differing path starts is highlighted; the rest of its value is only outlined.
    const marks = new Map<number, { kind: string; first: boolean }>();
    for (const lineMark of side.lines)
      if (!marks.get(lineMark.line)?.first)
        marks.set(lineMark.line, { kind: lineMark.kind, first: lineMark.first });
    const lines = side.text.replace(/\n$/, '').split('\n');
    body = h(
      'pre',
      { class: side.language === 'json' ? 'json' : 'text' },
      ...lines.map((line, i) => {
        const mark = marks.get(i);
        return h(
          'span',
          {
            class: mark ? `line k-${mark.kind}${mark.first ? '' : ' body'}` : 'line',
            title: mark ? DIFF_WORDS[mark.kind] : undefined,
          },
          line,
          '\n',
        );
      }),
    );
  }
  return h('div', { class: `side ${which}` }, h('h3', {}, title), body);
}

function callSection(snapshot: TrajectorySnapshot, call: TrajectoryCall): HTMLElement {
  const form = annotateForm(snapshot, call);
  return h(
    'section',
    { class: 'call', id: `call-${call.callId}`, 'data-call-id': call.callId },
    h(
      'header',
      {},
      h('span', { class: 'tool' }, call.tool),
      ' ',
      h('span', { class: 'call-id' }, call.callId),
      ' ',
      h('vscode-badge', { class: `fidelity ${call.badge.status}` }, call.badge.text),
      ' ',
      scoreLine(call),
      h(
        'vscode-button',
        {
          secondary: true,
          class: 'open-diff',
          onclick: () =>
            void send(
              trajectoryProtocol.openDiff,
              { callId: call.callId },
              'Opened the diff beside.',
            ),
        },
        'Open diff',
      ),
    ),
    call.latency.rehearsalMs !== undefined || call.latency.actualMs !== undefined
      ? h(
          'div',
          { class: 'latencies' },
          latencyBar('rehearse', call.latency.rehearsalMs),
          latencyBar('tool', call.latency.actualMs),
        )
      : undefined,
    h(
      'details',
      { class: 'arguments' },
      h('summary', {}, 'arguments'),
      h('pre', { class: 'json' }, call.arguments),
    ),
    h(
      'div',
      { class: 'sides' },
      sidePane('Rehearsed', 'rehearsal', call.rehearsal),
      sidePane('Actual', 'actual', call.actual),
    ),
    call.diff.length ? diffTable(call, form) : undefined,
    annotations(snapshot, call),
    form.container,
  );
}

interface FormHandle {
  /** The form, folded until asked for (it repeated under every call). */
  container: HTMLElement;
  preset(path: string, kind: AnnotationKind): void;
}

function diffTable(call: TrajectoryCall, form: FormHandle): HTMLElement {
  return h(
    'table',
    { class: 'diff' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'path'),
        h('th', {}, 'difference'),
        h('th', {}, 'rehearsed'),
        h('th', {}, 'actual'),
        h('th', {}),
      ),
    ),
    h(
      'tbody',
      {},
      ...call.diff.map((difference) =>
        h(
          'tr',
          { class: `k-${difference.kind}` },
          h('td', {}, h('code', {}, difference.path)),
          h('td', {}, DIFF_WORDS[difference.kind]),
          h('td', {}, h('code', {}, difference.rehearsal ?? '—')),
          h('td', {}, h('code', {}, difference.actual ?? '—')),
          h(
            'td',
            {},
            h(
              'vscode-button',
              {
                secondary: true,
                class: 'mark-path',
                onclick: () => form.preset(difference.path, difference.suggestedKind),
              },
              'Mark…',
            ),
          ),
        ),
      ),
    ),
  );
}

function annotations(snapshot: TrajectorySnapshot, call: TrajectoryCall): HTMLElement | undefined {
  if (!call.annotations.length) return undefined;
  const label = (code?: string) =>
    snapshot.kinds.find((kind) => kind.code === code)?.label ?? code ?? '';
  return h(
    'ul',
    { class: 'annotations' },
    ...call.annotations.map((annotation) =>
      h(
        'li',
        {
          class:
            annotation.verdict === 'error'
              ? `annotation ${annotation.severity}`
              : 'annotation accepted',
        },
        annotation.verdict === 'error'
          ? `⚑ ${label(annotation.kind)} (${annotation.severity})${annotation.path ? ` at ${annotation.path}` : ''}`
          : '✓ acceptable rehearsal',
        annotation.note ? h('span', { class: 'note' }, ` — ${annotation.note}`) : undefined,
        h('span', { class: 'author' }, ` · ${annotation.author}`),
        snapshot.readOnly
          ? undefined
          : h(
              'vscode-button',
              {
                secondary: true,
                class: 'delete',
                title: 'Delete annotation',
                'aria-label': 'Delete annotation',
                onclick: () =>
                  void send(trajectoryProtocol.delete, { annotationId: annotation.id }, 'Deleted.'),
              },
              '✕',
            ),
      ),
    ),
  );
}

/** A drop-down whose value is one of its options' values. */
function select<Value extends string>(
  name: string,
  options: { value: Value; label: string; description?: string }[],
  selected: Value,
): HTMLElement & { value: Value } {
  const element = h(
    'vscode-single-select',
    { name, class: name, 'aria-label': name },
    ...options.map((option) =>
      h(
        'vscode-option',
        {
          value: option.value,
          description: option.description,
          selected: option.value === selected,
        },
        option.label,
      ),
    ),
  );
  return element as typeof element & { value: Value };
}

function annotateForm(snapshot: TrajectorySnapshot, call: TrajectoryCall): FormHandle {
  const kind = select<AnnotationKind>(
    'kind',
    snapshot.kinds.map((option) => ({
      value: option.code,
      label: option.label,
      description: option.description,
    })),
    call.suggestedKind,
  );
  const severity = select<AnnotationSeverity>(
    'severity',
    snapshot.severities.map((value) => ({ value, label: value })),
    'major',
  );
  const path = select(
    'path',
    [
      { value: '', label: 'the whole call' },
      ...call.diff.map((difference) => ({
        value: difference.path,
        label: difference.path,
        description: DIFF_WORDS[difference.kind],
      })),
    ],
    '',
  );
  const note = h('vscode-textarea', {
    class: 'note',
    placeholder: 'Note (optional): what was wrong, what the tool really does',
    rows: 2,
    resize: 'vertical',
    'aria-label': 'note',
  }) as HTMLElement & { value: string };
  const disabled = snapshot.readOnly !== undefined;
  const mark = h(
    'vscode-button',
    {
      class: 'mark',
      disabled,
      onclick: () =>
        void send(
          trajectoryProtocol.mark,
          {
            callId: call.callId,
            kind: kind.value,
            severity: severity.value,
            ...(path.value ? { path: path.value } : {}),
            ...(note.value.trim() ? { note: note.value.trim() } : {}),
          },
          `Marked ${call.callId}.`,
        ),
    },
    'Mark error',
  );
  const accept = h(
    'vscode-button',
    {
      class: 'accept',
      secondary: true,
      disabled,
      onclick: () =>
        void send(
          trajectoryProtocol.accept,
          { callId: call.callId, ...(note.value.trim() ? { note: note.value.trim() } : {}) },
          `Accepted the rehearsal of ${call.callId}.`,
        ),
    },
    'Rehearsal acceptable',
  );
  const element = h(
    'div',
    { class: 'annotate', role: 'group', 'aria-label': `annotate ${call.callId}` },
    h('label', {}, 'Kind', kind),
    h('label', {}, 'Severity', severity),
    h('label', {}, 'Path', path),
    h('label', { class: 'grow' }, 'Note', note),
    h('div', { class: 'actions' }, mark, accept),
  );
  const container = h(
    'details',
    { class: 'annotate-open' },
    h('summary', {}, snapshot.readOnly ? 'Annotate (view only)' : 'Mark error or accept…'),
    element,
  ) as HTMLDetailsElement;
  return {
    container,
    preset: (presetPath, presetKind) => {
      container.open = true;
      path.value = presetPath;
      kind.value = presetKind;
      element.scrollIntoView({ block: 'nearest' });
      note.focus();
    },
  };
}

let scrollTimer: number | undefined;
window.addEventListener('scroll', () => {
  clearTimeout(scrollTimer);
  scrollTimer = window.setTimeout(() => {
    if (current)
      host.state = {
        file: current.file,
        episodeId: current.episode.episodeId,
        scrollY: window.scrollY,
      };
  }, 200);
});

host.ready();
