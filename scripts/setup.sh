#!/usr/bin/env bash
# Create what the studio needs, idempotently: Debian packages for Qt under Xvfb,
# .venv (the studio) and .venv-blender (bpy 5.0.1). Fast when all is there:
# each venv carries a stamp of its lock file and is rebuilt only when it changes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
py=${PYTHON:-python3.11}
command -v "$py" >/dev/null || py=python3

apt_pkgs="xvfb xauth bubblewrap libseccomp2 x11-utils desktop-file-utils python3.11 python3.11-venv libgl1 libegl1 libxkbcommon0 libxkbcommon-x11-0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxcb-cursor0 libxrender1 libxi6 libsm6 libice6 libfontconfig1 libdbus-1-3 libglib2.0-0 libxxf86vm1 libxfixes3 libxkbcommon0 libx11-xcb1 libxcb-xfixes0 libxcb-shm0 libxcb-sync1 libxcb-glx0 libxcb-dri3-0 libegl-mesa0 libgl1-mesa-dri"
missing=""
for p in $apt_pkgs; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing Debian packages:$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "setup: these Debian packages are missing and need root to install:$missing" >&2
    echo "setup: run as root, or: sudo apt-get install$missing" >&2
    exit 3
  fi
fi

# uv installs from its shared cache, so a fresh clone sets up in seconds.
uv="$HOME/.cache/keypose-studio/uv/bin/uv"
if [ ! -x "$uv" ]; then
  echo "setup: bootstrapping uv" >&2
  "$py" -m venv "$HOME/.cache/keypose-studio/uv"
  "$HOME/.cache/keypose-studio/uv/bin/pip" install -q "uv==0.13.9"
fi

make_venv() {  # dir lockfile extra-args...
  local dir=$1 lock=$2; shift 2
  local want; want=$(cat "$lock" pyproject.toml "$root/scripts/setup.sh" | sha256sum | cut -c1-16)
  if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$want" ]; then return 0; fi
  echo "setup: preparing $dir from $lock" >&2
  [ -x "$dir/bin/python" ] || "$uv" venv -q -p "$py" "$dir"
  "$uv" pip install -q --compile-bytecode -p "$dir/bin/python" -r "$lock" "$@"
  echo "$want" > "$dir/.stamp"
}
make_venv .venv requirements/studio.lock -e "$root" --no-deps
make_venv .venv-blender requirements/blender.lock
# The studio's own sources are installed editable, so uv leaves them uncompiled: compile them here (only
# what changed), or a Python told not to write bytecode (PYTHONDONTWRITEBYTECODE) compiles every module
# at every start of every `studio` process.
.venv/bin/python -m compileall -q -j 0 studio
