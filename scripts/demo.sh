#!/usr/bin/env bash
# The main job, for a newcomer: two built-in sample tasks (retail, bank) played by the embedded
# default policy in shadow mode. For every call the policy first rehearses (predicts) the tool's
# response, then the real MCP tool answers; both are recorded side by side. Prints the run (its
# tasks, policy and device, fidelity per tool), every call from least to most faithful, and the
# worst call's diff. The trace stays in .rehearsal/runs/ for the extension's Trace Explorer.
# Works from a fresh clone: every folder it writes into is created here or by the CLI.
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/build.mjs
TASKS=${DEMO_TASKS:-retail-0012 bank-0017}
POLICY=default
if [ ! -f models/default/onnx/model.onnx ]; then
  echo "models/default is missing (npm run train:default builds it); playing the tasks' reference solutions instead."
  POLICY=reference
fi
mkdir -p .rehearsal
# Keep colours on a terminal although the output also goes through tee.
if [ -t 1 ] && [ -z "${NO_COLOR+x}" ]; then export FORCE_COLOR=1; fi
echo "== rehearse run $TASKS --policy $POLICY --mode shadow --calls"
# shellcheck disable=SC2086 # TASKS is a list of task ids or files
node dist/cli.js run $TASKS --policy "$POLICY" --mode shadow --calls | tee .rehearsal/demo-run.txt
RUN=$(sed -n 's/^trace: //p' .rehearsal/demo-run.txt | tail -n 1)
if [ -z "$RUN" ] || [ ! -f "$RUN" ]; then echo "demo: the run printed no trace path" >&2; exit 1; fi
echo
echo "== what the policy solved"
node scripts/demo-outcome.mjs "$RUN" "$([ "$POLICY" = default ] && echo models/default || echo reference)"
if [ "$POLICY" = default ]; then
  echo
  echo "== rehearse diff $RUN --worst    (the least faithful call: rehearsed (−) vs actual (+))"
  node dist/cli.js diff "$RUN" --worst
fi
echo
echo "Open this folder in VS Code with the extension: the run is in the Rehearsal view's Trace Explorer."
