// `rehearse compare`: a recorded trace replayed with two policies, per-tool deltas of the fidelity
// scores and of rehearsal validity, and no invented task-success number.
import * as assert from 'node:assert/strict';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_RUN_SETTINGS } from '../../src/core/runner/settings';
import type { FidelityComparison } from '../../src/core/training/compareFidelity';
import type { ChatServer } from '../support/chatServer';
import { startChatServer } from '../support/chatServer';
import { OK_CASE, REFUSED_CASE, scriptedModel, writeProbeTasks } from '../support/scriptedModel';
import { ensurePolicyHostBundle, ensureServerBundles } from '../support/servers';
import { rehearse } from '../support/cli';

/** What policy B (an endpoint) answers to every rehearsal: no `<execution_result>`, so it never parses. */
const UNPARSED_REHEARSAL = 'I cannot tell what this tool would return.';

describe('rehearse compare', function () {
  this.timeout(180_000);
  let dir = '';
  let scripted = '';
  // Policy A: a copy of the scripted model with the file a trained policy carries (its token
  // budgets, above the self-check's 64, so its rehearsals of the recorded calls are script rows).
  let withConfig = '';
  // Policy B: an endpoint whose every rehearsal is UNPARSED_REHEARSAL, whatever the machine.
  let endpoint: ChatServer;
  let trace = '';
  /** `--policy A --policy B` and what B needs (`--model`, the endpoint's model name). */
  const bothPolicies = () => ['--policy', withConfig, '--policy', endpoint.url, '--model', 'm'];
  before(async function () {
    this.timeout(600_000);
    ensureServerBundles();
    ensurePolicyHostBundle();
    scripted = await scriptedModel();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'compare-'));
    withConfig = path.join(dir, 'model');
    await fs.cp(scripted, withConfig, { recursive: true });
    await fs.writeFile(
      path.join(withConfig, 'rehearsal_config.json'),
      JSON.stringify({ maxTokens: { act: 96, rehearse: 96 } }),
    );
    endpoint = await startChatServer(() => UNPARSED_REHEARSAL);
    const tasks = await writeProbeTasks(path.join(dir, 'tasks'), [OK_CASE.case, REFUSED_CASE.case]);
    const run = await rehearse(
      'run',
      ...tasks,
      '--policy',
      scripted,
      '--out',
      path.join(dir, 'runs'),
      '--no-progress',
      '--device',
      'cpu',
    );
    assert.equal(run.code, 0, run.err);
    trace = run.out
      .split('\n')
      .find((l) => l.startsWith('trace: '))!
      .slice('trace: '.length);
  });
  after(async () => {
    await endpoint?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('shows per-tool deltas of validity and fidelity scores between the two policies, and says task success is not measured', async () => {
    const asked = endpoint.requests.length;
    const r = await rehearse(
      'compare',
      trace,
      ...bothPolicies(),
      '--out',
      path.join(dir, 'replays'),
      '--no-progress',
      '--device',
      'cpu',
      '--json',
    );
    assert.equal(r.code, 0, r.err);
    assert.equal(endpoint.requests.length - asked, 2, 'B rehearsed each recorded call');
    const { comparison, taskSuccessNote } = JSON.parse(r.out) as {
      comparison: FidelityComparison;
      taskSuccessNote: string;
    };
    const probe = comparison.perTool.find((t) => t.tool === 'probe')!;
    assert.equal(probe.calls, 2);
    // The scripted model rehearses both calls in valid JSON (one exact, one predicting a refusal);
    // the endpoint's rehearsals never parse.
    assert.deepEqual(probe.validity, { a: 1, b: 0, delta: -1 });
    assert.deepEqual(probe.scores.exactMatch, { a: 0.5, b: null, delta: null });
    assert.deepEqual(probe.scores.errorAgreement, { a: 0.5, b: null, delta: null });
    assert.equal(comparison.taskSuccess, null);
    assert.match(taskSuccessNote, /replay .* plays no episode/);

    // Each side is replayed with its own settings: A with its model folder's rehearsal_config.json
    // (how it was trained to be prompted: 96 rehearse tokens), B, an endpoint, with the defaults.
    const runEvent = (side: 'a' | 'b') =>
      JSON.parse(
        readFileSync(
          (JSON.parse(r.out) as Record<string, { run: { traceFile: string } }>)[side].run.traceFile,
          'utf8',
        ).split('\n')[0],
      ) as { settings: { maxTokens: { rehearse: number } } };
    assert.equal(runEvent('a').settings.maxTokens.rehearse, 96);
    assert.equal(
      runEvent('b').settings.maxTokens.rehearse,
      DEFAULT_RUN_SETTINGS.maxTokens.rehearse,
    );

    const table = await rehearse(
      'compare',
      trace,
      ...bothPolicies(),
      '--out',
      path.join(dir, 'replays'),
      '--no-progress',
      '--device',
      'cpu',
    );
    assert.equal(table.code, 0, table.err);
    assert.match(table.out, /^probe\s+2\s+1\.00→0\.00 \(-1\.00\)\s+0\.50→- \(-\)/m);
    assert.match(table.out, /^Task success: not measured\./m);
  });

  it('annotate --mismatches marks the missed call once; compare --only-marked scores just the marked calls', async () => {
    const replays = path.join(dir, 'replays-marked');
    const none = await rehearse(
      'compare',
      trace,
      ...bothPolicies(),
      '--out',
      replays,
      '--no-progress',
      '--only-marked',
    );
    assert.equal(none.code, 2);
    assert.match(
      none.err,
      /--only-marked: no call of .* is marked as a fidelity error .*rehearse annotate <trace> --mismatches/,
    );

    // Two at once (as two terminals would): one marks, the other waits and then finds the mark.
    const [first, second] = await Promise.all([
      rehearse('annotate', trace, '--mismatches', '--author', 'test', '--json'),
      rehearse('annotate', trace, '--mismatches', '--author', 'test', '--json'),
    ]);
    assert.equal(first.code, 0, first.err);
    assert.equal(second.code, 0, second.err);
    const marks = (await fs.readFile(path.join(path.dirname(trace), 'annotations.jsonl'), 'utf8'))
      .split('\n')
      .filter(Boolean);
    assert.equal(marks.length, 1, 'the call is marked once');
    assert.equal(JSON.parse(first.out).marked + JSON.parse(second.out).marked, 1);
    assert.equal(
      existsSync(path.join(path.dirname(trace), 'annotations.jsonl.lock')),
      false,
      'the lock is gone',
    );
    // One call rehearsed exactly; the other predicted a refusal where the tool answered.
    const winner = JSON.parse(first.out).marked ? first : second;
    assert.deepEqual(JSON.parse(winner.out), {
      annotations: path.join(path.dirname(trace), 'annotations.jsonl'),
      marked: 1,
      byKind: { wrong_error_state: 1 },
      alreadyAnnotated: 0,
      calls: 2,
    });
    const again = await rehearse('annotate', trace, '--mismatches');
    assert.match(
      again.out,
      /^marked 0 of 2 calls as major fidelity errors; 1 already annotated, left as they are/,
    );
    const bad = await rehearse('annotate', trace, '--mismatches', '--severity', 'huge');
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--severity must be one of minor, major, critical/);

    const r = await rehearse(
      'compare',
      trace,
      ...bothPolicies(),
      '--out',
      replays,
      '--no-progress',
      '--device',
      'cpu',
      '--only-marked',
      '--json',
    );
    assert.equal(r.code, 0, r.err);
    const { comparison, onlyMarked } = JSON.parse(r.out) as {
      comparison: FidelityComparison;
      onlyMarked: number;
    };
    assert.equal(onlyMarked, 1);
    const probe = comparison.perTool.find((t) => t.tool === 'probe')!;
    assert.equal(probe.calls, 1);
    assert.deepEqual(probe.scores.errorAgreement, { a: 0, b: null, delta: null });
  });

  it('refuses anything but two rehearsing policies', async () => {
    const one = await rehearse('compare', trace, '--policy', scripted);
    assert.equal(one.code, 2);
    assert.match(one.err, /compare needs exactly two policies \(--policy A --policy B\), got 1/);
    const ref = await rehearse('compare', trace, '--policy', scripted, '--policy', 'reference');
    assert.match(ref.err, /The reference policy does not rehearse/);
  });
});
