// The demo's plain statement of what the policy solved in the run it just played (issue 39): each
// task solved or not, with the checks a task failed, and what to expect of the policy on held-out
// tasks (its manifest's score). A small policy's greedy output can differ between machines (floating
// point), so the demo states what happened here rather than promising an outcome.
// Usage: node scripts/demo-outcome.mjs <trace.jsonl> <model folder | reference>
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

const [trace, modelDir] = process.argv.slice(2);
if (!trace) {
  console.error('usage: node scripts/demo-outcome.mjs <trace.jsonl> [<model folder>]');
  process.exit(2);
}
const tasks = new Map();
const ends = [];
for (const line of readFileSync(trace, 'utf8').split('\n')) {
  let event;
  try {
    event = JSON.parse(line);
  } catch {
    continue; // a torn line: the run's own report counts it
  }
  if (event?.type === 'episode') tasks.set(event.episodeId, event.taskId);
  if (event?.type === 'episode.end') ends.push(event);
}
const solved = ends.filter((e) => e.success === true);
const policy =
  modelDir === 'reference' ? 'the reference policy' : `the ${path.basename(modelDir ?? '')} policy`;
const names = (list) => list.map((e) => tasks.get(e.episodeId) ?? e.episodeId).join(', ');
console.log(
  `${policy[0].toUpperCase()}${policy.slice(1)} solved ${solved.length} of the ${ends.length} tasks on this machine${solved.length ? `: ${names(solved)}` : ''}.`,
);
for (const end of ends.filter((e) => e.success !== true)) {
  const failed = (end.checks ?? []).filter((c) => c.passed === false).map((c) => c.id);
  const reward = typeof end.reward === 'number' ? `reward ${end.reward.toFixed(2)}` : end.status;
  console.log(
    `Not solved: ${tasks.get(end.episodeId) ?? end.episodeId} (${reward}${failed.length ? `; failed checks: ${failed.join(', ')}` : ''}).`,
  );
}
const manifest = modelDir && modelDir !== 'reference' && path.join(modelDir, 'manifest.json');
if (manifest && existsSync(manifest)) {
  const scores = JSON.parse(readFileSync(manifest, 'utf8')).scores;
  if (scores && typeof scores.taskSuccess === 'number')
    console.log(
      `On ${scores.episodes} held-out ${scores.split}-split tasks it solves ${(scores.taskSuccess * 100).toFixed(0)}% (models/default/manifest.json); its greedy output can differ between machines. The diff below shows a rehearsal next to the real response either way.`,
    );
}
