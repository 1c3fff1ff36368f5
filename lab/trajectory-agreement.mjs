// `npm run measure:trajectory-agreement [-- <tasks>]`: do the trajectory items of generated tasks
// grade an episode as its state checks do? Plays <tasks> train tasks (default 500, half per built-in
// domain) against the real servers: each task's reference solution, then four perturbations (a
// wrong id in a write, a wrong value in a write, a write left out, an extra write of a tool the
// reference never writes with), and two probes reported apart (a write made twice; in refusal
// tasks, the forbidden write tried and refused by the server).
// Each episode is graded by its state checks alone (the real run's success) and by its trajectory
// items alone (call, no_call, answer: the imagined grade of the same calls), and the success
// verdicts are compared. Prints a Markdown table and the disagreements by kind; `--json <file>`
// also writes every episode. Needs `tsc -p .` first (it runs the compiled test support).
import { createRequire } from 'node:module';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { STUDY_DOMAINS, formatReport, studyDomain } = require(
  path.join(ROOT, 'out/test/support/trajectoryAgreement.js'),
);
const { ensureServerBundles } = require(path.join(ROOT, 'out/test/support/servers.js'));

const args = process.argv.slice(2);
const jsonAt = args.indexOf('--json');
const jsonFile = jsonAt >= 0 ? args.splice(jsonAt, 2)[1] : undefined;
const total = Number(args[0] ?? 500);
if (!Number.isInteger(total) || total < STUDY_DOMAINS.length) {
  console.error('usage: trajectory-agreement.mjs [tasks (default 500)] [--json <file>]');
  process.exit(2);
}

const dir = ensureServerBundles();
const started = Date.now();
const perDomain = STUDY_DOMAINS.map(
  (_, i) => Math.floor(total / STUDY_DOMAINS.length) + (i < total % STUDY_DOMAINS.length ? 1 : 0),
);
const runs = await Promise.all(STUDY_DOMAINS.map((d, i) => studyDomain(d, perDomain[i], dir)));
const episodes = runs.flat();
console.log(
  `${total} train tasks (${STUDY_DOMAINS.map((d, i) => `${d.generator.domain} ${perDomain[i]}`).join(', ')}), ${episodes.length} episodes, ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
);
for (const d of STUDY_DOMAINS) {
  console.log(`### ${d.generator.domain}\n`);
  console.log(formatReport(episodes.filter((e) => e.domain === d.generator.domain)) + '\n');
}
console.log('### both domains\n');
console.log(formatReport(episodes));
if (jsonFile) await fs.writeFile(jsonFile, JSON.stringify(episodes, null, 1) + '\n');
