// Crash consistency: real processes killed with SIGKILL at random moments, and what they leave
// checked. A `rehearse run` on built-in tasks (its trace), a process appending annotations, and a
// training run (its checkpoints and resume). A few kills each here; `npm run bench -- reliability`
// makes 100 of each. REHEARSAL_CRASH_SEED replays a campaign.
import * as assert from 'node:assert/strict';
import { crashAnnotations } from '../support/crash/annotationCrash';
import type { CrashReport } from '../support/crash/kill';
import { crashRunner, crashRunnerInFlight } from '../support/crash/runnerCrash';
import { crashTraining } from '../support/crash/trainingCrash';
import { randomTestModel } from '../support/testModels';
import { useTempDir } from '../support/tempDir';

const SEED = Number(process.env['REHEARSAL_CRASH_SEED'] ?? Date.now() % 1_000_000);

function assertHeld(report: CrashReport, kills: number): void {
  assert.deepEqual(report.violations, [], `seed ${SEED}`);
  assert.equal(report.kills, kills);
}

describe('reliability: crash consistency under SIGKILL', function () {
  this.timeout(240_000);
  const scratch = useTempDir('rehearsal-crash-');
  // The training campaign's tiny model, built once per machine (cached): not inside a timed test.
  before(async function () {
    this.timeout(300_000);
    await randomTestModel(1);
  });

  it("rehearse run killed at 4 random moments: each trace reads, keeps a prefix of the uninterrupted run's events, loses at most a torn last line, and opens in the explorer", async () => {
    const report = await crashRunner({ kills: 4, seed: SEED, scratch: scratch() });
    assertHeld(report, 4);
  });

  it('rehearse run --concurrency 8 killed with 8 episodes in flight (endpoint policy): the trace reads, every finished episode is whole and in order, the others a prefix', async () => {
    const report = await crashRunnerInFlight({ scratch: scratch() });
    assertHeld(report, 1);
    assert.equal(report.inFlightAtKill, 8);
    assert.ok(report.finished >= 1, 'an episode had finished before the kill');
    assert.ok(report.recordsChecked > 0);
  });

  it('annotations being appended, killed at 6 random moments: every acknowledged mark is kept, in order, and the file takes the next mark', async () => {
    const report = await crashAnnotations({ kills: 6, seed: SEED, scratch: scratch() });
    assertHeld(report, 6);
    assert.ok(report.recordsChecked > 0, 'some kill landed after marks were written');
  });

  it("a training run killed at 2 random moments: checkpoints stay whole, the relaunch resumes from the newest, and ends with the uninterrupted run's exact weights", async () => {
    const report = await crashTraining({ kills: 2, seed: SEED, scratch: scratch() });
    assertHeld(report, 2);
    assert.ok(report.finalsCompared >= 1);
  });
});
