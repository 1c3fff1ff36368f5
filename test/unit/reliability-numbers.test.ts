// Numbers from outside (issue 30, item 2): one reader with each number's documented range, and one
// timer helper that never lets Node fire a delay it cannot hold at once.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs, readFileSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { StudioError } from '../../src/core/base/errors';
import { describeRange, readNumber } from '../../src/core/base/numbers';
import { OUTSIDE_NUMBERS } from '../../src/core/base/outsideNumbers';
import {
  delayMs,
  MAX_TIMER_DELAY_MS,
  safeInterval,
  safeTimeout,
  timerDelay,
} from '../../src/core/base/timers';
import type { PolicyHostClient } from '../../src/core/policy/hostClient';
import type { GenerateParams } from '../../src/core/policy/hostProtocol';
import { readModelFolder } from '../../src/core/policy/onnx/modelFolder';
import { OpenAICompatibleServer } from '../../src/core/policy/openaiServer';
import {
  concurrencyFromSettings,
  runDefaultsFromSettings,
  threadsFromSettings,
} from '../../src/core/runner/editorSettings';
import { loadTaskFile } from '../../src/core/tasks/format/loader';
import { parseRunSpec } from '../../src/core/training/launch/runSpec';
import { rehearse } from '../support/cli';
import { fromRoot } from '../support/paths';
import { useTempDir } from '../support/tempDir';

/** Collects the process warnings emitted while `fn` runs (and a tick after). */
async function warningsDuring(fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const listen = (w: Error) => seen.push(`${w.name}: ${w.message}`);
  process.on('warning', listen);
  try {
    await fn();
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', listen);
  }
  return seen;
}

/** Throws when `fn` does not throw a StudioError with `code` whose message matches `message`. */
function throwsCoded(fn: () => unknown, code: string, message: RegExp): void {
  assert.throws(
    fn,
    (e: unknown) => e instanceof StudioError && e.code === code && message.test(e.message),
  );
}

describe('numbers from outside: one reader, one timer helper', () => {
  const tmp = useTempDir('rehearsal-numbers-');

  describe('the timer helper', () => {
    it('given 3e9, Infinity, NaN or -1 ms never fires at once, and Node never warns of an overflow', async () => {
      let fired = 0;
      const warnings = await warningsDuring(async () => {
        const timers = [safeTimeout(() => fired++, 3e9), safeTimeout(() => fired++, Infinity)];
        timers.push(safeInterval(() => fired++, 3e9));
        for (const bad of [Number.NaN, -1])
          assert.throws(() => safeTimeout(() => fired++, bad), RangeError);
        assert.throws(() => safeInterval(() => fired++, Number.NaN), RangeError);
        await assert.rejects(delayMs(-1), RangeError);
        await delayMs(50);
        for (const t of timers) clearTimeout(t);
      });
      assert.equal(fired, 0, 'a timer fired at once');
      assert.deepEqual(
        warnings.filter((w) => /TimeoutOverflowWarning/.test(w)),
        [],
      );
    });

    it('keeps a delay Node can hold as it is', async () => {
      const started = Date.now();
      await delayMs(20);
      assert.ok(Date.now() - started >= 15);
      assert.equal(MAX_TIMER_DELAY_MS, 2 ** 31 - 1);
      assert.equal(timerDelay(3e9), MAX_TIMER_DELAY_MS);
      assert.equal(timerDelay(1500), 1500);
    });

    it('is the only place src/ sets a timer (eslint.config.mjs forbids raw ones too)', () => {
      const raw: string[] = [];
      const walk = (dir: string) => {
        for (const e of readdirSync(dir, { withFileTypes: true })) {
          const file = path.join(dir, e.name);
          if (e.isDirectory()) walk(file);
          else if (file.endsWith('.ts') && !file.endsWith(path.join('base', 'timers.ts'))) {
            const code = readFileSync(file, 'utf8')
              .replace(/\/\*[\s\S]*?\*\//g, '')
              .replace(/\/\/.*$/gm, '');
            if (/(?<![\w.])set(Timeout|Interval)\s*\(/.test(code)) raw.push(file);
          }
        }
      };
      walk(fromRoot('src'));
      assert.deepEqual(raw, []);
    });
  });

  describe('the reader', () => {
    const spec = OUTSIDE_NUMBERS.taskEpisodeTimeoutMs;

    it('takes a number within the range, and names the field, the range and the value otherwise', () => {
      assert.deepEqual(readNumber(600_000, spec), { ok: true, value: 600_000 });
      const read = readNumber(3_000_000_000, spec);
      assert.ok(!read.ok);
      assert.equal(read.error.code, 'TASK_INVALID');
      assert.equal(
        read.error.message,
        '$.limits.episodeTimeoutMs must be a whole number from 1 to 86,400,000 (ms, 24 hours), not 3000000000',
      );
      for (const bad of [0, 1.5, -1, Number.NaN, Infinity, '600000', null, [], {}, true])
        assert.equal(readNumber(bad, spec).ok, false, String(bad));
    });

    it('reads text only when asked (flags), and only decimal text', () => {
      const seed = OUTSIDE_NUMBERS.flagSeed;
      assert.deepEqual(readNumber(' 42 ', seed, { text: true }), { ok: true, value: 42 });
      for (const bad of ['0x10', '0b1', '', ' ', 'Infinity', '1e400', '-1', '4294967296'])
        assert.equal(readNumber(bad, seed, { text: true }).ok, false, bad);
      assert.equal(readNumber('42', seed).ok, false);
    });
  });

  describe('each source', () => {
    it('a task with "episodeTimeoutMs": 3000000000 is TASK_INVALID naming the field and range, and nothing runs', async () => {
      const task = JSON.parse(
        readFileSync(fromRoot('examples', 'tasks', 'bank-0001.task.json'), 'utf8'),
      ) as Record<string, unknown>;
      task['limits'] = { episodeTimeoutMs: 3_000_000_000 };
      const file = path.join(tmp(), 'long.task.json');
      await fs.writeFile(file, JSON.stringify(task));
      await assert.rejects(
        loadTaskFile(file),
        (e: unknown) =>
          e instanceof StudioError &&
          e.code === 'TASK_INVALID' &&
          e.details?.['path'] === '$.limits.episodeTimeoutMs',
      );
      const runs = path.join(tmp(), 'runs');
      let r: Awaited<ReturnType<typeof rehearse>> | undefined;
      const warnings = await warningsDuring(async () => {
        r = await rehearse('run', file, '--policy', 'reference', '--out', runs, '--no-progress');
      });
      assert.equal(r!.code, 1, r!.out);
      assert.match(
        r!.err,
        /long\.task\.json: \$\.limits\.episodeTimeoutMs must be a whole number from 1 to 86,400,000 \(ms, 24 hours\), not 3000000000\. Fix the task file/,
      );
      assert.doesNotMatch(r!.out, /EPISODE_TIMEOUT/);
      assert.ok(!existsSync(runs), 'a run was recorded');
      assert.deepEqual(warnings, []);
    });

    it("a task's other numbers: limits, seed, check weights and counts", async () => {
      const base = JSON.parse(
        readFileSync(fromRoot('examples', 'tasks', 'bank-0001.task.json'), 'utf8'),
      ) as Record<string, unknown>;
      const cases: [(t: Record<string, unknown>) => void, RegExp][] = [
        [(t) => (t['limits'] = { callTimeoutMs: 1e10 }), /\$\.limits\.callTimeoutMs must be/],
        [(t) => (t['limits'] = { maxTurns: 1e9 }), /\$\.limits\.maxTurns must be .* 10,000/],
        [(t) => (t['seed'] = 2 ** 40), /\$\.seed must be a whole number from 0 to 4,294,967,295/],
        [
          (t) => ((t['checks'] as Record<string, unknown>[])[0]['weight'] = 1e300),
          /\$\.checks\[0\]\.weight must be a number from 0 to 1,000,000, not 1e\+300/,
        ],
      ];
      for (const [edit, message] of cases) {
        const task = structuredClone(base);
        edit(task);
        const file = path.join(tmp(), 'edited.task.json');
        await fs.writeFile(file, JSON.stringify(task));
        await assert.rejects(
          loadTaskFile(file),
          (e: unknown) =>
            e instanceof StudioError && e.code === 'TASK_INVALID' && message.test(e.message),
        );
      }
    });

    it('a run file: RUN_SPEC_INVALID naming every number out of range, once each', () => {
      const spec = {
        objective: 'grpo',
        base: 'default',
        seed: 2 ** 33,
        hardware: { processes: 1e9, master_port: 1e6 },
        envace: { lr: 5 },
      };
      throwsCoded(
        () => parseRunSpec(JSON.stringify(spec), path.join(tmp(), 'run.json')),
        'RUN_SPEC_INVALID',
        /\$\.seed: must be a whole number from 0 to 4,294,967,295, not 8589934592; \$\.hardware\.processes: must be a whole number from 1 to 1,024, not 1000000000; \$\.hardware\.master_port: must be .* 65,535, not 1000000; and 1 more\./,
      );
    });

    it('command-line flags: USAGE (exit 2) with the range, for text Number() would have taken', async () => {
      const task = fromRoot('examples', 'tasks', 'bank-0001.task.json');
      const cases: [string[], RegExp][] = [
        [
          ['run', task, '--seed', '1e20'],
          /--seed must be a whole number from 0 to 4,294,967,295, not "1e20"/,
        ],
        [
          ['run', task, '--temperature', '1e400'],
          /--temperature must be a number from 0 to 2, not "1e400"/,
        ],
        [
          ['run', task, '--episodes', '0x10'],
          /--episodes must be a whole number from 1 to 10,000, not "0x10"/,
        ],
        [
          ['rollout', task, '--out', path.join(tmp(), 'r.jsonl'), '--batch', '1e9'],
          /--batch must be/,
        ],
        [
          ['run', task, '--max-examples', '2.5'],
          /--max-examples must be a whole number from 0 to 1,000,000, not "2.5"/,
        ],
        [
          ['rollout', task, '--out', path.join(tmp(), 'r.jsonl'), '--max-examples', '-1'],
          /--max-examples must be a whole number from 0 to 1,000,000, not "-1"/,
        ],
        [
          ['generate', 'retail', '--count', '0x10', '--out', tmp()],
          /--count must be a whole number from 1 to 10,000, not "0x10"/,
        ],
        [
          ['serve', '--port', '1e5'],
          /--port must be a whole number from 0 to 65,535 \(0 picks a free one\)/,
        ],
      ];
      for (const [argv, message] of cases) {
        const r = await rehearse(...argv);
        assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
        assert.match(r.err, message);
      }
    });

    it('editor settings: SETTING_INVALID naming the setting and its range, where a wrong value was clamped or became NaN', () => {
      const settings = (values: Record<string, unknown>) => (key: string) => values[key];
      throwsCoded(
        () => runDefaultsFromSettings(settings({ 'run.temperature': 'hot' })),
        'SETTING_INVALID',
        /^rehearsal\.run\.temperature must be a number from 0 to 2, not "hot"\. Fix it in the settings\.$/,
      );
      throwsCoded(
        () => runDefaultsFromSettings(settings({ 'run.seed': -5 })),
        'SETTING_INVALID',
        /rehearsal\.run\.seed must be/,
      );
      throwsCoded(
        () => concurrencyFromSettings(settings({ 'run.concurrency': 1000 })),
        'SETTING_INVALID',
        /rehearsal\.run\.concurrency must be a whole number from 1 to 64, not 1000/,
      );
      throwsCoded(
        () => threadsFromSettings(settings({ 'policy.threads': 1e9 })),
        'SETTING_INVALID',
        /rehearsal\.policy\.threads must be/,
      );
      assert.equal(concurrencyFromSettings(settings({ 'run.concurrency': null })), undefined);
      assert.equal(threadsFromSettings(settings({ 'policy.threads': 0 })), undefined);
      const defaults = runDefaultsFromSettings(settings({ 'run.temperature': 0.7 }));
      assert.deepEqual(defaults.sampling?.act, { temperature: 0.7, seed: 0 });
    });

    it("serve's request bodies: HTTP 400 REQUEST_INVALID with the range, before the policy is asked", async () => {
      let asked = 0;
      const host = {
        generate: () => {
          asked++;
          return Promise.reject(new Error('not asked in this test'));
        },
      } as unknown as PolicyHostClient;
      const server = new OpenAICompatibleServer(host, 'stub');
      const url = await server.listen(0);
      try {
        const cases: [Record<string, unknown>, RegExp][] = [
          [
            { max_tokens: 1e300 },
            /"max_tokens" must be a whole number from 1 to 10,000,000, not 1e\+300/,
          ],
          [{ n: 2.5 }, /"n" must be a whole number from 1 to 16, not 2.5/],
          [{ seed: 2 ** 32 }, /"seed" must be a whole number from 0 to 4,294,967,295/],
          [{ min_tokens: -1 }, /"min_tokens" must be a whole number from 0 to 10,000,000, not -1/],
          [
            { max_tokens: 8, min_tokens: 9 },
            /"min_tokens" \(9\) must not exceed "max_tokens" \(8\)/,
          ],
        ];
        for (const [fields, message] of cases) {
          const response = await fetch(`${url}/chat/completions`, {
            method: 'POST',
            body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }], ...fields }),
          });
          const body = (await response.json()) as { error: { message: string; code?: string } };
          assert.equal(response.status, 400);
          assert.equal(body.error.code, 'REQUEST_INVALID');
          assert.match(body.error.message, message);
        }
        assert.equal(asked, 0);
      } finally {
        await server.close();
      }
    });

    it('serve\'s "min_tokens" reaches the policy host as its minTokens (vLLM\'s field); absent, none is sent', async () => {
      const asked: Omit<GenerateParams, 'requestId' | 'stream'>[] = [];
      const host = {
        generate: (params: Omit<GenerateParams, 'requestId' | 'stream'>) => {
          asked.push(params);
          return Promise.resolve({
            samples: [{ text: 'x', finish: 'length', completionTokens: params.maxTokens }],
            promptTokens: 3,
            prefilled: 3,
            reused: 0,
            prefillMs: 0,
            decodeMs: 0,
            decodeSteps: params.maxTokens,
            sharedPrefix: false,
          });
        },
      } as unknown as PolicyHostClient;
      const server = new OpenAICompatibleServer(host, 'stub');
      const url = await server.listen(0);
      try {
        for (const fields of [{ max_tokens: 8, min_tokens: 8 }, { max_tokens: 8 }]) {
          const response = await fetch(`${url}/chat/completions`, {
            method: 'POST',
            body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }], ...fields }),
          });
          assert.equal(response.status, 200);
        }
        assert.deepEqual(
          asked.map((p) => [p.maxTokens, p.minTokens]),
          [
            [8, 8],
            [8, undefined],
          ],
        );
      } finally {
        await server.close();
      }
    });

    it("a model folder's token ids: MODEL_FOLDER_INCONSISTENT when outside the vocabulary", async () => {
      const dir = path.join(tmp(), 'model');
      await fs.mkdir(path.join(dir, 'onnx'), { recursive: true });
      const config = {
        num_hidden_layers: 2,
        num_attention_heads: 4,
        hidden_size: 64,
        vocab_size: 1000,
        max_position_embeddings: 512,
      };
      await fs.writeFile(path.join(dir, 'config.json'), JSON.stringify(config));
      await fs.writeFile(path.join(dir, 'tokenizer_config.json'), '{}');
      await fs.writeFile(path.join(dir, 'tokenizer.json'), '{}');
      await fs.writeFile(path.join(dir, 'onnx', 'model.onnx'), Buffer.alloc(128));
      for (const eos of [1e300, -1, 1000]) {
        await fs.writeFile(
          path.join(dir, 'generation_config.json'),
          JSON.stringify({ eos_token_id: eos }),
        );
        await assert.rejects(
          readModelFolder(dir),
          (e: unknown) =>
            e instanceof StudioError &&
            e.code === 'MODEL_FOLDER_INCONSISTENT' &&
            /eos_token_id, pad_token_id must be a whole number from 0 to 999/.test(e.message),
          String(eos),
        );
      }
      await fs.writeFile(path.join(dir, 'generation_config.json'), '{"eos_token_id": 999}');
      assert.deepEqual((await readModelFolder(dir)).eosTokenIds, [999]);
    });
  });

  it('docs/reliability.md lists every number from outside with its range and code', () => {
    const doc = readFileSync(fromRoot('docs', 'reliability.md'), 'utf8').split('\n');
    const missing: string[] = [];
    for (const spec of Object.values(OUTSIDE_NUMBERS)) {
      const row = doc.find(
        (l) =>
          l.startsWith('|') &&
          l.includes(`\`${spec.name}\``) &&
          l.includes(describeRange(spec)) &&
          l.includes(`\`${spec.code}\``),
      );
      if (!row) missing.push(`${spec.name}: ${describeRange(spec)} (${spec.code})`);
    }
    assert.deepEqual(missing, []);
  });
});
