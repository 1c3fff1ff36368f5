#!/usr/bin/env bash
# The main job, for a newcomer: a real agent task of the built-in retail domain, played by the
# embedded default policy in shadow mode. For every call the policy first rehearses (predicts) the
# tool's response, then the real MCP tool answers; both are recorded side by side. Prints the run's
# fidelity, every call from least to most faithful, and the worst call's diff. The trace stays in
# .rehearsal/runs/ for the extension's Trace Explorer (open this folder in VS Code).
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/build.mjs
TASKS=${DEMO_TASKS:-examples/tasks/retail-0012.task.json examples/tasks/bank-0017.task.json}
POLICY=default
if [ ! -f models/default/onnx/model.onnx ]; then
  echo "models/default is missing (npm run train:default builds it); playing the tasks' reference solutions instead."
  POLICY=reference
fi
echo "== rehearse run $TASKS --policy $POLICY --mode shadow"
node dist/cli.js run $TASKS --policy "$POLICY" --mode shadow --out .rehearsal/runs --json > .rehearsal/demo-run.json
RUN=$(node -e "process.stdout.write(require('./.rehearsal/demo-run.json').run.traceFile)")
node dist/cli.js report "$RUN" --calls
if [ "$POLICY" = default ]; then
  echo
  echo "== The least faithful call: rehearsed (−) vs actual (+)"
  node dist/cli.js diff "$RUN" --worst || true
fi
echo
echo "Trace: $RUN"
echo "Open this folder in VS Code with the extension: the run is in the Rehearsal view's Trace Explorer."
