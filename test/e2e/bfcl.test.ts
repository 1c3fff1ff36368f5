/**
 * BFCL-v4 multi-turn in the studio (issue 28): records imported from the installed bfcl-eval run on
 * the built-in `bfcl` MCP server (Python, in the studio's environment) and are graded by the `bfcl`
 * check, which gives BFCL's own verdict (trainer/tests/test_bfcl.py compares it with BFCL's
 * multi_turn_checker on every record).
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readTraceEvents } from '../../src/core/trace/format/reader';
import { ensureServerBundles } from '../support/servers';
import { rehearse } from '../support/cli';
import { useTempDir } from '../support/tempDir';
import { trainerPython } from '../support/trainerPython';

describe('BFCL-v4 multi-turn: imported, played on its backends, graded as BFCL grades it', function () {
  this.timeout(300_000);
  const dir = useTempDir('bfcl-');
  before(() => ensureServerBundles());

  it('every category imports, and each ground truth passes its own checks on the real backends', async () => {
    for (const category of ['base', 'miss_param', 'miss_func', 'long_context']) {
      const out = path.join(dir(), category);
      const imported = await rehearse('import', 'bfcl', category, '--limit', '3', '--out', out);
      assert.equal(imported.code, 0, imported.err);
      assert.match(imported.out, /^wrote 3 task\(s\) to /);
      const verified = await rehearse('verify', path.join(out, 'tasks'));
      assert.equal(verified.code, 0, verified.out + verified.err);
      assert.match(verified.out, /3 of 3 tasks pass their own checks/);
    }
  });

  it('a run that drops a ground-truth call fails the bfcl check, saying which turn and why', async () => {
    const out = path.join(dir(), 'broken');
    assert.equal((await rehearse('import', 'bfcl', 'base', '--limit', '1', '--out', out)).code, 0);
    const file = path.join(out, 'tasks', 'multi_turn_base_0.task.json');
    const task = JSON.parse(await fs.readFile(file, 'utf8')) as {
      reference: { turns: { calls: unknown[] }[] };
    };
    task.reference.turns[3].calls.pop(); // the diff of the last turn
    await fs.writeFile(file, JSON.stringify(task));
    const r = await rehearse('verify', file);
    assert.equal(r.code, 1);
    assert.match(r.out, /bfcl: After turn 3, 1 ground-truth result\(s\) are missing/);
  });

  it('miss_func holds a function back until the turn that adds it, as BFCL does', async () => {
    const out = path.join(dir(), 'miss');
    assert.equal(
      (await rehearse('import', 'bfcl', 'miss_func', '--limit', '1', '--out', out)).code,
      0,
    );
    const file = path.join(out, 'tasks', 'multi_turn_miss_func_0.task.json');
    const task = JSON.parse(await fs.readFile(file, 'utf8')) as {
      turns: { user: string; addTools?: string[] }[];
    };
    const added = task.turns.findIndex((t) => t.addTools);
    assert.deepEqual(task.turns[added], {
      user: 'I have updated some more functions you can choose from. What about now?',
      addTools: ['sort'],
    });
    const runs = path.join(dir(), 'runs');
    const r = await rehearse('run', file, '--policy', 'reference', '--out', runs, '--no-progress');
    assert.equal(r.code, 0, r.err);
    const [run] = await fs.readdir(runs);
    const { events } = await readTraceEvents(path.join(runs, run, 'trace.jsonl'));
    const start = events.find((e) => e.type === 'episode');
    assert.ok(start?.type === 'episode');
    assert.ok((start.tools ?? []).some((t) => t.name === 'ls'));
    assert.ok(
      !(start.tools ?? []).some((t) => t.name === 'sort'),
      'sort is held back at the start',
    );
    const end = events.find((e) => e.type === 'episode.end');
    assert.ok(end?.type === 'episode.end');
    assert.equal(end.success, true);
  });

  it('--backend uses a bfcl_eval folder other than the installed one, for the import, the server and the check', async () => {
    const python = trainerPython();
    const installed = execFileSync(python, [
      '-c',
      'import bfcl_eval, os; print(os.path.dirname(bfcl_eval.__file__))',
    ])
      .toString()
      .trim();
    const copy = path.join(dir(), 'checkout', 'bfcl_eval');
    await fs.cp(installed, copy, { recursive: true });
    // The copy's first record says where it came from.
    const records = path.join(copy, 'data', 'BFCL_v4_multi_turn_base.json');
    const lines = (await fs.readFile(records, 'utf8')).split('\n');
    lines[0] = lines[0].replace('"content": "Move ', '"content": "(from the checkout) Move ');
    await fs.writeFile(records, lines.join('\n'));
    const out = path.join(dir(), 'from-checkout');
    const r = await rehearse(
      'import',
      'bfcl',
      'base',
      '--limit',
      '1',
      '--backend',
      copy,
      '--out',
      out,
    );
    assert.equal(r.code, 0, r.err);
    const file = path.join(out, 'tasks', 'multi_turn_base_0.task.json');
    const task = JSON.parse(await fs.readFile(file, 'utf8')) as {
      turns: { user: string }[];
      servers: { bfcl: { args: string[] } };
      checks: { backend?: string }[];
    };
    assert.match(task.turns[0].user, /^\(from the checkout\) Move/);
    const named = path.relative(path.join(out, 'tasks'), copy);
    assert.deepEqual(task.servers.bfcl.args.slice(-2), ['--backend', named]);
    assert.equal(task.checks[0].backend, named);
    const verified = await rehearse('verify', file);
    assert.equal(verified.code, 0, verified.out + verified.err);

    const notBfcl = path.join(dir(), 'bfcl_eval');
    await fs.mkdir(notBfcl);
    const refused = await rehearse('import', 'bfcl', 'base', '--backend', notBfcl, '--out', out);
    assert.equal(refused.code, 2);
    assert.match(
      refused.err,
      /BFCL_BACKEND_INVALID: \S+bfcl_eval is not BFCL's package folder .*: it lacks __init__\.py/,
    );
  });

  it('hostile record ids: one coded line each, the good records imported, nothing written outside --out', async () => {
    // Issue 39: an id holding a newline and ../ killed the import with a traceback, importing none of
    // the good records; `multi_turn_x/../../../x` wrote outside --out once tasks/multi_turn_x existed.
    const scratch = path.join(dir(), 'hostile');
    const out = path.join(scratch, 'out');
    const outside = path.join(scratch, 'outside');
    await fs.mkdir(path.join(out, 'tasks', 'multi_turn_x'), { recursive: true });
    await fs.mkdir(outside);
    await fs.writeFile(path.join(outside, 'victim.json'), 'theirs');
    await fs.symlink(
      path.join(outside, 'victim.json'),
      path.join(out, 'tasks', 'multi_turn_base_7.task.json'),
    );
    await fs.symlink(outside, path.join(out, 'tasks', 'multi_turn_linked'));
    const data = execFileSync(trainerPython(), [
      '-c',
      'import bfcl_eval, os; print(os.path.join(os.path.dirname(bfcl_eval.__file__), "data"))',
    ])
      .toString()
      .trim();
    const firstTwo = async (file: string) =>
      (await fs.readFile(file, 'utf8'))
        .split('\n')
        .slice(0, 2)
        .map((l) => JSON.parse(l) as { id: string });
    const base = await firstTwo(path.join(data, 'BFCL_v4_multi_turn_base.json'));
    const truth = await firstTwo(
      path.join(data, 'possible_answer', 'BFCL_v4_multi_turn_base.json'),
    );
    const hostile: [string, string][] = [
      ['multi_turn_base_1\n../x', 'INVALID_ID'],
      ['multi_turn_x/../../../escaped', 'INVALID_ID'],
      ['multi_turn_linked/escaped', 'INVALID_ID'],
      [path.join(scratch, 'absolute'), 'INVALID_ID'],
      ['..', 'INVALID_ID'],
      ['multi_turn_nul\u0000', 'INVALID_ID'],
      [`multi_turn_${'m'.repeat(300)}`, 'INVALID_ID'],
      ['multi_turn_base_7', 'PATH_OUTSIDE_WORKSPACE'],
    ];
    const ids = [base[0].id, ...hostile.map(([id]) => id), base[1].id];
    const source = (i: number) => (i === ids.length - 1 ? 1 : 0);
    const records = path.join(scratch, 'records.json');
    const answers = path.join(scratch, 'answers.json');
    await fs.writeFile(
      records,
      ids.map((id, i) => JSON.stringify({ ...base[source(i)], id })).join('\n') + '\n',
    );
    await fs.writeFile(
      answers,
      ids.map((id, i) => JSON.stringify({ ...truth[source(i)], id })).join('\n') + '\n',
    );
    const before = await listTree(scratch);

    const r = await rehearse('import', 'bfcl', records, '--answers', answers, '--out', out);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^wrote 2 task\(s\) to \S+ \(8 record\(s\) skipped\)/);
    assert.equal(r.errLines.length, hostile.length, r.err);
    r.errLines.forEach((line, i) => {
      const [id, code] = hostile[i];
      assert.ok(
        line.startsWith(
          `record ${id === 'multi_turn_base_7' ? id : JSON.stringify(id).slice(0, 20)}`,
        ),
        line,
      );
      assert.match(line, new RegExp(`: skipped: ${code}: `));
    });
    assert.match(r.errLines[7], /symbolic link/);
    const after = await listTree(scratch);
    const added = [...after.keys()].filter((k) => !before.has(k));
    assert.deepEqual(added.sort(), [
      path.join('out', 'tasks', 'multi_turn_base_0.task.json'),
      path.join('out', 'tasks', 'multi_turn_base_1.task.json'),
    ]);
    for (const [entry, what] of before) assert.equal(after.get(entry), what, entry);
    const verified = await rehearse(
      'verify',
      path.join(out, 'tasks', 'multi_turn_base_0.task.json'),
    );
    assert.equal(verified.code, 0, verified.out + verified.err);
  });

  it('bad input is one clear error: not a category or file, a bad limit', async () => {
    const r = await rehearse('import', 'bfcl', 'web_search');
    assert.equal(r.code, 2);
    assert.match(r.errLines[0], /web_search is neither a records file nor a multi-turn category/);
    const bad = path.join(dir(), 'records.json');
    await fs.writeFile(bad, '{"id": "multi_turn_base_0"}\nnot json\n');
    const parsed = await rehearse('import', 'bfcl', bad, '--answers', bad, '--out', dir());
    assert.equal(parsed.code, 2);
    assert.match(parsed.err, /BFCL_RECORD_INVALID: \S+records\.json:2: not JSON/);
    assert.equal((await rehearse('import', 'bfcl', 'base', '--limit', '0')).code, 2);
  });
});

/** Every entry under `root` (relative path → a file's content, a link's target, or "folder"). */
async function listTree(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      const rel = path.relative(root, p);
      if (entry.isSymbolicLink()) out.set(rel, `link to ${await fs.readlink(p)}`);
      else if (entry.isDirectory()) {
        out.set(rel, 'folder');
        await walk(p);
      } else out.set(rel, await fs.readFile(p, 'utf8'));
    }
  };
  await walk(root);
  return out;
}
