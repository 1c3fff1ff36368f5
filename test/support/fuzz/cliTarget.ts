import * as assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { runCli } from '../../../src/cli/program';
import { sampleImagineRun, sampleShadowRun } from '../../builders/samples';
import { REPO } from '../servers';
import type { FuzzTarget } from './targets';
import { TERMINAL_CONTROL } from './terminalTextTarget';

/**
 * The command line as a fuzz target: generated `rehearse` argument vectors (every command and
 * option, with hostile numbers, paths, words and JSON, unknown options, repeated and missing
 * values) run in-process in a scratch workspace. The promise: each ends in time with exit 0, 1 or
 * 2, and nothing it prints is an "internal error" or "unexpected error" (an uncoded exception).
 * Left out: `serve` (it runs until interrupted; its requests are the serve target's), `gpu install`
 * (it downloads), the default policy (loading and playing it takes seconds per input), `train`
 * without `--dry-run` or `--backend envace` (it would start a training run), and `import bfcl` and
 * `import tau2` (they start the studio's Python per input; their bad input is bfcl.test.ts's and
 * tau2.test.ts's).
 */

/** Value kinds an option takes. */
type Kind = 'flag' | 'number' | 'path' | 'word' | 'policy' | 'json' | 'list';

const COMMANDS: { argv: string[]; positional: number; options: Record<string, Kind> }[] = [
  { argv: ['report'], positional: 2, options: { '--calls': 'flag', '--json': 'flag' } },
  {
    argv: ['diff'],
    positional: 1,
    options: { '--call': 'word', '--worst': 'flag', '--json': 'flag' },
  },
  { argv: ['import', 'chat'], positional: 1, options: { '--out': 'path' } },
  { argv: ['import', 'envace'], positional: 1, options: { '--out': 'path' } },
  {
    argv: ['generate'],
    positional: 1,
    options: { '--out': 'path', '--count': 'number', '--start': 'number', '--split': 'word' },
  },
  {
    argv: ['verify'],
    positional: 2,
    options: {
      '--workspace': 'path',
      '--judge': 'word',
      '--judge-model': 'word',
      '--verbose': 'flag',
      '--json': 'flag',
    },
  },
  {
    argv: ['run'],
    positional: 2,
    options: {
      '--policy': 'policy',
      '--model': 'word',
      '--device': 'word',
      '--threads': 'number',
      '--mode': 'word',
      '--audit': 'flag',
      '--episodes': 'number',
      '--out': 'path',
      '--budget': 'number',
      '--order': 'word',
      '--rehearsal-temperature': 'number',
      '--samples': 'number',
      '--temperature': 'number',
      '--seed': 'number',
      '--on-parse-error': 'word',
      '--reward': 'word',
      '--judge': 'word',
      '--judge-model': 'word',
      '--parse': 'word',
      '--no-progress': 'flag',
      '--calls': 'flag',
      '--json': 'flag',
      '--verbose': 'flag',
    },
  },
  {
    argv: ['replay'],
    positional: 1,
    options: {
      '--policy': 'policy',
      '--device': 'word',
      '--threads': 'number',
      '--out': 'path',
      '--parse': 'word',
      '--no-progress': 'flag',
      '--json': 'flag',
    },
  },
  {
    argv: ['rollout'],
    positional: 2,
    options: {
      '--policy': 'policy',
      '--out': 'path',
      '--episodes': 'number',
      '--temperature': 'number',
      '--seed': 'number',
      '--group': 'word',
      '--runs': 'path',
      '--audit': 'flag',
      '--real': 'flag',
      '--reward': 'word',
      '--judge': 'word',
      '--judge-model': 'word',
      '--act-rows': 'word',
    },
  },
  {
    argv: ['export'],
    positional: 2,
    options: {
      '--out': 'path',
      '--source': 'word',
      '--only-successful': 'flag',
      '--roles': 'list',
      '--no-actual-rehearsals': 'flag',
      '--policy-rehearsals': 'flag',
      '--tasks': 'path',
      '--rehearse-prompt': 'json',
      '--group': 'word',
      '--act-rows': 'word',
      '--format': 'word',
      '--runs': 'list',
      '--tools': 'list',
      '--only-mismatches': 'flag',
      '--split-by-task': 'number',
      '--seed': 'number',
      '--json': 'flag',
      '--no-annotations': 'flag',
      '--identifier-slots': 'flag',
    },
  },
  {
    argv: ['compare'],
    positional: 1,
    options: {
      '--policy': 'policy',
      '--device': 'word',
      '--out': 'path',
      '--no-progress': 'flag',
      '--only-marked': 'flag',
      '--json': 'flag',
    },
  },
  {
    argv: ['annotate'],
    positional: 1,
    options: {
      '--mismatches': 'flag',
      '--severity': 'word',
      '--tools': 'list',
      '--author': 'word',
      '--json': 'flag',
    },
  },
  {
    argv: ['train', '--dry-run'],
    positional: 0,
    options: { '--config': 'path', '--backend': 'word', '--no-progress': 'flag', '--json': 'flag' },
  },
  {
    argv: ['train', '--backend', 'envace'],
    positional: 0,
    options: { '--config': 'path', '--json': 'flag' },
  },
  { argv: ['gpu', 'check'], positional: 0, options: {} },
];

const NUMBERS = [
  '0',
  '1',
  '2',
  '-1',
  '3.5',
  '1e999',
  '-0',
  'NaN',
  'Infinity',
  '',
  ' 2',
  '0x10',
  '1_000',
  '99999999999999999999',
  '16',
  '17',
  '10001',
  '64',
  '65',
  'abc',
  '0.5',
  '1.5',
];
const WORDS = [
  'shadow',
  'imagine',
  'private',
  'parallel',
  'sequential',
  'end',
  'feedback',
  'retail',
  'bank',
  'train',
  'test',
  'validation',
  'turn',
  'episode',
  'rows',
  'envace',
  'studio',
  'demonstration',
  'rollout',
  'minor',
  'critical',
  'local',
  'torchrun',
  'cpu',
  'cuda',
  'webgpu',
  'auto',
  'e1.t2.c1',
  'e9.t9.c9',
  '../x',
  '',
  ' ',
  '\u0000',
  '\u001b]0;title\u0007\u001b[2J\u009b31m\u202e',
  'ü',
  'x'.repeat(300),
  '-',
  '--',
];
const JSONS = [
  '{}',
  '{"includeTools": false}',
  '{"profile": "compact"}',
  '{"profile": "nope"}',
  '{"maxHistoryBytes": -1}',
  '{"maxHistoryBytes": 1e999}',
  '[]',
  'null',
  '{',
  '"x"',
  '{"__proto__": {"x": 1}}',
];
const LISTS = [
  'act,rehearse',
  'act',
  'rehearse',
  'nope',
  ',',
  '',
  'get_order_details,find_user_id_by_email',
  '20261129-120000-shadow-sample',
];
const POLICIES = [
  'reference',
  'missing-model',
  'ws/trace.jsonl',
  'ws',
  'http://127.0.0.1:9/v1',
  'ftp://x',
  '',
  'https://',
  'ws/bad-model',
];

/** Paths inside the scratch workspace (relative to it), and a few outside that only get read. */
const PATHS = [
  'tasks',
  'tasks/retail-0000.task.json',
  'tasks/broken.task.json',
  'bad-task.json',
  '.rehearsal/runs',
  `.rehearsal/runs/${'20261129-120000-shadow-sample'}`,
  `.rehearsal/runs/20261129-120000-shadow-sample/trace.jsonl`,
  'torn/trace.jsonl',
  'empty.jsonl',
  'chat.jsonl',
  'envace.json',
  'sft.run.json',
  'bad.run.json',
  'missing',
  'out',
  'out/rows.jsonl',
  'tasks/retail-0000.task.json/x',
  '.',
  '..',
  '',
  '/dev/null',
  '/dev/zero',
  '/proc/self/status',
  'bom.task.json',
  'link-to-dev-zero',
];

const optionValue = (kind: Kind): fc.Arbitrary<string[]> => {
  switch (kind) {
    case 'flag':
      return fc.constant([]);
    case 'number':
      return fc.constantFrom(...NUMBERS).map((v) => [v]);
    case 'path':
      return fc.constantFrom(...PATHS).map((v) => [v]);
    case 'word':
      return fc.constantFrom(...WORDS).map((v) => [v]);
    case 'json':
      return fc.constantFrom(...JSONS).map((v) => [v]);
    case 'list':
      return fc.constantFrom(...LISTS).map((v) => [v]);
    case 'policy':
      return fc.constantFrom(...POLICIES).map((v) => [v]);
  }
};

/** One argument vector: a command, its positionals, some of its options (values sometimes missing), junk. */
export const cliArgv: fc.Arbitrary<string[]> = fc.constantFrom(...COMMANDS).chain((command) =>
  fc
    .tuple(
      fc.array(fc.constantFrom(...PATHS), {
        minLength: Math.min(1, command.positional),
        maxLength: command.positional,
      }),
      Object.keys(command.options).length === 0
        ? fc.constant([] as string[][])
        : fc.array(
            fc
              .constantFrom(...Object.entries(command.options))
              .chain(([name, kind]) =>
                fc
                  .tuple(fc.constant(name), optionValue(kind), fc.integer({ min: 0, max: 9 }))
                  .map(([n, v, drop]) => (drop === 0 ? [n] : [n, ...v])),
              ),
            { maxLength: 5 },
          ),
      fc.oneof(
        { weight: 5, arbitrary: fc.constant([] as string[]) },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom(
              '--unknown',
              '-x',
              '--json=1',
              '--',
              '-',
              '--help',
              '--no-color',
              '--policy',
              'extra',
            )
            .map((j) => [j]),
        },
      ),
      fc.boolean(),
    )
    .map(([positional, options, junk, policyFirst]) => {
      // `run` with no policy given would load the default policy: the reference policy unless one is named.
      const named = options.some((o) => o[0] === '--policy');
      const policy =
        command.argv[0] === 'run' || command.argv[0] === 'replay' || command.argv[0] === 'rollout'
          ? named
            ? []
            : ['--policy', 'reference']
          : [];
      const args = [...command.argv, ...positional, ...options.flat(), ...junk];
      return policyFirst
        ? [...command.argv, ...policy, ...args.slice(command.argv.length)]
        : [...args, ...policy];
    }),
);

/** Builds the scratch workspace the argument vectors name. */
export async function cliWorkspace(root: string): Promise<void> {
  const at = (p: string) => path.join(root, p);
  await fs.mkdir(at('tasks'), { recursive: true });
  await fs.copyFile(
    path.join(REPO, 'examples', 'tasks', 'retail-0000.task.json'),
    at('tasks/retail-0000.task.json'),
  );
  await fs.writeFile(at('tasks/broken.task.json'), '{"version": 1, "id": ');
  await fs.writeFile(at('bad-task.json'), JSON.stringify({ version: 1, id: 'x', turns: [] }));
  await fs.writeFile(
    at('bom.task.json'),
    '\ufeff' +
      (await fs.readFile(path.join(REPO, 'examples', 'tasks', 'retail-0004.task.json'), 'utf8')),
  );
  await sampleShadowRun().write(at('.rehearsal/runs/20261129-120000-shadow-sample/trace.jsonl'));
  await sampleImagineRun().write(at('.rehearsal/runs/20261129-113000-imagine-sample/trace.jsonl'));
  const text = sampleShadowRun().text();
  await fs.mkdir(at('torn'), { recursive: true });
  await fs.writeFile(at('torn/trace.jsonl'), text.slice(0, Math.floor(text.length / 2)));
  await fs.writeFile(at('empty.jsonl'), '');
  await fs.copyFile(
    path.join(REPO, 'test', 'fixtures', 'import', 'chat-sample.jsonl'),
    at('chat.jsonl'),
  );
  await fs.copyFile(
    path.join(REPO, 'test', 'fixtures', 'import', 'envace-sample.json'),
    at('envace.json'),
  );
  await fs.writeFile(
    at('sft.run.json'),
    JSON.stringify({
      objective: 'sft',
      base: path.join(REPO, 'models', 'default'),
      data: { train: ['out/rows.jsonl'] },
      hyperparameters: { train: { steps: 1 } },
    }),
  );
  await fs.writeFile(at('bad.run.json'), JSON.stringify({ objective: 'ppo', base: 7, a: 1 }));
  await fs.mkdir(at('bad-model'), { recursive: true });
  await fs.writeFile(at('bad-model/config.json'), '{"num_hidden_layers": 1e9}');
  if (!existsSync(at('link-to-dev-zero'))) await fs.symlink('/dev/zero', at('link-to-dev-zero'));
  await fs.mkdir(at('ws'), { recursive: true });
  await fs.writeFile(at('ws/trace.jsonl'), text);
}

/** Most milliseconds one command may take before the input counts as a hang. */
const COMMAND_LIMIT_MS = 60_000;

const UNCODED = /internal error|unexpected error/i;

/** The `rehearse` CLI target (see the file's comment). */
export const cliTarget: FuzzTarget = {
  name: 'CLI arguments (every command, in-process)',
  startsProcesses: true,
  share: 0.1,
  property(scratch: string) {
    const root = path.join(scratch, 'cli');
    let ready: Promise<void> | undefined;
    return fc.asyncProperty(cliArgv, async (argv) => {
      ready ??= fs.rm(root, { recursive: true, force: true }).then(() => cliWorkspace(root));
      await ready;
      const out: string[] = [];
      const err: string[] = [];
      const cwd = process.cwd();
      process.chdir(root);
      let timer: NodeJS.Timeout | undefined;
      try {
        const code = await Promise.race([
          runCli(argv, { out: (s) => out.push(s), err: (s) => err.push(s), color: false }),
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () =>
                reject(
                  new Error(
                    `rehearse ${JSON.stringify(argv)} did not end within ${COMMAND_LIMIT_MS} ms`,
                  ),
                ),
              COMMAND_LIMIT_MS,
            );
          }),
        ]);
        assert.ok([0, 1, 2].includes(code), `exit ${code}`);
        const printed = [...err, ...out].join('\n');
        assert.ok(
          !UNCODED.test(printed),
          `rehearse ${JSON.stringify(argv)} printed an uncoded error:\n${printed.slice(0, 2000)}`,
        );
        if (code !== 0) assert.ok(printed.trim() !== '', `exit ${code} without saying why`);
        // Hostile words, paths and JSON in the arguments are echoed escaped, never raw.
        assert.doesNotMatch(printed, TERMINAL_CONTROL, `rehearse ${JSON.stringify(argv)}`);
      } finally {
        clearTimeout(timer);
        process.chdir(cwd);
      }
    });
  },
};
