#!/usr/bin/env bash
# The slow tier (npm run test:seeds): the tests that use the scripted test model, run once for each
# training seed of the model (REHEARSAL_TEST_MODEL_SEED, 0 to 4 unless SEEDS says otherwise). Each seed
# gives other weights, as another machine's floating point does; every test must pass with any weights
# that pass the model's self-check (test/README.md lists the assertions that read a model's output and
# why each holds). Per seed: the end-to-end files that import the model (found by
# scripts/scripted-model-users.mjs), then the editor suite, whose model-folder tests use it.
# Prints one line per seed and a summary; exits non-zero when any seed failed. Logs: test-results/seeds/.
set -uo pipefail
cd "$(dirname "$0")/.."
SEEDS="${SEEDS:-0 1 2 3 4}"
LOGS=test-results/seeds
mkdir -p "$LOGS"
set -e
bash scripts/ensure-system-deps.sh
rm -rf out/test
npx tsc -p .
node scripts/build.mjs
if [ -z "${TRAINER_PYTHON:-}" ]; then node dist/cli.js trainer setup --dev --tau2; fi
mapfile -t FILES < <(node scripts/scripted-model-users.mjs)
set +e
echo "end-to-end files that use the scripted model: ${#FILES[@]}"
FAILED=()
for seed in $SEEDS; do
  started=$(date +%s)
  REHEARSAL_TEST_MODEL_SEED=$seed npx mocha --config .mocharc.e2e.json "${FILES[@]}" > "$LOGS/seed-$seed-e2e.log" 2>&1
  e2e=$?
  REHEARSAL_TEST_MODEL_SEED=$seed REHEARSAL_EDITOR_ONLY=suite node out/test/editor/run.js > "$LOGS/seed-$seed-editor.log" 2>&1
  editor=$?
  passing=$(grep -Eo '[0-9]+ passing' "$LOGS/seed-$seed-e2e.log" | tail -n 1)
  verdict=$([ $e2e = 0 ] && [ $editor = 0 ] && echo passed || echo FAILED)
  echo "seed $seed: $verdict (end to end: exit $e2e, ${passing:-no count}; editor suite: exit $editor) in $(( $(date +%s) - started )) s"
  if [ "$verdict" = FAILED ]; then FAILED+=("$seed"); fi
done
if [ ${#FAILED[@]} -gt 0 ]; then
  echo "seeds failed: ${FAILED[*]} (logs in $LOGS/)" >&2
  exit 1
fi
echo "all seeds passed: $SEEDS"
