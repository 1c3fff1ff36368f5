#!/usr/bin/env bash
# ruff over trainer/ and the experiments in lab/, mypy over trainer/ (their settings: pyproject.toml),
# in the trainer's environment.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="$(bash scripts/trainer-python.sh)"
"$PY" -m ruff check trainer lab scripts/gpu_check_lora.py
"$PY" -m mypy trainer
