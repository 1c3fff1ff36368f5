/**
 * The workspaces the editor tests open: each holds the sample runs and a torn run, written by the
 * test-data builders through the real trace writer. Each phase gets its own copy, so that the live
 * update tests of the suite never change what the UI checks see.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeSampleWorkspace } from '../builders/sampleWorkspace';

/** A temporary folder with one sample workspace per test phase. */
export interface Fixture {
  root: string;
  /** Opened by the extension-host suite (which appends to it). */
  suiteWorkspace: string;
  /** Opened by the browser UI checks. */
  uiWorkspace: string;
  dispose(): Promise<void>;
}

/** Creates the fixture under the system temp folder. */
export async function createFixture(): Promise<Fixture> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-editor-'));
  const suiteWorkspace = path.join(root, 'suite-workspace');
  const uiWorkspace = path.join(root, 'ui-workspace');
  await writeSampleWorkspace(suiteWorkspace, { torn: true });
  await writeSampleWorkspace(uiWorkspace, { torn: true });
  return { root, suiteWorkspace, uiWorkspace, dispose: () => fs.rm(root, { recursive: true, force: true }) };
}
