/** How a training run is started. */
export type TrainingBackend = 'local' | 'torchrun' | 'envace' | 'trl';

/** The backends, in the order `--backend` lists them. */
export const TRAINING_BACKENDS: readonly TrainingBackend[] = ['local', 'torchrun', 'envace', 'trl'];

/** Everything needed to start (or, for envace, to hand over) a training run: argv, never a shell string. */
export interface LaunchPlan {
  backend: TrainingBackend;
  /** Program and arguments. */
  argv: string[];
  /** Variables set on top of the inherited environment (what differs, and so what is shown). */
  env: Record<string, string>;
  cwd: string;
  /** The run folder (checkpoints, events.jsonl). */
  outDir: string;
  /** The trainer config to write before starting (local, torchrun), at `configFile`. */
  trainerConfig?: Record<string, unknown>;
  configFile?: string;
  /** envace: a bash script with the same command, to copy to the cluster. */
  script?: string;
  /** envace: it is generated, never run here. */
  runsHere: boolean;
}

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** One argument quoted for a POSIX shell (for showing and copying a command; never executed as a string). */
export function shellQuote(arg: string): string {
  if (arg !== '' && SAFE_WORD.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The plan as one line a person can read and paste: `VAR=value ... program args`. */
export function formatCommand(plan: Pick<LaunchPlan, 'argv' | 'env'>): string {
  const vars = Object.entries(plan.env).map(([k, v]) => `${k}=${shellQuote(v)}`);
  return [...vars, ...plan.argv.map(shellQuote)].join(' ');
}
