// Terminal text: a task whose tool names, tool results and answers carry what a terminal acts on (an
// OSC title, a clear screen, BEL, a C1 CSI, a right-to-left override), played for real with a real
// MCP server, then reported and diffed, with colour off and on: nothing reaches the output raw, and
// the escaped form is there to read. A malformed task file's error line shows its bytes escaped.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { startChatServer } from '../support/chatServer';
import * as os from 'node:os';
import * as path from 'node:path';
import { runCli } from '../../src/cli/program';
import { formatRehearsal } from '../../src/core/protocol/rehearsalParser';
import { fixtureServer } from '../support/servers';

/** What the hostile server and task carry: OSC title + BEL, clear screen, BEL, C1 CSI, RLO. */
const HOSTILE = '\u001b]0;pwned\u0007\u001b[2J\u0007\u009b31m\u202e';
/** The same, as a terminal shows it. */
const SHOWN = '\\x1b]0;pwned\\x07\\x1b[2J\\x07\\u009b31m\\u202e';
/** The same inside JSON text: JSON escapes C0 itself; C1 and the override are ours to escape. */
const SHOWN_IN_JSON = '\\u001b]0;pwned\\u0007\\u001b[2J\\u0007\\u009b31m\\u202e';
const TOOL = `look${HOSTILE}`;
/** The studio's own colours: bold, dim and their end, red, green, yellow and their end. */
const OWN_SGR = new Set(['1', '2', '22', '31', '32', '33', '39']);

/** Every control a terminal would act on, after the studio's own SGR codes are taken out. */
function assertNoRawControls(text: string, what: string): void {
  for (const m of text.matchAll(/\u001b\[([0-9;]*)m/g))
    assert.ok(OWN_SGR.has(m[1]), `${what}: an SGR code the studio does not use: ${m[0]}`);
  const raw =
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.exec(
      text.replace(/\u001b\[[0-9;]*m/g, ''),
    );
  assert.equal(raw, null, `${what}: a raw control reached the terminal:\n${JSON.stringify(text)}`);
}

/** Runs the CLI in-process with colour as given; both streams. */
async function rehearse(color: boolean, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (s) => out.push(s), err: (s) => err.push(s), color });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The hostile task: one call of the hostile tool, an answer that carries the same text. */
function hostileTask(id: string) {
  return {
    version: 1,
    id,
    seed: 1,
    turns: [{ user: `Find it ${HOSTILE}` }],
    servers: { h: fixtureServer('hostile-text.mjs') },
    checks: [{ id: 'answered', kind: 'answer', contains: ['found'] }],
    reference: {
      turns: [
        {
          calls: [
            { name: TOOL, arguments: { q: `q${HOSTILE}` } },
            { name: 'fail', arguments: {} },
          ],
          answer: `found ${HOSTILE}`,
        },
      ],
    },
  };
}

/**
 * An OpenAI-compatible endpoint that acts as the hostile task's reference does and rehearses a
 * result that carries the hostile text too, so `diff` has a rehearsal and an actual to show.
 */
async function hostileEndpoint(): Promise<{ url: string; close(): Promise<void> }> {
  return startChatServer((body) => {
    const acted = body.messages.filter((m) => m.role === 'tool').length;
    if (!body.tools) return formatRehearsal(JSON.stringify({ found: `guess${HOSTILE}` }), HOSTILE);
    if (acted > 0) return `found ${HOSTILE}`;
    return {
      content: null,
      tool_calls: [
        {
          id: 'c1',
          type: 'function',
          function: { name: TOOL, arguments: JSON.stringify({ q: `q${HOSTILE}` }) },
        },
      ],
    };
  });
}

describe('terminal text: what a terminal acts on is shown escaped', function () {
  this.timeout(120_000);
  let dir = '';
  let referenceTrace = '';
  let endpointTrace = '';
  before(async function () {
    this.timeout(300_000);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'terminal-text-'));
    await fs.mkdir(path.join(dir, 'tasks'));
    for (const id of ['hostile', 'hostile-endpoint'])
      await fs.writeFile(
        path.join(dir, 'tasks', `${id}.task.json`),
        JSON.stringify(hostileTask(id), null, 2),
      );
  });
  after(() => fs.rm(dir, { recursive: true, force: true }));

  const traceOf = (out: string) => /^trace: (.*)$/m.exec(out)?.[1] ?? assert.fail(out);

  for (const color of [false, true]) {
    const mode = color ? 'colour on' : 'NO_COLOR';
    it(`run, report and diff with the reference policy (${mode}): tool names, arguments and the task shown escaped`, async () => {
      const run = await rehearse(
        color,
        'run',
        path.join(dir, 'tasks', 'hostile.task.json'),
        '--policy',
        'reference',
        '--out',
        path.join(dir, 'runs'),
        '--no-progress',
      );
      assert.equal(run.code, 0, run.err);
      referenceTrace = traceOf(run.out);
      const report = await rehearse(color, 'report', referenceTrace, '--calls');
      const diff = await rehearse(color, 'diff', referenceTrace, '--call', 'e1.t1.c1');
      for (const [what, r] of Object.entries({ run, report, diff })) {
        assert.equal(r.code, 0, `${what}: ${r.err}`);
        assertNoRawControls(r.out + r.err, `${what} (${mode})`);
      }
      assert.ok(run.out.includes(`Find it ${SHOWN}`), run.out);
      assert.match(
        run.out,
        new RegExp(`^(\\u001b\\[[0-9;]*m)*look${escapeRe(SHOWN)}\\s+1\\s`, 'm'),
      );
      assert.ok(report.out.includes(`e1.t1.c1  look${SHOWN}`), report.out);
      assert.ok(diff.out.includes(`call e1.t1.c1  look${SHOWN}`), diff.out);
      assert.ok(diff.out.includes(`arguments {"q":"q${SHOWN_IN_JSON}"}`), diff.out);
      // The tool table pads a cell by the width it is shown with: its columns still line up.
      const rows = run.out
        .split('\n')
        .filter((l) => /^(fail|look)/.test(l.replace(/\u001b\[[0-9;]*m/g, '')));
      assert.equal(rows.length, 2, run.out);
      assert.equal(rows[0].length, rows[1].length, `columns line up:\n${rows.join('\n')}`);
      if (color) assert.match(diff.out, /\u001b\[1m/, 'the studio still colours its own text');
      else assert.doesNotMatch(diff.out, /\u001b/);
    });

    it(`run and diff with a policy that rehearses (${mode}): tool results, rehearsals and answers shown escaped`, async () => {
      const endpoint = await hostileEndpoint();
      try {
        const run = await rehearse(
          color,
          'run',
          path.join(dir, 'tasks', 'hostile-endpoint.task.json'),
          '--policy',
          endpoint.url,
          '--model',
          'hostile',
          '--out',
          path.join(dir, 'runs'),
          '--no-progress',
        );
        assert.equal(run.code, 0, run.err);
        endpointTrace = traceOf(run.out);
        const diff = await rehearse(color, 'diff', endpointTrace, '--call', 'e1.t1.c1');
        const json = await rehearse(color, 'diff', endpointTrace, '--call', 'e1.t1.c1', '--json');
        for (const [what, r] of Object.entries({ run, diff, json })) {
          assert.equal(r.code, 0, `${what}: ${r.err}`);
          assertNoRawControls(r.out + r.err, `${what} (${mode})`);
        }
        // The unified diff shows the actual result and the rehearsed one, each escaped.
        assert.ok(diff.out.includes(`q${SHOWN_IN_JSON}${SHOWN_IN_JSON}`), diff.out);
        assert.ok(diff.out.includes(`guess${SHOWN_IN_JSON}`), diff.out);
        // JSON output stays JSON with the same values: \u009b and \u202e are JSON escapes too.
        assert.ok(json.out.includes(`guess${SHOWN_IN_JSON}`), json.out);
        assert.ok(
          JSON.stringify(JSON.parse(json.out)).includes(
            JSON.stringify(`guess${HOSTILE}`).slice(1, -1),
          ),
          json.out,
        );
      } finally {
        await endpoint.close();
      }
    });
  }

  it('the rehearsal the endpoint gave, its think text and the answer are in the trace unchanged', async () => {
    assert.ok(endpointTrace, 'the endpoint run ran');
    const text = await fs.readFile(endpointTrace, 'utf8');
    assert.ok(text.includes(JSON.stringify(`found ${HOSTILE}`).slice(1, -1)), 'the answer');
    assert.ok(text.includes(JSON.stringify(`guess${HOSTILE}`).slice(1, -1)), 'the rehearsal');
  });

  it('the real executable, with NO_COLOR and with FORCE_COLOR, prints report and diff escaped', () => {
    assert.ok(referenceTrace, 'the reference run ran');
    const cli = path.join(__dirname, '..', '..', 'src', 'cli', 'main.js');
    for (const env of [{ NO_COLOR: '1' }, { FORCE_COLOR: '1' }])
      for (const argv of [
        ['report', referenceTrace, '--calls'],
        ['diff', referenceTrace, '--call', 'e1.t1.c1'],
      ]) {
        const child = spawnSync(process.execPath, [cli, ...argv], {
          encoding: 'utf8',
          env: { ...withoutColorVariables(), ...env },
        });
        assert.equal(child.status, 0, child.stderr);
        assertNoRawControls(child.stdout + child.stderr, `${argv[0]} ${JSON.stringify(env)}`);
        assert.ok(child.stdout.includes(`look${SHOWN}`), child.stdout);
        if ('FORCE_COLOR' in env) assert.match(child.stdout, /\u001b\[1m/);
        else assert.doesNotMatch(child.stdout, /\u001b/);
      }
  });

  it('a malformed task file with raw ESC bytes: the error line shows them escaped', async () => {
    const broken = path.join(dir, `broken.task.json`);
    await fs.writeFile(broken, `[${HOSTILE}]`);
    const unknownKey = path.join(dir, 'unknown-key.task.json');
    await fs.writeFile(
      unknownKey,
      JSON.stringify({ ...hostileTask('k'), [`bogus${HOSTILE}`]: 1 }, null, 2),
    );
    for (const color of [false, true])
      for (const [file, shown] of [
        [broken, `Unexpected token '\\x1b', "[\\x1b]0;pwned\\x07`],
        [unknownKey, `unknown property "bogus${SHOWN}"`],
      ]) {
        const r = await rehearse(color, 'verify', file);
        assert.equal(r.code, 1, r.err);
        assert.equal(r.err.split('\n').length, 1, r.err);
        assertNoRawControls(r.err, `the error for ${path.basename(file)}`);
        assert.ok(r.err.includes(shown), r.err);
      }
  });

  it('a usage error echoes its argument escaped', async () => {
    const r = await rehearse(false, `--colour${HOSTILE}`);
    assert.equal(r.code, 2);
    assertNoRawControls(r.err, 'the usage error');
    assert.ok(r.err.includes(`--colour${SHOWN}`), r.err);
  });
});

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function withoutColorVariables(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env['NO_COLOR'];
  delete env['FORCE_COLOR'];
  return env;
}
