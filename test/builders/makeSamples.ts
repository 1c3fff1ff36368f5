import * as path from 'node:path';
import { promises as fs } from 'node:fs';
import { sampleImagineRun, sampleShadowRun } from './samples';

/**
 * Writes the sample runs into `<workspace>/.rehearsal/runs/`, and with `--torn` a copy of the
 * shadow run whose last line was cut mid-write (what a crash leaves).
 */
async function main(): Promise<void> {
  const workspace = path.resolve(process.argv[2] ?? 'examples/workspace');
  const runs = path.join(workspace, '.rehearsal', 'runs');
  for (const t of [sampleShadowRun(), sampleImagineRun()]) {
    const file = path.join(runs, t.runId, 'trace.jsonl');
    await fs.rm(path.dirname(file), { recursive: true, force: true });
    await t.write(file);
  }
  if (process.argv.includes('--torn')) {
    const torn = sampleShadowRun('20261129-130000-shadow-crashed');
    const text = torn.text();
    const cut = text.slice(0, text.lastIndexOf('\n', text.length - 2) + 1) + text.slice(text.lastIndexOf('\n', text.length - 2) + 1).slice(0, 25);
    const file = path.join(runs, torn.runId, 'trace.jsonl');
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, cut);
  }
  console.log(`wrote sample runs to ${runs}`);
}

void main();
