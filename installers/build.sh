#!/usr/bin/env bash
# Builds the Linux installer: build/installer/keypose-studio_<version>_amd64.deb
#
#   installers/build.sh            freeze the app (PyInstaller), stage /opt/keypose-studio, dpkg-deb
#   KEYPOSE_DEB_WORKER=none ...    leave the Blender worker out (smaller .deb; first run says how to add it)
#   KEYPOSE_DEB_COMPRESS=xz ...    dpkg-deb compressor: zstd (default: fast to build and to install), xz (smaller, slow), gzip
#   KEYPOSE_REUSE_FREEZE=1 ...     package the last frozen app again (build/installer/dist) without re-running PyInstaller
#
# Layout inside the package:
#   /opt/keypose-studio/app/          the frozen studio (one folder; the executable is keypose-studio)
#   /opt/keypose-studio/blender-env/  the render worker: a relocatable Python 3.11 venv with bpy 5.0.1
#   /opt/keypose-studio/projects/     the example projects (opened from a copy, never in place)
#   /opt/keypose-studio/share/        blender.lock, the icon, the build record
#   /usr/bin/keypose-studio, /usr/share/applications/keypose-studio.desktop, hicolor icon
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=$root/build/installer
uv="$HOME/.cache/keypose-studio/uv/bin/uv"
worker=${KEYPOSE_DEB_WORKER:-bundle}
compress=${KEYPOSE_DEB_COMPRESS:-zstd}
base_python=${KEYPOSE_WORKER_PYTHON:-/usr/bin/python3.11}   # what the installed worker venv runs on
version=$(.venv/bin/python -c "import studio; print(studio.__version__)")
deb=$out/keypose-studio_${version}_amd64.deb
say() { echo "installer: $*" >&2; }
mkdir -p "$out"
t0=$(date +%s)

if [ "${KEYPOSE_REUSE_FREEZE:-0}" = 1 ] && [ -x "$out/dist/keypose-studio/keypose-studio" ]; then
    say "reusing the frozen app in $out/dist"
else
    say "freezing the studio with PyInstaller (one folder)"
    [ -f resources/keypose-studio.png ] || .venv/bin/python resources/make_icon.py
    nice -n 5 .venv/bin/pyinstaller --noconfirm --log-level WARN \
        --distpath "$out/dist" --workpath "$out/work" installers/keypose-studio.spec
fi
t1=$(date +%s)

stage=$out/root
opt=$stage/opt/keypose-studio
rm -rf "$stage"
mkdir -p "$opt/share" "$opt/projects" "$stage/usr/bin" "$stage/usr/share/applications" \
         "$stage/usr/share/icons/hicolor/256x256/apps" "$stage/DEBIAN"
cp -a "$out/dist/keypose-studio" "$opt/app"
# VTK's wheels ship their symbol tables (a third of their size); the dynamic symbols stay.
find "$opt/app/_internal/vtkmodules" -name '*.so*' -exec strip --strip-unneeded {} +

depends="libc6, libgl1, libegl1, libgl1-mesa-dri, libegl-mesa0, libxkbcommon0, libxkbcommon-x11-0, libxcb-cursor0, libxcb-icccm4, libxcb-image0, libxcb-keysyms1, libxcb-randr0, libxcb-render-util0, libxcb-shape0, libxcb-xinerama0, libxcb-xkb1, libx11-xcb1, libfontconfig1, libdbus-1-3, libglib2.0-0, libxrender1, libxi6, libsm6, libice6, libxxf86vm1, libxfixes3, bubblewrap"
if [ "$worker" = bundle ]; then
    # A relocatable venv on Debian's python3.11, rebuilt only when the lock changes.
    env_cache=$out/blender-env
    want=$(sha256sum requirements/blender.lock | cut -c1-16)
    if [ "$(cat "$env_cache/.stamp" 2>/dev/null)" != "$want" ]; then
        [ -x "$base_python" ] || { say "$base_python is missing (apt-get install python3.11)"; exit 3; }
        say "preparing the worker environment from requirements/blender.lock"
        rm -rf "$env_cache"
        "$uv" venv -q --relocatable -p "$base_python" "$env_cache"
        "$uv" pip install -q --link-mode copy --compile-bytecode -p "$env_cache/bin/python" -r requirements/blender.lock
        echo "$want" > "$env_cache/.stamp"
    fi
    cp -al "$env_cache" "$opt/blender-env" 2>/dev/null || cp -a "$env_cache" "$opt/blender-env"
    rm -f "$opt/blender-env/.stamp"
    depends="$depends, python3.11"
fi

cp requirements/blender.lock resources/keypose-studio.png "$opt/share/"
for p in projects/*/; do
    [ -f "$p/studio.db" ] || continue
    name=$(basename "$p")
    mkdir -p "$opt/projects/$name"
    (cd "$p" && find . -type f ! -name 'studio.db-wal' ! -name 'studio.db-shm' ! -path './jobs/*' -print0 \
        | xargs -0 -r cp --parents -t "$opt/projects/$name")
    # the database through SQLite's backup, so writes still in a -wal file are included
    .venv/bin/python -c "import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d); d.execute('PRAGMA journal_mode=DELETE'); d.close()" \
        "$p/studio.db" "$opt/projects/$name/studio.db"
done
if [ -z "$(ls -A "$opt/projects")" ]; then
    say "no example project under projects/ yet: shipping an empty one made with 'studio new'"
    .venv/bin/studio new "$opt/projects/example" --name example >/dev/null
fi
printf 'version %s\nworker %s\nbuilt %s\n' "$version" "$worker" "$(date -u +%FT%TZ)" > "$opt/share/build.txt"

install -m 755 installers/deb/launcher.sh "$stage/usr/bin/keypose-studio"
install -m 644 installers/deb/keypose-studio.desktop "$stage/usr/share/applications/"
install -m 644 resources/keypose-studio.png "$stage/usr/share/icons/hicolor/256x256/apps/"
install -m 755 installers/deb/postinst installers/deb/prerm installers/deb/postrm "$stage/DEBIAN/"
size_kb=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@SIZE_KB@/$size_kb/" -e "s/@DEPENDS@/$depends/" \
    installers/deb/control.in > "$stage/DEBIAN/control"

say "packing $deb ($compress)"
rm -f "$deb"
nice -n 5 dpkg-deb --root-owner-group -Z"$compress" --build "$stage" "$deb" >/dev/null
rm -rf "$stage"   # 2 GB; the .deb holds it all
t2=$(date +%s)
say "built $deb: $(du -h "$deb" | cut -f1) packed, $((size_kb / 1024)) MB installed; freeze $((t1 - t0)) s, package $((t2 - t1)) s"
