#!/usr/bin/env bash
# One GPU session's checks of the GPU backend, as one command that fits a lent machine's limits
# (a machine that starts bare, no network, ten minutes a command, a few small files back):
#
#   bash benchmarks/gpu_prebuild.sh                         # here first (optional): the wheel, into .gpu-wheel
#   bash benchmarks/gpu_session.sh                          # on the GPU machine, from the repository's root
#                                                           # (run(..., carry=[".gpu-wheel"]) to use the wheel)
#   STAGES="k6 bench" SKIP_BUILD=1 bash benchmarks/gpu_session.sh
#                                                           # the next command on the same warm machine:
#                                                           # K = 6 resumes from its checkpoint
#
# Stages (STAGES, default "build tests k6 bench"; build runs first whatever STAGES says unless
# SKIP_BUILD is set), each with its own time limit, all inside BUDGET
# seconds (default 570); a stage that fails does not stop the next. Everything goes to $OUT
# (default ./gpu-session) in a few small files:
#   session.log   every stage's output, with its exit code and seconds
#   k6.log, k6.json  six pieces solved on the device over its stored graph (73 GiB: an H200), stopped
#                 by SIGINT at the stage's limit (a checkpoint in /tmp/k6 that the same command
#                 resumes); once solved: sweeps, seconds, the start's value and each roll's best
#                 action, SHA-256 of the values
#   k6-opening.npz   the opening file of the K = 6 table (positions within 5 turns; about 100 kB)
#   k7.log, k7.json, k7-opening.npz  (stage k7) the same for seven pieces, their graph stored on the
#                 device for the ranks that fit (STAGES=k7, then STAGES=k7 SKIP_BUILD=1 again on the
#                 same warm machine until it is solved: each command resumes from /tmp/k7)
#   (stage k7kept) the same, but the solve runs in a session of its own that outlives the command
#                 (STAGES=k7kept, then STAGES=k7kept SKIP_BUILD=1 at once, until it is solved: each
#                 command waits on the one solve and passes its log on; nothing is stopped or resumed)
#   bench.jsonl   benchmarks/bench_ur_gpu.py: states/s of a full sweep (regenerating, and over the
#                 stored graph where it fits) and of a policy sweep, against one CPU thread of the
#                 same machine, peak device memory, for BENCH_PIECES (default 5 4)
#   k4.json       (stage k4) four pieces solved on the GPU and on the CPU side by side
#   k5.log        (stage k5) five pieces solved on the GPU (the CPU's start value: +0.146072)
#   walk.jsonl    (stage walk) WALK_PIECES (default 5) solved twice: the walk as before (every
#                 discounted stage to tolerance / 10, hot sets found on the host) and as now
#   flip.jsonl    (stage flip) WALK_PIECES solved twice: without the walk's damped sweeps and with
#                 them (the default)
#   gpu-mem.csv   the device memory in use, sampled every half second
# build: the wheel that benchmarks/gpu_prebuild.sh made beforehand where it fits (carry .gpu-wheel;
# a few seconds), else compiled there without build isolation (the machine has Cython and numpy
# but no network; about 140 s with 16 jobs); tests: the GPU
# tests of the stored graph, of the device generator and K = 3 solved on the device (over its
# stored graph) against the CPU (tests/test_ur_gpu.py).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-gpu-session}
mkdir -p "$OUT"
T0=$(date +%s)
END=$((T0 + ${BUDGET:-570}))
LOG="$OUT/session.log"
export PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
say() { echo "$*" | tee -a "$LOG"; }
left() { echo $((END - $(date +%s))); }

# stage NAME CAP FILE CMD...: run CMD for at most CAP seconds (less if the budget ends sooner),
# its output to FILE, and say how it ended
stage() {
    local name=$1 cap=$2 file=$3
    shift 3
    local l t s rc
    l=$(left)
    t=$((cap < l - 5 ? cap : l - 5))
    if [ "$t" -lt 15 ]; then
        say "== $name: skipped, ${l}s of the budget left"
        return 0
    fi
    say "== $name (limit ${t}s) at $(($(date +%s) - T0))s"
    s=$(date +%s)
    timeout -s INT -k 15 "$t" "$@" >> "$file" 2>&1
    rc=$?
    STAGE_RC=$rc
    say "== $name: rc=$rc in $(($(date +%s) - s))s"
    [ "$file" = "$LOG" ] || tail -n 20 "$file" | tee -a "$LOG"
    return 0
}

nvidia-smi --query-gpu=timestamp,memory.used --format=csv,noheader -lms 500 > "$OUT/gpu-mem.csv" 2>/dev/null &
SMI=$!
trap 'kill $SMI 2>/dev/null' EXIT

say "== machine: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1), $(nproc) cores"
say "== $($PY --version 2>&1); numba-cuda $($PY -c 'import numba_cuda; print(numba_cuda.__version__)' 2>&1 | tail -n 1)"

STAGES=" ${STAGES:-build tests k6 bench} "
want() { [[ "$STAGES" == *" $1 "* ]]; }
# the wheel built beforehand on the developer's machine (benchmarks/gpu_prebuild.sh; carried as
# .gpu-wheel), when it was built from these very sources for this Python and its modules import
# here; else the package is compiled here
prebuilt() {
    local whl
    whl=$(ls .gpu-wheel/gamesolver-*-cp312-cp312-*.whl 2>/dev/null | head -n 1)
    [ -n "$whl" ] || { echo "no prebuilt wheel in .gpu-wheel"; return 1; }
    [ "$($PY benchmarks/source_digest.py)" = "$(cat .gpu-wheel/SOURCES 2>/dev/null)" ] \
        || { echo "the prebuilt wheel is of other sources"; return 1; }
    $PY -m pip install -q --no-index --no-deps --force-reinstall "$whl" || return 1
    (cd /tmp && $PY -c 'import gamesolver.solver.stochastic._engine, gamesolver.games.ur._fort; print("prebuilt wheel imports")')
}
export -f prebuilt
# every other stage needs the package, so it is installed unless SKIP_BUILD is set, whether STAGES
# names build or not (STAGES=k7 alone on a bare machine would otherwise run nothing but errors)
if [ -z "${SKIP_BUILD:-}" ]; then
    STAGE_RC=1
    [ -d .gpu-wheel ] && stage wheel 60 "$LOG" bash -c prebuilt
    [ "$STAGE_RC" = 0 ] || stage build 200 "$LOG" env SOLVER_BUILD_JOBS=16 $PY -m pip install -q --no-build-isolation --no-deps -e .
fi
# -o addopts: in one process (the lent machine may not have pytest-xdist, which pyproject's -n needs,
# and its GPU tests share one device)
want tests && stage gpu-tests 150 "$LOG" $PY -m pytest tests/test_ur_gpu.py -q -p no:cacheprovider -o addopts=-ra -m "not slow" \
    -k "stored_graph_on_the_gpu or generator_on_the_gpu or gpu_solve_equals" --durations=8

k4() {
    local args=(-m gamesolver.solver ur solve --pieces "$K4" --tolerance 1e-5 --json)
    rm -rf /tmp/cpu4 /tmp/gpu4
    $PY "${args[@]}" --threads 8 --out /tmp/cpu4 > /tmp/cpu4.json 2> /tmp/cpu4.err &
    local cpu=$! s rc
    s=$(date +%s)
    $PY "${args[@]}" --backend "$BACKEND" --out /tmp/gpu4 > /tmp/gpu4.json 2> /tmp/gpu4.err
    rc=$?
    echo "$BACKEND solve: rc=$rc in $(($(date +%s) - s)) s (wall, compiling included)"
    tail -n 4 /tmp/gpu4.err
    wait $cpu
    echo "cpu solve: rc=$? ($(tail -n 1 /tmp/cpu4.err))"
    $PY - <<'EOF'
import json
import numpy as np
cpu = np.load("/tmp/cpu4/value.npy", mmap_mode="r")
gpu = np.load("/tmp/gpu4/value.npy", mmap_mode="r")
d = np.abs(cpu.astype(np.float64) - gpu)
out = {"states": int(cpu.size), "max_abs_diff": float(d.max()), "argmax": int(d.argmax()),
       "over_1e-5": int((d > 1e-5).sum()), "over_1e-4": int((d > 1e-4).sum()),
       "certified_start_interval_cpu_k4": [0.0604604, 0.0604614]}
for side in ("cpu", "gpu"):
    out[side] = json.load(open(f"/tmp/{side}4.json"))
print(json.dumps(out))
EOF
}
export PY K4=${K4:-4} BACKEND=${BACKEND:-gpu}
export -f k4
want k4 && stage k4 120 "$OUT/k4.json" bash -c k4
# the walk's early aim and the hot sets found on the device against the walk before them, on the
# same machine one after the other (benchmarks/bench_walk_stages.py)
want walk && stage walk 240 "$OUT/walk.jsonl" $PY benchmarks/bench_walk_stages.py --pieces "${WALK_PIECES:-5}" \
    --aims 0/host 1e-4/device --backend gpu --json
# the walk with and without its damped sweeps (a value that flips sign: docs/design/walk.md, "A value that
# flips sign every sweep"), one after the other: whether a GPU launch's all-at-once updates make
# such flips, and what damping them saves there
want flip && stage flip 240 "$OUT/flip.jsonl" $PY benchmarks/bench_walk_stages.py --pieces "${WALK_PIECES:-5}" \
    --aims 1e-4/device --flip-rounds 0 3 --backend gpu --json
want k5 && stage k5 300 "$OUT/k5.log" $PY -m gamesolver.solver ur solve --pieces 5 --tolerance 1e-5 --backend gpu \
    --out /tmp/gpu5 --json

solved() {
    # solved K GRAPH NAME: the solve (it resumes from /tmp/NAME's checkpoint), then, once the table is
    # written, its figures and opening file
    local k=$1 graph=$2 name=$3
    $PY -m gamesolver.solver ur solve --pieces "$k" --tolerance 1e-5 --backend "$BACKEND" --graph "$graph" \
        --out "/tmp/$name" --json > "/tmp/$name.json" || return $?
    report "$k" "$name"
}
# report K NAME: a solved table's figures and opening file, from /tmp/NAME and the solve's JSON
report() {
    local k=$1 name=$2
    cat "/tmp/$name.json"
    $PY -m gamesolver.solver ur opening build --pieces "$k" --turns 5 --table "/tmp/$name" --out "$OUT/$name-opening.npz"
    $PY benchmarks/table_report.py "/tmp/$name" "$k" "/tmp/$name.json" "$OUT/$name.json"
}
k6() { solved "$K6" store k6; }
# seven pieces: their graph (about 204 GiB) fits no GPU, so auto stores it for the ranks below an
# edge (about half on an H200) and the rest regenerate; a round about 7 s there (projected), the
# solve some 16-19 minutes: two or three commands on one warm machine, each resuming
k7() { solved "$K7" auto k7; }
# kept K GRAPH NAME: the same solve in a process of its own session (setsid), which the lent machine
# lets run on after the command that started it returns, for as long as the machine stays warm
# (30 s between calls at most): it is never stopped at a command's limit and never resumed, so it
# compiles its kernels and builds its graph once (for seven pieces on an H200 some 20 s and
# projected 30-60 s, each time a stopped solve resumes). Each command that runs this stage starts
# the solve if it is not running yet (resuming from /tmp/NAME's checkpoint, if any), passes its new
# log lines on while it waits, and once it has ended writes the figures and the opening file.
kept() {
    local k=$1 graph=$2 name=$3 seen=0 n pid
    if [ ! -e "/tmp/$name.rc" ] && ! { [ -s "/tmp/$name.pid" ] && kill -0 "$(cat "/tmp/$name.pid")" 2>/dev/null; }; then
        echo "starting the solve in its own session"
        setsid bash -c 'echo $$ > "/tmp/$3.pid"; exec 3>"/tmp/$3.err"
            "$PY" -m gamesolver.solver ur solve --pieces "$1" --tolerance 1e-5 --backend "$BACKEND" --graph "$2" \
                --out "/tmp/$3" --json > "/tmp/$3.json" 2>&3
            echo $? > "/tmp/$3.rc"' kept "$k" "$graph" "$name" < /dev/null > /dev/null 2>&1 &
        for _ in $(seq 50); do [ -s "/tmp/$name.pid" ] && break; sleep 0.1; done
    else
        echo "the solve runs (or ran) already: $(cat "/tmp/$name.pid" 2>/dev/null)"
    fi
    pid=$(cat "/tmp/$name.pid" 2>/dev/null)
    # the solve's log lines not passed on yet
    news() {
        n=$(wc -l < "/tmp/$name.err" 2>/dev/null || echo 0)
        [ "$n" -gt "$seen" ] && sed -n "$((seen + 1)),${n}p" "/tmp/$name.err" && seen=$n
        return 0
    }
    while [ ! -e "/tmp/$name.rc" ] && kill -0 "$pid" 2>/dev/null; do
        news
        sleep 2
    done
    sleep 1
    news
    [ -e "/tmp/$name.rc" ] || { echo "the solve ended without an exit code"; return 1; }
    echo "solve: rc=$(cat "/tmp/$name.rc")"
    [ "$(cat "/tmp/$name.rc")" = 0 ] || return 1
    report "$k" "$name"
}
# k7kept: seven pieces so (STAGES=k7kept, then STAGES=k7kept SKIP_BUILD=1 at once on the warm machine,
# as often as needed; each command may end at its limit while the solve goes on)
k7kept() { kept "$K7" auto k7; }
# K6, K7 and BACKEND let the stages be tried without a GPU: STAGES=k6 K6=3 BACKEND=cpu
export OUT PY BACKEND K6=${K6:-6} K7=${K7:-7}
export -f solved report kept k6 k7 k7kept
# K = 6 takes what the budget has left but a minute (the bench after it, if any time is left)
want k6 && stage k6 $(( $(left) - 60 )) "$OUT/k6.log" bash -c k6
want k7 && stage k7 $(( $(left) - 30 )) "$OUT/k7.log" bash -c k7
want k7kept && stage k7kept $(( $(left) - 30 )) "$OUT/k7.log" bash -c k7kept
want bench && stage bench 600 "$OUT/bench.jsonl" $PY benchmarks/bench_ur_gpu.py --pieces ${BENCH_PIECES:-5 4} \
    --repeats 2 --json
say "== peak device memory in use (MiB): $(cut -d, -f2 "$OUT/gpu-mem.csv" | tr -dc '0-9\n' | sort -n | tail -n 1)"
say "== done at $(($(date +%s) - T0))s"
