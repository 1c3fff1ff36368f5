import * as assert from 'node:assert/strict';
import { StudioError } from '../../src/core/base/errors';

/** The coded error `promise` rejects with; fails when it resolves or rejects with anything else. */
export async function rejects(promise: Promise<unknown>): Promise<StudioError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof StudioError, `not a coded error: ${String(err)}`);
    return err;
  }
  assert.fail('expected a coded error');
}
