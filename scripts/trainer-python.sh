#!/usr/bin/env bash
# Prints the trainer's Python for scripts: $TRAINER_PYTHON, else the studio's environment
# ($REHEARSAL_TRAINER_ENV or .venv; `rehearse trainer setup` makes it). Fails with the command to run.
set -euo pipefail
if [ -n "${TRAINER_PYTHON:-}" ]; then echo "$TRAINER_PYTHON"; exit 0; fi
ENV_DIR="${REHEARSAL_TRAINER_ENV:-$(cd "$(dirname "$0")/.." && pwd)/.venv}"
if [ ! -x "$ENV_DIR/bin/python" ] || [ ! -f "$ENV_DIR/rehearsal-env.json" ]; then
  echo "No trainer environment in $ENV_DIR: run \`node dist/cli.js trainer setup --dev --tau2\` (npm test does)." >&2
  exit 1
fi
echo "$ENV_DIR/bin/python"
