#!/usr/bin/env bash
# The main job, for a newcomer: builds the CLI, then shows the fidelity of the sample runs in
# examples/workspace (rehearsed vs actual tool responses) and the diff of the least faithful call.
set -euo pipefail
cd "$(dirname "$0")/.."
node scripts/build.mjs
WS=examples/workspace
echo "== Fidelity report of the sample runs in $WS"
node dist/cli.js report "$WS" --calls
RUN="$WS/.rehearsal/runs/20261129-120000-shadow-sample"
echo
echo "== The least faithful call that both sides answered: rehearsed (−) vs actual (+)"
node dist/cli.js diff "$RUN" --call e1.t3.c1
echo
echo "Open $WS in VS Code with the extension to browse these runs in the Trace Explorer."
