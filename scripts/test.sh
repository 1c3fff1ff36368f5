#!/usr/bin/env bash
# The whole test suite, as CI runs it: system packages, the type check and the unit tier (it starts
# no process), the bundles, lint, the end-to-end tier (real MCP servers, the policy host, the
# trainer), the Python trainer tests, the recipes and bench cases at a tiny size, then editor tests in
# a real VS Code extension host (code-server + Chromium). The tiers: CONTRIBUTING.md, Test tiers.
# Usage: npm test            (everything)
#        STAGES="unit e2e" npm test   (a subset; stages: setup unit build lint e2e python recipes bench editor)
set -euo pipefail
cd "$(dirname "$0")/.."
STAGES="${STAGES:-setup unit build lint e2e python recipes bench editor}"
T0=$(date +%s)
stage() { printf '\n\033[1m== %s\033[0m (t+%ss)\n' "$1" "$(( $(date +%s) - T0 ))"; }
has() { [[ " $STAGES " == *" $1 "* ]]; }

if has setup; then stage "system packages"; bash scripts/ensure-system-deps.sh; fi
if [ ! -d node_modules ]; then echo "node_modules is missing: run npm ci first" >&2; exit 1; fi
# ESLint and Prettier need only node_modules: they run in the background from here, beside the type
# check, the unit tier, the bundles and the trainer environment (about a minute and a half less on
# 2 cores), and the lint stage waits for them. Ended with the script, whatever ends it.
LINT_PID=""
LINT_LOG=""
cleanup() {
  if [ -n "$LINT_PID" ]; then kill "$LINT_PID" 2>/dev/null || true; fi
  rm -rf "${TINY:-}" "$LINT_LOG"
}
trap cleanup EXIT
if has lint; then
  LINT_LOG=$(mktemp)
  (
    npx eslint .
    npx prettier --check . || { echo "formatting differs: run npm run format" >&2; exit 1; }
  ) > "$LINT_LOG" 2>&1 &
  LINT_PID=$!
fi
needs_python() { has lint || has e2e || has python || has recipes || has bench || has editor; }
needs_bundles() { has build || has e2e || has recipes || has bench || has editor || needs_python; }
if has unit || needs_bundles; then
  # out/test afresh: a compiled test whose source was renamed or removed would still run.
  stage "type check"; rm -rf out/test; npx tsc -p .
fi
# The unit tier first: plain Node, no process started (test/support/noProcess.ts), well under a minute.
if has unit; then stage "unit tests (mocha, no process)"; npx mocha --config .mocharc.unit.json 'out/test/unit/**/*.test.js'; fi
if needs_bundles; then stage "bundles"; node scripts/build.mjs; fi
# The trainer's environment, as users get it (a venv from trainer/requirements*.txt; a no-op when it is
# up to date). Every Python the tests start is this one (or $TRAINER_PYTHON when set).
if needs_python && [ -z "${TRAINER_PYTHON:-}" ]; then stage "trainer environment"; node dist/cli.js trainer setup --dev --tau2; fi
if has lint; then
  stage "lint and formatting"
  LINT_OK=1
  wait "$LINT_PID" || LINT_OK=0
  LINT_PID=""
  cat "$LINT_LOG"
  if [ "$LINT_OK" = 0 ]; then echo "lint failed (above)" >&2; exit 1; fi
  bash scripts/lint-python.sh
fi
if has e2e; then stage "end-to-end tests (mocha: servers, policy host, trainer)"; npx mocha --config .mocharc.e2e.json 'out/test/e2e/**/*.test.js'; fi
if has python && [ -d trainer/tests ]; then
  stage "trainer tests (python)"
  OMP_WAIT_POLICY=PASSIVE "$(bash scripts/trainer-python.sh)" -m unittest discover -s trainer/tests -t . -v
fi
if has recipes; then
  # Every stage of npm run train:default, measure:envace and measure:foresight (src/recipes/) at a tiny size (about 4 minutes),
  # in a temporary folder, so that the recipes cannot rot; then GRPO's sanity task (about 2 minutes),
  # which fails when role-wise GRPO on imagined rollouts cannot learn a rewarded choice.
  stage "recipes at a tiny size (train:default, measure:envace, measure:foresight, GRPO sanity task)"
  TINY=$(mktemp -d)
  RECIPE=training/default/recipe.ci.json WORK="$TINY/train" MODEL="$TINY/model" node dist/recipes.js train-default
  # Its last stages again from that policy, as the committed default's real-rollout GRPO was run from the one before it.
  RECIPE=training/default/recipe.ci.json START="$TINY/model" WORK="$TINY/train-from" MODEL="$TINY/model-from" node dist/recipes.js train-default --from grpo-real
  # The tiny recipe grounds imagination (grpo.groundedImagination); the measure runs ungrounded (GROUNDED=0), so both paths run.
  GROUNDED=0 QUICK=1 RECIPE=training/default/recipe.ci.json BASE="$TINY/model" POLICY="$TINY/model" WORK="$TINY/measure" node dist/recipes.js measure-envace
  # issue 41's foresight arms on the same tiny model (about a minute): data, both SFT arms, budget 2 vs 0, imagined GRPO, the rule accuracies.
  QUICK=1 RECIPE=training/default/recipe.ci.json BASE="$TINY/model" WORK="$TINY/foresight" node dist/recipes.js measure-foresight
  WORK="$TINY/sanity" node dist/recipes.js grpo-sanity
fi
if has bench; then
  # Every case of npm run bench at a tiny size, once, no target judged: a case that no longer runs
  # (a renamed API, a changed trainer config) fails here instead of on the next person's measurement.
  stage "bench cases at a tiny size (npm run bench -- --tiny)"
  node out/bench/index.js --tiny
fi
if has editor && [ -f out/test/editor/run.js ]; then stage "editor tests (code-server extension host)"; node out/test/editor/run.js; fi
stage "all tests passed"
