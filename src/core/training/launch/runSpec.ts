import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { ErrorObject } from '../../base/jsonSchema';
import { schemaCheck } from '../../base/jsonSchema';
import runSchema from '../../../../schemas/training-run.schema.json';
import trainerConfigSchema from '../../../../schemas/trainer-config.schema.json';
import { StudioError } from '../../base/errors';
import { valuesAtNumberName } from '../../base/numberPlaces';
import { readNumber } from '../../base/numbers';
import type { OutsideNumberSpec } from '../../base/numbers';
import { OUTSIDE_NUMBERS } from '../../base/outsideNumbers';
import { DEFAULT_POLICY_WORD, defaultModelFolder } from '../../base/studioRoot';
import type { PathSegment } from '../../fidelity/jsonPath';
import { formatJsonPath } from '../../fidelity/jsonPath';
import { STUDIO_FOLDER } from '../../trace/format/discover';

/** Settings of EnvACE's launcher (schemas/training-run.schema.json, `envace`). Paths are on the cluster. */
export interface EnvaceSpec {
  root?: string;
  python?: string;
  tool_dataset?: string;
  train_files?: string;
  val_files?: string;
  simulator_model?: string;
  model_sharing?: boolean;
  caller_frozen?: boolean;
  tool_return_mode?: string;
  group_size?: number;
  train_batch_size?: number;
  lr?: number;
  max_prompt_length?: number;
  max_response_length?: number;
  rollout_engine?: 'sglang' | 'vllm';
  judge?: { backend?: 'sglang' | 'openai'; urls?: string[]; model?: string };
  save_freq?: number;
  checkpoint_dir?: string;
  overrides?: string[];
}

/** Where and on what a run trains. */
export interface HardwareSpec {
  device?: string;
  processes?: number;
  nodes?: number;
  node_rank?: number;
  master_addr?: string;
  master_port?: number;
  threads?: number | null;
  python?: string;
}

/** A training run file as written (schemas/training-run.schema.json). */
export interface RunSpecFile {
  name?: string;
  objective: 'sft' | 'grpo';
  base: string;
  data?: { train?: string[]; grounding?: string[] };
  out_dir?: string;
  seed?: number;
  hyperparameters?: Record<string, Record<string, unknown>>;
  hardware?: HardwareSpec;
  envace?: EnvaceSpec;
}

/** A validated run spec with every local path made absolute. */
export interface RunSpec extends RunSpecFile {
  /** The spec file (absolute). */
  file: string;
  /** `base` as the file wrote it (the envace backend passes it to the cluster unchanged). */
  baseAsWritten: string;
  name: string;
  out_dir: string;
  data: { train: string[]; grounding: string[] };
  hardware: HardwareSpec;
}

const checkRunSpec = schemaCheck(runSchema, { allErrors: true });
const checkTrainerConfig = schemaCheck(trainerConfigSchema, { allErrors: true });

function pointerSegments(pointer: string): PathSegment[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s));
}

/** One schema error as `$.path.to.field: what` (an unknown field names its own path). */
function describeSchemaError(e: ErrorObject, prefix: PathSegment[] = []): string {
  const at = [...prefix, ...pointerSegments(e.instancePath)];
  if (e.keyword === 'additionalProperties') {
    const field = (e.params as { additionalProperty: string }).additionalProperty;
    return `${formatJsonPath([...at, field])}: unknown field (a typo? see the schema for the fields there are)`;
  }
  if (e.keyword === 'required')
    return `${formatJsonPath([...at, (e.params as { missingProperty: string }).missingProperty])}: is required`;
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'enum')
    message += `: ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  return `${formatJsonPath(at)}: ${message}`;
}

/**
 * Every number of a run file with its documented range: the `RUN_SPEC_INVALID` rows of
 * {@link OUTSIDE_NUMBERS}, found by their names (`$.hardware.threads`).
 * schemas/training-run.schema.json states the same bounds (a unit test holds it).
 */
export const RUN_FILE_NUMBERS: readonly OutsideNumberSpec[] = Object.values(OUTSIDE_NUMBERS).filter(
  (spec) => spec.code === 'RUN_SPEC_INVALID',
);

/** Every number of a run file outside its range, as `$.path: must be ...` (absent and null: not faults). */
function runNumberFaults(value: unknown): string[] {
  const faults: string[] = [];
  for (const spec of RUN_FILE_NUMBERS)
    for (const place of valuesAtNumberName(value, spec.name)) {
      if (place.value === null) continue;
      const read = readNumber(place.value, spec);
      if (!read.ok)
        faults.push(
          `${formatJsonPath(place.at)}: must be ${read.error.range}, not ${read.error.found}`,
        );
    }
  return faults;
}

/**
 * Checks a parsed run spec: its numbers against their documented ranges (core/base/numbers.ts),
 * the rest against schemas/training-run.schema.json; returns every fault as `$.path: message`,
 * empty when valid.
 */
export function runSpecFaults(value: unknown): string[] {
  const numbers = runNumberFaults(value);
  const checked = checkRunSpec(value);
  if (checked.ok) return numbers;
  // A number out of range is named once, by the reader, whose message says the range.
  const named = numbers.map((f) => f.slice(0, f.indexOf(':') + 1));
  const schema = checked.errors
    .map((e) => describeSchemaError(e))
    .filter((f) => !named.some((n) => f.startsWith(n)));
  return [...numbers, ...schema];
}

/**
 * Checks a generated trainer config against schemas/trainer-config.schema.json. A fault under a
 * pass-through section is reported at its place in the run spec (`$.hyperparameters.optim.lr`).
 */
export function trainerConfigFaults(config: unknown, passThrough: readonly string[]): string[] {
  const checked = checkTrainerConfig(config);
  if (checked.ok) return [];
  return checked.errors.map((e) => {
    const first =
      pointerSegments(e.instancePath)[0] ??
      (e.params as { additionalProperty?: string }).additionalProperty;
    const inSpec = typeof first === 'string' && passThrough.includes(first);
    return inSpec
      ? describeSchemaError(e, ['hyperparameters'])
      : `trainer config ${describeSchemaError(e)}`;
  });
}

/** Faults a run file's error names; every one is in its details. */
const FAULTS_NAMED = 3;

/**
 * The error of a run file with faults (`$.path: what`): one line, as every CLI error, naming the
 * first few and counting the rest; `details.faults` holds them all.
 */
export function invalidRunSpec(file: string, faults: string[]): StudioError {
  const more = faults.length - FAULTS_NAMED;
  const named = faults
    .slice(0, FAULTS_NAMED)
    .map((f) => f.replace(/\s*\n\s*/g, ' '))
    .join('; ');
  return new StudioError(
    'RUN_SPEC_INVALID',
    `${file} is not a valid training run: ${named}${more > 0 ? `; and ${more} more` : ''}.`,
    { faults },
  );
}

/** Parses and validates a run spec's text; paths are resolved against `file`'s folder. */
export function parseRunSpec(text: string, file: string): RunSpec {
  const absolute = path.resolve(file);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new StudioError(
      'RUN_SPEC_INVALID',
      `${file} is not valid JSON: ${(err as Error).message.replace(/\s*\n\s*/g, ' ')}.`,
    );
  }
  const faults = runSpecFaults(value);
  if (faults.length) throw invalidRunSpec(file, faults);
  const spec = value as RunSpecFile;
  const folder = path.dirname(absolute);
  const resolve = (p: string) => path.resolve(folder, p);
  const name =
    spec.name ??
    path
      .basename(absolute)
      .replace(/\.json$/i, '')
      .replace(/[^A-Za-z0-9._-]/g, '-');
  const data = {
    train: (spec.data?.train ?? []).map(resolve),
    grounding: (spec.data?.grounding ?? []).map(resolve),
  };
  if (spec.objective === 'sft' && data.train.length === 0) {
    throw invalidRunSpec(file, [
      '$.data.train: sft needs at least one rows file (rehearse export --out rows.jsonl)',
    ]);
  }
  return {
    ...spec,
    file: absolute,
    name,
    // "default" is the studio's embedded policy, wherever the studio is installed (as --policy
    // default), so that a run file works in any workspace; a folder named so is "./default".
    base: spec.base === DEFAULT_POLICY_WORD ? defaultModelFolder() : resolve(spec.base),
    baseAsWritten: spec.base,
    out_dir: spec.out_dir
      ? resolve(spec.out_dir)
      : path.join(folder, STUDIO_FOLDER, 'training', name),
    data,
    hardware: { ...spec.hardware },
  };
}

/**
 * The paths a run reads that are not there, each as `$.field "as written" (absolute path): what to
 * do`: the base model (a folder with config.json) and every rows file. Empty when all exist.
 */
export function missingRunSpecPaths(spec: RunSpec): string[] {
  const faults: string[] = [];
  const folder = path.dirname(spec.file);
  const shown = (p: string) => `"${path.relative(folder, p) || '.'}" (${p})`;
  if (!existsSync(path.join(spec.base, 'config.json')))
    faults.push(
      `$.base ${shown(spec.base)} is not a model folder (no config.json): name a model folder relative to the run file, or "default" for the studio's default policy`,
    );
  for (const [field, files] of [
    ['$.data.train', spec.data.train],
    ['$.data.grounding', spec.data.grounding],
  ] as const)
    files.forEach((file, i) => {
      if (!existsSync(file))
        faults.push(
          `${field}[${i}] ${shown(file)} does not exist: export rows there first (rehearse export <runs> --out <file>, or Export Training Rows in the editor)`,
        );
    });
  return faults;
}

/** Throws RUN_SPEC_PATHS_MISSING naming every path of the run that is not there. */
export function checkRunSpecPaths(spec: RunSpec): void {
  const faults = missingRunSpecPaths(spec);
  // The rows files that are missing (absolute), so that an editor can offer to export them.
  const rows = [...spec.data.train, ...spec.data.grounding].filter((f) => !existsSync(f));
  if (faults.length)
    throw new StudioError(
      'RUN_SPEC_PATHS_MISSING',
      `The training run ${spec.file} names ${faults.length === 1 ? 'a path that is' : `${faults.length} paths that are`} not there: ${faults.join('; ')}.`,
      { faults, rows },
    );
}

/** Reads a run spec file (`rehearse train --config <file>`). */
export async function loadRunSpec(file: string): Promise<RunSpec> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new StudioError(
      'RUN_SPEC_UNREADABLE',
      `Cannot read the training run ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
    );
  }
  return parseRunSpec(text, file);
}

/**
 * The trainer config (docs/trainer-config.md) of a run: the spec's data, base, seed and hardware,
 * and its hyperparameters passed through. Every path is absolute, so the file may live anywhere.
 */
export function trainerConfigFor(spec: RunSpec): Record<string, unknown> {
  const hyper = structuredClone(spec.hyperparameters ?? {}) as Record<
    string,
    Record<string, unknown>
  >;
  const folder = path.dirname(spec.file);
  const config: Record<string, unknown> = {
    ...(spec.seed !== undefined ? { seed: spec.seed } : {}),
    device: spec.hardware.device ?? 'auto',
    ...(spec.hardware.threads !== undefined ? { threads: spec.hardware.threads } : {}),
    out_dir: spec.out_dir,
    model: { ...hyper['model'], path: spec.base },
    data: { ...hyper['data'], train: spec.data.train },
  };
  for (const key of ['lora', 'optim', 'train', 'export', 'validation'] as const)
    if (hyper[key]) config[key] = hyper[key];
  if (hyper['trl']) {
    const trl = { ...hyper['trl'] };
    // Task files of TRL's prompts, like every path of the run file: relative to it.
    if (Array.isArray(trl['tasks']))
      trl['tasks'] = trl['tasks'].map((t) => (typeof t === 'string' ? path.resolve(folder, t) : t));
    config['trl'] = trl;
  }
  if (hyper['probe']) {
    const probe = { ...hyper['probe'] };
    // As rollouts.rows below: relative rows files keep meaning "next to the spec".
    if (Array.isArray(probe['rows']))
      probe['rows'] = probe['rows'].map((r) =>
        typeof r === 'string' ? path.resolve(folder, r) : r,
      );
    config['probe'] = probe;
  }
  if (spec.objective === 'grpo') {
    const grpo = { ...hyper['grpo'] };
    if (spec.data.grounding.length)
      grpo['grounding'] = { ...(grpo['grounding'] as object), rows: spec.data.grounding };
    config['grpo'] = grpo;
    const rollouts = { ...hyper['rollouts'] };
    // The generated config lives in the run folder: a relative rows path keeps meaning "next to the spec".
    if (typeof rollouts['rows'] === 'string')
      rollouts['rows'] = path.resolve(folder, rollouts['rows']);
    config['rollouts'] = rollouts;
  } else {
    if (hyper['grpo']) config['grpo'] = hyper['grpo'];
    if (hyper['rollouts']) config['rollouts'] = hyper['rollouts'];
  }
  const faults = trainerConfigFaults(config, Object.keys(hyper));
  if (faults.length) throw invalidRunSpec(spec.file, faults);
  return config;
}
