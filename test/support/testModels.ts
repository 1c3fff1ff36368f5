import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { REPO } from './servers';
import { trainerPython } from './trainerPython';

/** Where test models are kept between runs: gitignored, one folder per content hash. */
export const TEST_MODEL_CACHE = path.join(REPO, '.vscode-test', 'test-models');

/** The environment variable that sets the scripted test model's training seed (`npm run test:seeds`). */
export const TEST_MODEL_SEED_VARIABLE = 'REHEARSAL_TEST_MODEL_SEED';

/**
 * The training seed of the scripted test model: `$REHEARSAL_TEST_MODEL_SEED`, 0 when unset. Every
 * seed gives other weights (as another machine's floating point does); the tests must pass with any
 * weights that pass the model's self-check, and `npm run test:seeds` runs them with seeds 0 to 4.
 */
export function testModelSeed(): number {
  const text = process.env[TEST_MODEL_SEED_VARIABLE];
  if (text === undefined || text === '') return 0;
  if (!/^\d{1,9}$/.test(text))
    throw new Error(
      `${TEST_MODEL_SEED_VARIABLE}=${JSON.stringify(text)}: give a whole number from 0 to 999999999, or unset it for seed 0.`,
    );
  return Number(text);
}

/** One JSON event of the trainer's stdout. */
export interface TrainerEvent {
  event: string;
  [key: string]: unknown;
}

/** Runs `python3 -m trainer <args>` from the repository root and returns its events; a failure quotes the last error event and stderr. */
export function runTrainer(args: string[], timeoutMs = 600_000): Promise<TrainerEvent[]> {
  return new Promise((resolve, reject) => {
    execFile(
      trainerPython(),
      ['-m', 'trainer', ...args],
      {
        cwd: REPO,
        env: { ...process.env, OMP_WAIT_POLICY: 'PASSIVE' },
        maxBuffer: 256 << 20,
        timeout: timeoutMs,
      },
      (err, stdout, stderr) => {
        const events = stdout
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as TrainerEvent);
        if (err || events.at(-1)?.event !== 'done') {
          const last = events.filter((e) => e.event === 'error').at(-1);
          reject(
            new Error(
              `trainer ${args[0]} failed: ${last ? JSON.stringify(last) : err?.message}\n${stderr.split('\n').slice(-20).join('\n')}`,
            ),
          );
          return;
        }
        resolve(events);
      },
    );
  });
}

let trainerHash: Promise<string> | undefined;

/** A hash of the trainer's Python sources: a cached model is rebuilt when the code that made it changes. */
export function trainerSourceHash(): Promise<string> {
  trainerHash ??= (async () => {
    const hash = createHash('sha256');
    const walk = async (dir: string): Promise<void> => {
      const entries = (await fs.readdir(dir, { withFileTypes: true })).sort((a, b) =>
        a.name.localeCompare(b.name),
      );
      for (const e of entries) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (e.name !== '__pycache__' && e.name !== 'tests') await walk(full);
        } else if (e.name.endsWith('.py'))
          hash
            .update(path.relative(REPO, full))
            .update('\0')
            .update(await fs.readFile(full))
            .update('\0');
      }
    };
    await walk(path.join(REPO, 'trainer'));
    return hash.digest('hex');
  })();
  return trainerHash;
}

/** sha256 of a JSON value's text, short. */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);
}

const building = new Map<string, Promise<string>>();

/**
 * A model folder built once per machine: `<cache>/<name>-<hash of key and trainer sources>`. `build`
 * writes into a fresh scratch folder that is renamed into place only when complete, so an
 * interrupted build never leaves a half-written model behind.
 */
export function cachedModel(
  name: string,
  key: unknown,
  build: (dir: string) => Promise<void>,
): Promise<string> {
  const id = `${name}:${JSON.stringify(key)}`;
  let pending = building.get(id);
  if (!pending) {
    pending = (async () => {
      const dir = path.join(
        TEST_MODEL_CACHE,
        `${name}-${contentHash([key, await trainerSourceHash()])}`,
      );
      if (existsSync(path.join(dir, 'onnx', 'model.onnx'))) return dir;
      await fs.mkdir(TEST_MODEL_CACHE, { recursive: true });
      const scratch = await fs.mkdtemp(`${dir}.building-`);
      try {
        await build(scratch);
        await fs.rename(scratch, dir).catch(async (err: NodeJS.ErrnoException) => {
          // Another process finished the same model first: keep theirs.
          if (!existsSync(path.join(dir, 'onnx', 'model.onnx'))) throw err;
        });
      } finally {
        await fs.rm(scratch, { recursive: true, force: true });
      }
      return dir;
    })();
    building.set(id, pending);
    pending.catch(() => building.delete(id));
  }
  return pending;
}

/**
 * The trainer's small random-weight policy (`python3 -m trainer test-model`): real ONNX with a KV
 * cache, a real tokenizer and chat template, meaningless output (it rarely stops before max tokens).
 */
export function randomTestModel(seed = 1): Promise<string> {
  return cachedModel('random', { command: 'test-model', seed }, async (dir) => {
    await runTrainer(['test-model', '--out', dir, '--seed', String(seed)]);
  });
}

/** The shape of the policy-sized benchmark model: about the size of the default policy (~6 M parameters). */
export const POLICY_SIZED_ARCHITECTURE = {
  hidden_size: 256,
  intermediate_size: 688,
  num_hidden_layers: 6,
  num_attention_heads: 8,
  num_key_value_heads: 4,
  max_position_embeddings: 4096,
};

/** Repository text the benchmark model's tokenizer is trained on (a vocabulary of some 3,300 tokens). */
async function tokenizerCorpus(): Promise<string[]> {
  const files: string[] = [];
  for (const [dir, suffix] of [
    ['docs', '.md'],
    [path.join('examples', 'tasks'), '.task.json'],
    ['schemas', '.json'],
  ] as const) {
    for (const name of (await fs.readdir(path.join(REPO, dir))).sort())
      if (name.endsWith(suffix)) files.push(path.join(REPO, dir, name));
  }
  return files;
}

/**
 * A random-weight model of a realistic size for the default policy (hidden 256, 6 layers, a BPE
 * vocabulary trained on the repository's docs, tasks and schemas), exported to ONNX: what the
 * benchmarks time. Built once per machine (some 15 s).
 */
export async function policySizedModel(): Promise<string> {
  const corpus = await tokenizerCorpus();
  const texts = await Promise.all(corpus.map((f) => fs.readFile(f, 'utf8')));
  return cachedModel(
    'policy-sized',
    { architecture: POLICY_SIZED_ARCHITECTURE, corpus: contentHash(texts), vocab: 4096 },
    async (dir) => {
      const set = (key: string, value: unknown) => ['--set', `${key}=${JSON.stringify(value)}`];
      const tokenizer = path.join(dir, 'tokenizer-work');
      await runTrainer([
        'tokenizer',
        ...set('out_dir', tokenizer),
        ...set('tokenizer.text_files', corpus),
        ...set('tokenizer.vocab_size', 4096),
      ]);
      await runTrainer([
        'init',
        ...set('out_dir', dir),
        ...set('model.tokenizer', tokenizer),
        ...set('model.architecture', POLICY_SIZED_ARCHITECTURE),
        ...set('seed', 0),
      ]);
      await runTrainer(['export', ...set('model.path', dir)]);
      await fs.rm(tokenizer, { recursive: true, force: true });
    },
  );
}
