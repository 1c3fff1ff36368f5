import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../src/cli/program';
import { runSettingsFrom } from '../../src/cli/commands/run';
import type { FidelityReport } from '../../src/core/report/fidelityReport';
import { sampleImagineRun, sampleShadowRun } from '../builders/samples';
import { rehearse } from '../support/cli';
import { assertGolden } from '../support/golden';
import { useTempDir } from '../support/tempDir';

const SHADOW = '20261129-120000-shadow-sample';
const IMAGINE = '20261129-113000-imagine-sample';

describe('rehearse CLI', () => {
  const tmp = useTempDir();
  let workspace: string;
  let shadowRun: string;
  let shadowFile: string;
  beforeEach(async () => {
    workspace = path.join(tmp(), 'ws');
    shadowRun = path.join(workspace, '.rehearsal', 'runs', SHADOW);
    shadowFile = path.join(shadowRun, 'trace.jsonl');
    await sampleShadowRun().write(shadowFile);
    await sampleImagineRun().write(
      path.join(workspace, '.rehearsal', 'runs', IMAGINE, 'trace.jsonl'),
    );
  });

  const oneLineError = (r: { code: number; out: string; errLines: string[] }, code: number) => {
    assert.equal(r.code, code, r.errLines.join('\n'));
    assert.equal(r.out, '');
    assert.equal(
      r.errLines.length,
      1,
      `expected one line on stderr, got:\n${r.errLines.join('\n')}`,
    );
    assert.match(r.errLines[0], /^rehearse: /);
    return r.errLines[0];
  };

  describe('report', () => {
    it('summarises a workspace: counts, parse errors by code, scores per tool (--json)', async () => {
      const r = await rehearse('report', workspace, '--json');
      assert.equal(r.code, 0, r.err);
      const report = JSON.parse(r.out) as FidelityReport;
      assert.deepEqual(
        report.traces.map((t) => [t.runId, t.mode, t.skipped.length]),
        [
          [SHADOW, 'shadow', 0],
          [IMAGINE, 'imagine', 0],
        ],
      );
      assert.deepEqual(
        {
          episodes: report.episodes,
          graded: report.graded,
          successes: report.successes,
          turns: report.turns,
          actParseValid: report.actParseValid,
          calls: report.calls,
          rehearsed: report.rehearsed,
          rehearsalParseValid: report.rehearsalParseValid,
          withActual: report.withActual,
        },
        {
          episodes: 4,
          graded: 4,
          successes: 2,
          turns: 12,
          actParseValid: 11,
          calls: 8,
          rehearsed: 8,
          rehearsalParseValid: 7,
          withActual: 8,
        },
      );
      assert.equal(report.meanReward, (0.5 + 1 + 0 + 1) / 4);
      assert.deepEqual(report.parseErrors, {
        act: { JSON_DECODE_ERROR: 1 },
        rehearsal: { NO_EXECUTION_RESULT_TAG_FOUND: 1 },
      });
      assert.deepEqual(report.actualErrors, { TOOL_TIMEOUT: 1 });
      assert.equal(report.overall.compared, 6);
      assert.equal(report.overall.exactMatch, 3 / 6);
      assert.deepEqual(
        report.perTool.map((t) => [
          t.tool,
          t.calls,
          t.compared,
          t.rehearsalParseErrors,
          t.exactMatch,
        ]),
        [
          ['cancel_pending_order', 1, 1, 0, 0],
          ['find_user_id_by_email', 3, 2, 0, 0.5],
          ['get_order_details', 4, 3, 1, 2 / 3],
        ],
      );
      assert.equal(report.callList, undefined);
    });

    it('prints the same report as text', async () => {
      const r = await rehearse('report', shadowRun);
      assert.equal(r.code, 0, r.err);
      const lines = r.out.split('\n');
      assert.equal(lines[0], `${SHADOW}  ${shadowFile}`);
      assert.match(
        lines[1],
        /^ {2}shadow mode · \d+ events · policy: the default policy \(models\/default\) on cpu$/,
      );
      assert.deepEqual(
        lines.slice(2, 5).map((l) => l.split(':')[0]),
        ['  task retail-test-0007', '  task retail-test-0012', '  task retail-test-0031'],
        'each task with its instruction',
      );
      assert.ok(
        lines[2].endsWith(
          ': Cancel my order #W2611340, I ordered it by mistake. My email is mia.garcia@example.com.',
        ),
        lines[2],
      );
      assert.ok(lines.includes('3 episodes · success 33.3% (1/3) · mean reward 0.50'), r.out);
      assert.ok(lines.includes('10 turns · act parse validity 90.0%'), r.out);
      assert.ok(
        lines.includes('7 calls · 7 rehearsed (parse validity 85.7%) · 7 with actual · 5 compared'),
        r.out,
      );
      assert.ok(
        lines.includes(
          'errors: act JSON_DECODE_ERROR ×1, rehearsal NO_EXECUTION_RESULT_TAG_FOUND ×1, actual TOOL_TIMEOUT ×1',
        ),
        r.out,
      );
      // Means over the 5 compared calls (key Jaccard and types over the 4 compared as JSON), by hand:
      // F1 (1 + 18/23 + 0 + 1 + 0) / 5, keys (1 + 10/16 + 0 + 1) / 4, error state 3/5.
      assert.ok(
        lines.includes(
          'fidelity: exact 0.40 · field F1 0.56 · key Jaccard 0.66 · types 1.00 · error state 0.60',
        ),
        r.out,
      );
      const row = (tool: string) => lines.find((l) => l.startsWith(tool + ' '))?.split(/\s+/);
      assert.deepEqual(row('get_order_details')?.slice(0, 4), [
        'get_order_details',
        '3',
        '2',
        '0.50',
      ]);
      assert.deepEqual(row('get_order_details')?.at(-1), '1');
      assert.deepEqual(row('find_user_id_by_email')?.slice(0, 4), [
        'find_user_id_by_email',
        '3',
        '2',
        '0.50',
      ]);
      assert.deepEqual(row('cancel_pending_order')?.slice(0, 4), [
        'cancel_pending_order',
        '1',
        '1',
        '0.00',
      ]);
      assert.doesNotMatch(r.out, /\u001b\[/, 'no colour codes when colour is off');
    });

    it('reports every complete event of a trace cut mid-write, and the torn line with its number', async () => {
      const text = sampleShadowRun().text();
      const lastStart = text.lastIndexOf('\n', text.length - 2) + 1;
      const torn = path.join(tmp(), 'crashed', 'trace.jsonl');
      await fs.mkdir(path.dirname(torn));
      await fs.writeFile(torn, text.slice(0, lastStart + 25));
      const total = text.split('\n').filter(Boolean).length;
      const r = await rehearse('report', torn);
      assert.equal(r.code, 0, r.err);
      assert.match(
        r.out,
        new RegExp(`^  shadow mode · ${total - 1} events · .* · 1 skipped line$`, 'm'),
      );
      assert.ok(r.out.includes(`    line ${total}: torn last line (incomplete write)`), r.out);
      const json = JSON.parse((await rehearse('report', '--json', torn)).out) as FidelityReport;
      assert.equal(json.traces[0].events, total - 1);
      assert.deepEqual(
        json.traces[0].skipped.map((s) => s.line),
        [total],
      );
      assert.equal(json.calls, 7, 'every call before the tear is counted');
    });

    it('--calls lists every call, least faithful first', async () => {
      const json = JSON.parse(
        (await rehearse('report', shadowRun, '--calls', '--json')).out,
      ) as FidelityReport;
      const rows = json.callList!;
      assert.equal(rows.length, 7);
      const f1 = rows.map((c) => c.fieldF1 ?? -1);
      assert.deepEqual(
        f1,
        [...f1].sort((a, b) => a - b),
      );
      assert.deepEqual(
        rows
          .slice(0, 2)
          .map((c) => [c.callId, c.outcome])
          .sort(),
        [
          ['e2.t3.c1', 'parse error NO_EXECUTION_RESULT_TAG_FOUND'],
          ['e3.t2.c1', 'tool error TOOL_TIMEOUT'],
        ],
      );
      assert.deepEqual(
        rows.slice(-2).map((c) => c.outcome),
        ['exact', 'exact'],
      );
      const text = await rehearse('report', shadowRun, '--calls');
      const table = text.out.split('\n');
      const header = table.findIndex((l) => /^call\s+tool\s+field F1\s+outcome$/.test(l));
      assert.ok(header > 0, `one trace: no run column\n${text.out}`);
      assert.deepEqual(
        table.slice(header + 2).map((l) => l.split(/\s+/)[0]),
        rows.map((c) => c.callId),
      );
      const two = (await rehearse('report', shadowRun, workspace, '--calls')).out.split('\n');
      assert.ok(
        two.some((l) => /^call\s+tool\s+field F1\s+outcome\s+run$/.test(l)),
        `several traces: a run column\n${two.join('\n')}`,
      );
    });

    it('--calls also lists calls that never got an actual response', async () => {
      const file = path.join(tmp(), 'imagine', 'trace.jsonl');
      const t = sampleImagineRun('imagine-no-audit');
      t.events.splice(
        t.events.findIndex((e) => e.type === 'call.actual'),
        2,
      ); // drop the actual and its fidelity event
      await fs.mkdir(path.dirname(file));
      await fs.writeFile(file, t.text());
      const json = JSON.parse(
        (await rehearse('report', file, '--calls', '--json')).out,
      ) as FidelityReport;
      assert.deepEqual(
        json.callList?.map((c) => [c.callId, c.outcome, c.fieldF1]),
        [['e1.t1.c1', 'not compared (no actual response)', null]],
      );
    });

    it('reads several traces given one by one', async () => {
      const r = await rehearse(
        'report',
        '--json',
        shadowFile,
        path.join(workspace, '.rehearsal', 'runs', IMAGINE),
      );
      assert.equal((JSON.parse(r.out) as FidelityReport).traces.length, 2);
    });
  });

  describe('diff', () => {
    it('shows a mismatching call (golden)', async () => {
      const r = await rehearse('diff', shadowRun, '--call', 'e1.t2.c1');
      assert.equal(r.code, 0, r.err);
      await assertGolden('diff-mismatch.txt', r.out + '\n');
    });

    it('shows a call whose rehearsal did not parse (golden)', async () => {
      const r = await rehearse('diff', shadowFile, '--call', 'e2.t3.c1');
      assert.equal(r.code, 0, r.err);
      await assertGolden('diff-parse-error.txt', r.out + '\n');
    });

    it('shows a call compared as text (golden)', async () => {
      const r = await rehearse('diff', shadowFile, '--call', 'e3.t1.c1');
      assert.equal(r.code, 0, r.err);
      await assertGolden('diff-text.txt', r.out + '\n');
    });

    it('shows an exact call as identical', async () => {
      const r = await rehearse('diff', shadowFile, '--call', 'e1.t1.c1');
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /^exact yes · field F1 1\.00/m);
      assert.match(r.out, /^identical$/m);
    });

    it('--json prints the call, both events and the comparison', async () => {
      const r = await rehearse('diff', shadowFile, '--call', 'e1.t2.c1', '--json');
      const json = JSON.parse(r.out) as {
        call: { callId: string };
        rehearsal: { type: string };
        actual: { type: string };
        comparison: { comparable: string; counts: Record<string, number> };
      };
      assert.equal(json.call.callId, 'e1.t2.c1');
      assert.equal(json.rehearsal.type, 'call.rehearsal');
      assert.equal(json.actual.type, 'call.actual');
      assert.deepEqual(json.comparison.counts, {
        added: 1,
        removed: 0,
        changed: 1,
        typeChanged: 0,
      });
    });

    it('colours its output only when colour is on', async () => {
      const capture = async (argv: string[]) => {
        const out: string[] = [];
        await runCli(argv, { out: (s) => out.push(s), err: () => undefined, color: true });
        return out.join('\n');
      };
      assert.match(await capture(['diff', shadowFile, '--call', 'e1.t2.c1']), /\u001b\[/);
      assert.doesNotMatch(
        await capture(['--no-color', 'diff', shadowFile, '--call', 'e1.t2.c1']),
        /\u001b\[/,
      );
    });
  });

  describe('errors', () => {
    it('an --out that is a file, or lies under one, is one usage line for every command that writes (import said "internal error (ENOTDIR)")', async () => {
      const file = path.join(tmp(), 'a-file');
      await fs.writeFile(file, 'x');
      const chat = path.join(
        __dirname,
        '..',
        '..',
        '..',
        'test',
        'fixtures',
        'import',
        'chat-sample.jsonl',
      );
      for (const argv of [
        ['import', 'chat', chat, '--out', file],
        ['import', 'chat', chat, '--out', path.join(file, 'sub')],
        ['generate', 'retail', '--out', file],
        ['export', shadowFile, '--out', tmp()],
        ['export', shadowFile, '--out', path.join(file, 'rows.jsonl')],
        ['rollout', 'x.task.json', '--out', tmp()],
        ['run', 'x.task.json', '--policy', 'reference', '--out', path.join(file, 'runs')],
        ['import', 'envace-rollouts', tmp(), '--out', file],
        ['import', 'bfcl', 'base', '--out', file],
        ['import', 'tau2', '--domain', 'mock', '--out', file],
      ]) {
        const line = oneLineError(await rehearse(...argv), 2);
        assert.match(
          line,
          /is a (file|folder)|cannot be (created|written): .* is a file/,
          `${argv.join(' ')}: ${line}`,
        );
      }
    });

    it('run --memory takes condensed, attempts or outcomes, and names them when refused', async () => {
      const line = oneLineError(
        await rehearse('run', 'x.task.json', '--mode', 'private', '--memory', 'plan'),
        2,
      );
      assert.match(line, /--memory must be condensed .*, attempts .* or outcomes .*, not "plan"/);
      const memoryOf = (memory?: string) =>
        runSettingsFrom({ mode: 'private', memory }).privateRehearsal?.memory;
      assert.equal(memoryOf('outcomes'), 'outcomes');
      assert.equal(memoryOf('attempts'), 'attempts');
      assert.equal(memoryOf(undefined), undefined, 'condensed, the default, is not written');
    });

    it('generate refuses counts and seeds past its bounds', async () => {
      assert.match(
        oneLineError(
          await rehearse('generate', 'retail', '--count', '99999999999999999999', '--out', tmp()),
          2,
        ),
        /--count must be a whole number from 1 to 10,000, not "99999999999999999999"/,
      );
      assert.match(
        oneLineError(await rehearse('generate', 'retail', '--start', '1e12', '--out', tmp()), 2),
        /--start must be a whole number from 0 to 2,147,483,647, not "1e12"/,
      );
    });

    it('a usage error exits 2 with one line on stderr', async () => {
      assert.match(
        oneLineError(await rehearse('report'), 2),
        /missing required argument 'trace'.*rehearse --help/,
      );
      assert.match(oneLineError(await rehearse('frobnicate'), 2), /unknown command 'frobnicate'/);
      assert.match(
        oneLineError(await rehearse('report', '--frob', shadowFile), 2),
        /unknown option '--frob'/,
      );
      assert.match(
        oneLineError(await rehearse('diff', shadowFile), 2),
        /Missing --call <id>.*rehearse report --calls/,
      );
      assert.match(
        oneLineError(await rehearse('diff', shadowFile, '--call', '../../etc/passwd'), 2),
        /Invalid call id/,
      );
      const several = oneLineError(await rehearse('diff', workspace, '--call', 'e1.t1.c1'), 2);
      assert.match(
        several,
        /holds 2 traces \(newest first\): .*Pass one of them, or its run folder\.$/,
      );
      assert.ok(
        several.indexOf(`${SHADOW}${path.sep}trace.jsonl`) <
          several.indexOf(`${IMAGINE}${path.sep}trace.jsonl`),
        `both traces named, newest first: ${several}`,
      );
    });

    it('an unknown file exits 1 with one line that says what to pass', async () => {
      assert.match(
        oneLineError(await rehearse('report', path.join(tmp(), 'nope.jsonl')), 1),
        /no such file or folder\. Pass a trace\.jsonl file/,
      );
      assert.match(
        oneLineError(await rehearse('diff', path.join(tmp(), 'nope'), '--call', 'e1.t1.c1'), 1),
        /no such file or folder/,
      );
    });

    it('an unknown call id is a bad argument: exit 2, and it says how to list the calls', async () => {
      const line = oneLineError(await rehearse('diff', shadowFile, '--call', 'e9.t1.c1'), 2);
      assert.match(line, /No call "e9\.t1\.c1"/);
      assert.ok(line.includes(`rehearse report --calls ${shadowFile}`), line);
    });

    it('help and version exit 0', async () => {
      const help = await rehearse('--help');
      assert.equal(help.code, 0);
      assert.match(help.out, /report \[options\] <trace\.\.\.>/);
      assert.match(help.out, /diff \[options\] <trace>/);
      const version = await rehearse('--version');
      assert.equal(version.code, 0);
      assert.match(version.out, /^\d+\.\d+\.\d+/);
    });
  });
});
