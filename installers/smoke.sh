#!/usr/bin/env bash
# Smoke test of the built .deb, as a fresh user would meet it:
#   unpack it with dpkg -x into a temporary root, then from the frozen binary
#   1. --version (timed: the first run after unpacking, then a warm run)
#   2. `selftest` on an example project: open it, verify a state, render a still through the worker
#   3. the G1 imported from the character library (example-robot-data inside the bundle)
#   3b. agent CAD code through the sandbox (the frozen app runs it as its own Python)
#   4. `open` under Xvfb: wait for the window, save a screenshot, check it is not blank
#   5. uninstall: run prerm/postrm against the temporary root; a user's project must survive
# Usage: installers/smoke.sh [DEB]    (default: the newest build/installer/*.deb)
# Writes build/installer/smoke/{gui.png,selftest.txt,figures.txt}. Leaves no process running.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
deb=${1:-$(ls -t build/installer/keypose-studio_*_amd64.deb 2>/dev/null | head -1)}
[ -f "$deb" ] || { echo "smoke: no .deb; build it first with installers/build.sh" >&2; exit 3; }
out=$repo/build/installer/smoke
rm -rf "$out"; mkdir -p "$out"
tmp=$(mktemp -d /tmp/keypose-smoke.XXXXXX)
xvfb_pid=""; app_pid=""
cleanup() {
    [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null && sleep 1 && kill -9 "$app_pid" 2>/dev/null
    [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "smoke: FAIL: $*" >&2; exit 1; }
now() { date +%s.%N; }
secs() { python3 -c "print(f'{$2 - $1:.2f}')"; }

echo "smoke: unpacking $deb ($(du -h "$deb" | cut -f1))"
root=$tmp/root
dpkg -x "$deb" "$root"
dpkg-deb -e "$deb" "$tmp/DEBIAN"
for f in usr/bin/keypose-studio usr/share/applications/keypose-studio.desktop \
         usr/share/icons/hicolor/256x256/apps/keypose-studio.png opt/keypose-studio/app/keypose-studio; do
    [ -e "$root/$f" ] || fail "the package lacks /$f"
done
grep -q '^Exec=keypose-studio' "$root/usr/share/applications/keypose-studio.desktop" || fail ".desktop Exec"
app=$root/opt/keypose-studio/app/keypose-studio
export HOME=$tmp/home XDG_CONFIG_HOME=$tmp/home/.config
mkdir -p "$HOME"
unset KEYPOSE_SETTINGS KEYPOSE_BLENDER_PYTHON KEYPOSE_BLENDER_BINARY PYTHONPATH VIRTUAL_ENV

app_mb=$(du -sm "$root/opt/keypose-studio/app" | cut -f1)
worker_mb=$(du -sm "$root/opt/keypose-studio/blender-env" 2>/dev/null | cut -f1 || echo 0)
t0=$(now); version=$("$app" --version); t1=$(now)
"$app" --version >/dev/null; t2=$(now)
v_first=$(secs "$t0" "$t1"); v_warm=$(secs "$t1" "$t2")
echo "smoke: $version; first run $v_first s, warm $v_warm s"
[ "$version" = "studio $(.venv/bin/python -c 'import studio; print(studio.__version__)')" ] || fail "--version said '$version'"

# The example project: the first one shipped with states, else the doorway scene built
# by the frozen app itself (build123d inside the bundle) with its rest pose as a state.
project=""
for p in "$root"/opt/keypose-studio/projects/*/; do
    n=$("$app" -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from states').fetchone()[0])" "$p/studio.db" 2>/dev/null || echo 0)
    if [ "$n" -gt 0 ]; then project=${p%/}; break; fi
done
if [ -z "$project" ]; then
    echo "smoke: no shipped example has states; replaying the doorway scene's calls with the frozen app"
    project=$tmp/doorway
    "$app" -c "
import sys
from studio.examples.pipeline import replay_stages
from studio.scene.io import load_scene
from studio.scene.pose import Pose
from studio.timeline.storyboard import State, put_state
p = replay_stages('doorway', sys.argv[1], ('scene',)); s = load_scene(p)
put_state(p, s, State('rest', p.frame_start, Pose.rest(s), shot=s.cameras[0].name, description='rest pose'))
p.close()" "$project" || fail "the frozen app could not build the doorway scene"
fi

echo "smoke: selftest on $project"
t0=$(now)
set +o pipefail
"$app" selftest "$project" --work "$tmp/selftest" 2>&1 | tee "$out/selftest.txt"
code=${PIPESTATUS[0]}; set -o pipefail; t1=$(now); st_secs=$(secs "$t0" "$t1")
[ "$code" = 0 ] || fail "selftest exited $code"
cp "$tmp"/selftest/*/renders/stills/*.png "$out/" 2>/dev/null || true

echo "smoke: the G1 from the character library, imported by the frozen app"
"$app" new "$tmp/g1-lab" >/dev/null || fail "the frozen app could not make a project"
t0=$(now)
"$app" scene import-urdf "$tmp/g1-lab" g1 --name g1 | tee "$out/g1.txt" || fail "the frozen app could not import the G1"
t1=$(now); g1_secs=$(secs "$t0" "$t1")
grep -q "38 joints (29 movable)" "$out/g1.txt" || fail "the G1 came in without its 29 revolute joints"
"$app" characters | grep -q "^person " || fail "the shipped skinned person is not in the character library"

echo "smoke: agent CAD code in the sandbox, run by the frozen app as its own Python"
"$app" -c "
import sys
from pathlib import Path
from studio.sandbox.run import run_code
r = run_code('from build123d import Box\nprint(round(Box(0.1, 0.2, 0.3).volume, 6))', Path(sys.argv[1]), time_limit=120)
assert r.returncode == 0 and r.stdout.strip() == '0.006', (r.returncode, r.stdout, r.stderr[-2000:])
print('smoke: sandboxed build123d box volume', r.stdout.strip())" "$tmp/agent" || fail "agent code did not run in the frozen app"

echo "smoke: the studio window under Xvfb"
display=:$((90 + RANDOM % 100))
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
for _ in $(seq 50); do xwininfo -display "$display" -root >/dev/null 2>&1 && break; sleep 0.1; done
cp -r "$project" "$tmp/gui-project"; rm -rf "$tmp/gui-project/jobs"
g0=$(now)
DISPLAY=$display "$app" open "$tmp/gui-project" >"$out/gui.log" 2>&1 &
app_pid=$!
shown=""
for _ in $(seq 300); do
    kill -0 "$app_pid" 2>/dev/null || { cat "$out/gui.log" >&2; fail "the studio window exited"; }
    if xwininfo -display "$display" -root -tree 2>/dev/null | grep -q '"Keypose Studio'; then shown=$(now); break; fi
    sleep 0.1
done
[ -n "$shown" ] || fail "no 'Keypose Studio' window within 30 s"
sleep 5   # let the viewport draw the scene
.venv/bin/python - "$display" "$out/gui.png" <<'EOF' || fail "the window screenshot is blank"
import sys
from PIL import ImageGrab
img = ImageGrab.grab(xdisplay=sys.argv[1]).convert("RGB")
img.save(sys.argv[2])
colours = len(img.getcolors(1 << 24) or [])
print(f"smoke: screenshot {img.size[0]}x{img.size[1]}, {colours} colours -> {sys.argv[2]}")
sys.exit(0 if colours > 50 else 1)
EOF
kill "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=""
kill "$xvfb_pid"; wait "$xvfb_pid" 2>/dev/null || true; xvfb_pid=""

echo "smoke: uninstall keeps users' projects"
mkdir -p "$root/home/artist/KeyposeStudio"
cp -r "$project" "$root/home/artist/KeyposeStudio/mine"
DPKG_ROOT=$root sh "$tmp/DEBIAN/prerm" remove
DPKG_ROOT=$root sh "$tmp/DEBIAN/postrm" purge
[ ! -e "$root/opt/keypose-studio" ] || fail "postrm left /opt/keypose-studio"
[ -f "$root/home/artist/KeyposeStudio/mine/studio.db" ] || fail "postrm removed a user's project"

printf '%s\n' \
    "deb: $(basename "$deb"), $(du -m "$deb" | cut -f1) MB packed, $(( $(dpkg-deb -f "$deb" Installed-Size) / 1024 )) MB installed (app $app_mb MB, worker $worker_mb MB)" \
    "cold start: --version first run after unpack $v_first s, warm $v_warm s" \
    "gui: 'Keypose Studio' window mapped $(secs "$g0" "$shown") s after launch" \
    "selftest: $st_secs s" \
    "G1 import (cold, in the frozen app): $g1_secs s" | tee "$out/figures.txt"
echo "smoke: every step worked"
