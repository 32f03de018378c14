#!/usr/bin/env bash
# The test run: import contracts, then pytest (GUI tests run under Xvfb via pytest-xvfb).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/lint-imports
exec .venv/bin/python -m pytest -q "$@"
