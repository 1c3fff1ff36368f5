// `npm run watch`: the type checker (tsc --watch, into out/) and the bundler (esbuild --watch, into
// dist/) side by side; Ctrl+C stops both. tsc's lines pass through untouched, so that the editor's
// `$tsc-watch` problem matcher (.vscode/tasks.json) reads them; esbuild's are prefixed.
import { spawn } from 'node:child_process';

const tsc = spawn(
  process.execPath,
  ['node_modules/typescript/bin/tsc', '-p', '.', '--watch', '--preserveWatchOutput'],
  { stdio: 'inherit' },
);
const esbuild = spawn(process.execPath, ['scripts/build.mjs', '--watch'], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
for (const stream of [esbuild.stdout, esbuild.stderr]) {
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    for (const line of chunk.split('\n')) if (line) console.log(`[esbuild] ${line}`);
  });
}

const children = [tsc, esbuild];
const stopAll = () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill();
};
for (const c of children) c.on('exit', stopAll);
process.on('SIGINT', stopAll);
process.on('SIGTERM', stopAll);
