import type { RunProgress } from './runner';
import type { TraceEvent } from '../trace/format/schema';

/**
 * What a host shows about a run in progress (a status bar item, a progress notification): the
 * policy, its device, its generation speed and how far the run is. Fed the run's events and
 * progress reports; knows nothing of any editor.
 */
export class RunStatus {
  private completionTokens = 0;
  private generationMs = 0;
  private lastProgress: RunProgress | undefined;
  private callsSeen = 0;

  constructor(
    readonly policy: string,
    readonly device?: string,
    readonly what = 'episodes',
  ) {}

  /** Counts the tokens and time of every generation (acts and rehearsals). */
  observe(event: TraceEvent): void {
    if (event.type === 'turn' || event.type === 'call.rehearsal') {
      if (event.tokens && event.latencyMs) {
        this.completionTokens += event.tokens.completion;
        this.generationMs += event.latencyMs;
      }
    }
    if (event.type === 'call.actual') this.callsSeen++;
  }

  /** Takes the runner's latest progress. */
  progress(p: RunProgress): void {
    this.lastProgress = p;
  }

  /** Completion tokens per second of generation time; undefined until something was generated. */
  get tokensPerSecond(): number | undefined {
    return this.completionTokens > 0 && this.generationMs > 0
      ? (1000 * this.completionTokens) / this.generationMs
      : undefined;
  }

  /** Episodes finished and planned, once known. */
  get counts(): { done: number; total: number } | undefined {
    return this.lastProgress
      ? { done: this.lastProgress.done, total: this.lastProgress.total }
      : undefined;
  }

  /** The parts of a one-line summary: `reference`, `cpu`, `41.2 tok/s`, `1/3 episodes`. */
  parts(): string[] {
    const parts = [this.policy];
    if (this.device) parts.push(this.device);
    const speed = this.tokensPerSecond;
    parts.push(speed === undefined ? '– tok/s' : `${speed.toFixed(1)} tok/s`);
    const c = this.counts;
    parts.push(c ? `${c.done}/${c.total} ${this.what}` : `starting`);
    const inFlight = this.lastProgress?.inFlight;
    if (inFlight !== undefined && inFlight > 1) parts.push(`${inFlight} running`);
    return parts;
  }

  /** A longer description, one fact per line, for tooltips. */
  details(): string {
    const p = this.lastProgress;
    const lines = [`policy: ${this.policy}${this.device ? ` on ${this.device}` : ''}`];
    const speed = this.tokensPerSecond;
    lines.push(
      speed === undefined
        ? 'no tokens generated yet'
        : `${speed.toFixed(1)} tokens/s (${this.completionTokens} tokens generated)`,
    );
    if (p)
      lines.push(
        `${p.done} of ${p.total} ${this.what} done${p.inFlight ? ` · ${p.inFlight} in flight` : ''}${p.taskId ? ` · task ${p.taskId}` : ''}`,
      );
    if (p?.episode)
      lines.push(`${p.episode.episodeId}: turn ${p.episode.turns} · ${p.episode.calls} calls`);
    lines.push(`${this.callsSeen} tool call${this.callsSeen === 1 ? '' : 's'} answered`);
    return lines.join('\n');
  }
}
