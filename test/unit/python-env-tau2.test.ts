import * as assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { EnvMarker } from '../../src/core/training/pythonEnv';
import {
  ENV_MARKER,
  envPython,
  envStatus,
  requirementsHash,
  trainerRoot,
} from '../../src/core/training/pythonEnv';
import { useTempDir } from '../support/tempDir';

describe('the trainer environment with τ²-bench (rehearse trainer setup --tau2)', () => {
  const dir = useTempDir('tau2-env-');

  /** An environment folder whose setup finished with this marker. */
  function environment(marker: Partial<EnvMarker>): string {
    const envDir = path.join(dir(), 'env');
    mkdirSync(path.dirname(envPython(envDir)), { recursive: true });
    writeFileSync(envPython(envDir), '');
    const full: EnvMarker = {
      requirements: '',
      dev: false,
      python: '3.11',
      torch: '2.13.0',
      created: '2026-12-07T00:00:00Z',
      ...marker,
    };
    writeFileSync(path.join(envDir, ENV_MARKER), JSON.stringify(full));
    return envDir;
  }

  it("τ²'s pins are part of the hash: a setup with --tau2 is up to date only against them", async () => {
    const withTau2 = requirementsHash(true, trainerRoot(), true);
    assert.notEqual(withTau2, requirementsHash(true, trainerRoot(), false));
    assert.deepEqual(
      (({ ready, stale }) => ({ ready, stale }))(
        await envStatus(environment({ dev: true, tau2: true, requirements: withTau2 })),
      ),
      { ready: true, stale: false },
    );
    // A marker that says τ² while its hash left τ²'s files out was made from other pins.
    const mixed = environment({ dev: true, tau2: true, requirements: requirementsHash(true) });
    assert.equal((await envStatus(mixed)).stale, true);
  });

  it('a marker written before --tau2 existed (no tau2 field) stays up to date without τ²', async () => {
    const status = await envStatus(
      environment({ dev: true, requirements: requirementsHash(true) }),
    );
    assert.equal(status.stale, false);
    assert.equal(status.marker?.tau2, undefined);
  });
});
