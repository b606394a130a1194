#!/usr/bin/env bash
# Installs flashlab with its test dependencies and runs every test: Rust (unit, integration,
# doc tests) and Python. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== installing flashlab (Python package, builds the Rust core)"
python3 -m pip install --quiet --disable-pip-version-check ".[test]"

echo "== Rust tests"
cargo test --locked

echo "== Python tests"
python3 -m pytest -q tests
