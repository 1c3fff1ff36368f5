// Fuzzing of the targets that start a process (the CLI's commands, `rehearse serve`'s requests, a
// real stdio MCP server, model folders made by the trainer): generated and mutated inputs; no
// exception escapes, every failure is data or a coded error. The other targets are fuzzed by the
// unit tier (test/unit/reliability-fuzz.test.ts).
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fuzzTargets, runFuzzTarget, runsFor } from '../support/fuzz/targets';

/** Inputs per target in the normal suite (REHEARSAL_FUZZ_RUNS to change). */
const RUNS = Number(process.env['REHEARSAL_FUZZ_RUNS'] ?? 300);

describe('reliability: fuzzing the parsers of outside input that start processes', function () {
  this.timeout(120_000);
  let scratch = '';
  before(async () => {
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-fuzz-'));
  });
  after(() => fs.rm(scratch, { recursive: true, force: true }));

  for (const target of fuzzTargets().filter((t) => t.startsProcesses)) {
    const runs = runsFor(target, RUNS);
    it(`${target.name}: ${runs} generated and mutated inputs, no uncoded exception`, async () => {
      const outcome = await runFuzzTarget(target, scratch, runs);
      assert.ok(!outcome.failed, outcome.report);
      assert.equal(outcome.runs, runs);
    });
  }
});
