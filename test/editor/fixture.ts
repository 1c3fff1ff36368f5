/**
 * The workspaces the editor tests open: each holds the sample runs and a torn run, written by the
 * test-data builders through the real trace writer, and a task of the built-in retail domain. Each
 * phase gets its own copy, so that the live update tests of the suite never change what the UI
 * checks see.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { writeSampleWorkspace } from '../builders/sampleWorkspace';

const REPO = path.resolve(__dirname, '..', '..', '..');

/** The built-in retail task the run tests play (its reference solution makes three calls). */
export const FIXTURE_TASK = 'retail-0000';

/** Copies a sample task of a built-in domain into `<workspace>/tasks/`. */
async function addTask(workspace: string): Promise<void> {
  await fs.mkdir(path.join(workspace, 'tasks'), { recursive: true });
  await fs.copyFile(
    path.join(REPO, 'examples', 'tasks', `${FIXTURE_TASK}.task.json`),
    path.join(workspace, 'tasks', `${FIXTURE_TASK}.task.json`),
  );
}

/** A temporary folder with one sample workspace per test phase. */
export interface Fixture {
  root: string;
  /** Opened by the extension-host suite (which appends to it). */
  suiteWorkspace: string;
  /** Opened by the browser UI checks. */
  uiWorkspace: string;
  /** Opened without trusting it, to check that the studio only views there. */
  untrustedWorkspace: string;
  /** Opened by the packaged extension: a copy of examples/workspace (its sample runs and run file), as a user has it. */
  packagedWorkspace: string;
  dispose(): Promise<void>;
}

/** Creates the fixture under the system temp folder. */
export async function createFixture(): Promise<Fixture> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'rehearsal-editor-'));
  const suiteWorkspace = path.join(root, 'suite-workspace');
  const uiWorkspace = path.join(root, 'ui-workspace');
  await writeSampleWorkspace(suiteWorkspace, { torn: true });
  await writeSampleWorkspace(uiWorkspace, { torn: true });
  const untrustedWorkspace = path.join(root, 'untrusted-workspace');
  await writeSampleWorkspace(untrustedWorkspace);
  for (const ws of [suiteWorkspace, uiWorkspace, untrustedWorkspace]) await addTask(ws);
  const packagedWorkspace = path.join(root, 'packaged-workspace');
  await fs.cp(path.join(REPO, 'examples', 'workspace'), packagedWorkspace, { recursive: true });
  return {
    root,
    suiteWorkspace,
    uiWorkspace,
    untrustedWorkspace,
    packagedWorkspace,
    dispose: () => fs.rm(root, { recursive: true, force: true }),
  };
}
