#!/usr/bin/env bash
# The main job: the GUI on the doorway project where there is a display,
# the whole pipeline headless where there is none.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  exec .venv/bin/studio open projects/doorway
else
  exec .venv/bin/studio demo doorway
fi
