import * as path from 'node:path';
import { runsFolder } from '../../src/core/trace/format/discover';
import { writeSampleWorkspace } from './sampleWorkspace';

/**
 * Writes the sample runs into `<workspace>/.rehearsal/runs/`, and with `--torn` a copy of the
 * shadow run whose last line was cut mid-write (what a crash leaves).
 */
async function main(): Promise<void> {
  const workspace = path.resolve(process.argv[2] ?? 'examples/workspace');
  await writeSampleWorkspace(workspace, { torn: process.argv.includes('--torn') });
  console.log(`wrote sample runs to ${runsFolder(workspace)}`);
}

void main();
