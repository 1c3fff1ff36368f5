// The GRPO stage's validation.command (npm run train:default): plays held-out tasks with an exported
// policy in shadow mode, greedy, and writes the scores the trainer compares as JSON.
// usage: node scripts/validate-policy.mjs <tasks> <model_dir> <scores.json> <runs_dir>
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [tasks, modelDir, out, runsDir] = process.argv.slice(2);
if (!runsDir) {
  console.error(
    'usage: node scripts/validate-policy.mjs <tasks> <model_dir> <scores.json> <runs_dir>',
  );
  process.exit(2);
}

const stdout = await new Promise((resolve, reject) => {
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'dist/cli.js'),
      'run',
      tasks,
      '--policy',
      modelDir,
      '--out',
      runsDir,
      '--no-progress',
      '--json',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let text = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => (text += chunk));
  child.on('error', reject);
  child.on('exit', (code) =>
    code === 0 ? resolve(text) : reject(new Error(`rehearse run exited ${code}`)),
  );
});
const { report } = JSON.parse(stdout);
const share = (n, d) => (d ? n / d : 0);
const scores = {
  success: share(report.successes, report.graded),
  meanReward: report.meanReward ?? 0,
  toolCallParseValidity: share(report.actParseValid, report.turns),
  rehearsalJsonValidity: share(report.rehearsalParseValid, report.rehearsed),
};
await fs.writeFile(out, JSON.stringify(scores) + '\n');
console.log(`validation: ${JSON.stringify(scores)}`);
