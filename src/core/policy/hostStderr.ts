import type { Device } from './onnx/device';
import { PROBE_BEGIN, PROBE_END } from './hostProtocol';

/** The colour codes onnxruntime's logger wraps its lines in. */
const SGR = /\u001b\[[0-9;]*m/g;

/** How many of the host's own lines a crash message quotes. */
const TAIL_LINES = 20;

/** How many lines of one device's probe are kept (for a crash while probing, and its reason). */
const PROBE_LINES = 40;

/** Where the lines of a policy host's stderr go. */
export interface HostStderrSinks {
  /** The host's own lines (its logs, a native crash report): the output channel, `serve`'s stderr. */
  log?: (line: string) => void;
  /** What a device's probe printed, as `probe <device>: <line>`: shown only when asked (verbose). */
  probeLog?: (line: string) => void;
}

/**
 * Sorts a policy host's stderr lines: what onnxruntime and Dawn print while a device is tried
 * (between the host's {@link PROBE_BEGIN} and {@link PROBE_END}) is the probe's, kept apart and
 * shown only to `probeLog`; the rest is the host's own, logged and quoted when it dies. A host that
 * dies while probing is quoted with that probe's lines: then they are what went wrong.
 */
export class HostStderr {
  private readonly tail: string[] = [];
  private readonly probes = new Map<Device, string[]>();
  private probing: Device | undefined;

  constructor(private readonly sinks: HostStderrSinks) {}

  /** Takes the next whole line of the host's stderr. */
  line(raw: string): void {
    if (raw.startsWith(PROBE_BEGIN)) {
      this.probing = raw.slice(PROBE_BEGIN.length).trim() as Device;
      this.probes.set(this.probing, []);
      return;
    }
    if (raw.startsWith(PROBE_END)) {
      this.probing = undefined;
      return;
    }
    if (this.probing) {
      const line = raw.replace(SGR, '');
      if (!line.trim()) return;
      const lines = this.probes.get(this.probing)!;
      if (lines.length < PROBE_LINES) lines.push(line);
      this.sinks.probeLog?.(`probe ${this.probing}: ${line}`);
      return;
    }
    this.sinks.log?.(raw);
    this.tail.push(raw);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
  }

  /** What a device's probe printed, colour codes removed (empty when it printed nothing). */
  probeText(device: Device): string {
    return (this.probes.get(device) ?? []).join('\n');
  }

  /**
   * The lines a crash message quotes: the host's last own lines and `rest` (a last line without its
   * newline); while a probe was under way, that probe's lines too.
   */
  lastWords(rest = ''): string {
    const probe = this.probing ? this.probes.get(this.probing)! : [];
    return [...this.tail, ...probe, rest].filter(Boolean).join('\n');
  }
}
