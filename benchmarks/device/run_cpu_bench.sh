#!/usr/bin/env bash
# torchlet's CPU benchmarks on the lent 16-core device machine, in one command
# (docs/BENCHMARKS.md "On the 16-core device machine"). From the repo root:
#
#     bash benchmarks/device/run_cpu_bench.sh
#
# It prints the machine's facts, builds torchlet in a throwaway venv from the
# wheels carried in .devwheels/ (no network there), checks a + b / sum / mm
# against numpy, then runs the benchmarks at THREADS. Every step is time-boxed
# and the run as a whole stops starting steps at BUDGET_S, so a hang or a slow
# build cannot eat the device lease; a failed step is recorded and the next runs.
# Logs go to $OUT (at most 8 files: the device tool returns no more).
#
# Environment (defaults are the device run's):
#   OUT          log folder (the device tool sets it; default /tmp/devbench-out, outside the tree)
#   PY           the python3 that holds numpy + torch (default python3)
#   WHEELS       folder of the carried wheels: cffi, pycparser, scipy-openblas32, setuptools
#   THREADS      thread counts, comma-separated (default 1,4,16)
#   BIG_THREADS  the thread count whose matmul pass adds mm 4096^3 (default: the last of THREADS; empty: none)
#   BUDGET_S     seconds after which no step starts, and at which a running one is cut (default 400)
#   VENV         the throwaway venv (default /tmp/tlbench-venv; reused when it works)
#   LIMIT_SCALE  multiplies every step's time limit (default 1; the 2-core rehearsal used 10)
set -u -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 2
OUT=${OUT:-/tmp/devbench-out}
PY=${PY:-python3}
WHEELS=${WHEELS:-$ROOT/.devwheels}
THREADS=${THREADS:-1,4,16}
BIG_THREADS=${BIG_THREADS-${THREADS##*,}}
BUDGET_S=${BUDGET_S:-400}
VENV=${VENV:-/tmp/tlbench-venv}
LIMIT_SCALE=${LIMIT_SCALE:-1}
VPY=$VENV/bin/python
mkdir -p "$OUT"
START=$(date +%s)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 PIP_DISABLE_PIP_VERSION_CHECK=1
unset OMP_NUM_THREADS MKL_NUM_THREADS OPENBLAS_NUM_THREADS  # each bench sets its own thread counts

log() { echo "[run_cpu_bench +$(($(date +%s) - START))s] $*" | tee -a "$SUMMARY"; }

# step NAME LIMIT_S LOGFILE CMD...: run CMD under `timeout`, cut to what is left of
# BUDGET_S, output tee'd to $OUT/LOGFILE; records rc and seconds in summary.txt
FAILED=0
step() {
    local name=$1 limit=$(($2 * LIMIT_SCALE)) logf=$OUT/$3 left rc t0
    shift 3
    left=$((START + BUDGET_S - $(date +%s)))
    if ((left < 20)); then
        log "SKIP $name: only ${left}s of the ${BUDGET_S}s budget left"
        FAILED=$((FAILED + 1))
        return 1
    fi
    ((limit > left)) && limit=$left
    log "START $name (limit ${limit}s) -> $(basename "$logf")"
    echo "===== $name: $* (limit ${limit}s)" >>"$logf"
    t0=$(date +%s)
    timeout -k 10 "$limit" "$@" 2>&1 | tee -a "$logf"
    rc=$?
    ((rc == 124 || rc == 137)) && echo "===== $name: TIMED OUT after ${limit}s" | tee -a "$logf"
    log "END   $name rc=$rc in $(($(date +%s) - t0))s"
    ((rc != 0)) && FAILED=$((FAILED + 1))
    return $rc
}

# ---- 1. the machine (facts.txt) -------------------------------------------------
facts() {
    echo "date: $(date -u +%FT%TZ)"
    echo "uname: $(uname -a)"
    echo "nproc: $(nproc)   os.cpu_count: $("$PY" -c 'import os; print(os.cpu_count())' 2>&1)"
    echo "cgroup cpu.max: $(cat /sys/fs/cgroup/cpu.max 2>/dev/null || echo n/a)"
    if command -v lscpu >/dev/null; then
        lscpu | grep -E '^(Model name|Architecture|CPU\(s\)|Thread|Core|Socket|NUMA node|L1d|L2|L3|CPU max MHz|Hypervisor)'
    else
        grep -m1 'model name' /proc/cpuinfo
    fi
    local flags
    flags=$(grep -m1 '^flags' /proc/cpuinfo)
    for f in avx2 fma f16c avx512f avx512bw avx512vl avx512dq avx512_bf16 avx512_fp16 amx_tile; do
        [[ " $flags " == *" $f "* ]] && echo "flag $f: yes" || echo "flag $f: no"
    done
    free -g 2>/dev/null | head -2
    echo "python3: $(command -v "$PY") -> $("$PY" -c 'import sys; print(sys.version.split()[0], sys.prefix, "(base " + sys.base_prefix + ")")' 2>&1)"
    "$PY" - <<'EOF' 2>&1
import sysconfig, importlib
for m in ("numpy", "torch", "pip", "setuptools", "cffi", "pycparser", "scipy_openblas32", "yaml", "jinja2", "pytest"):
    try:
        print(f"{m}: {getattr(importlib.import_module(m), '__version__', 'present')}")
    except Exception as e:  # missing ones are carried as wheels
        print(f"{m}: MISSING ({type(e).__name__})")
print("sysconfig CC:", sysconfig.get_config_var("CC"), "| LDSHARED:", sysconfig.get_config_var("LDSHARED"))
print("Python.h dir:", sysconfig.get_paths()["include"])
EOF
    echo "carried wheels ($WHEELS):"
    ls -l "$WHEELS" 2>&1
    echo "gcc:"
    gcc --version 2>&1 | head -1
}
log "torchlet CPU bench on $(uname -n): THREADS=$THREADS BIG_THREADS=$BIG_THREADS BUDGET_S=$BUDGET_S OUT=$OUT"
facts 2>&1 | tee "$OUT/facts.txt"
if ! command -v gcc >/dev/null; then
    log "FATAL: no gcc on this machine: torchlet's C runtime and kernels cannot be built here; stopping"
    exit 3
fi
if ! "$PY" -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
    log "FATAL: $PY has no Python.h (no python3-dev): the cffi extension cannot be built here; stopping"
    exit 3
fi
export CC=gcc
# the link step uses sysconfig's LDSHARED; when its compiler is absent here, link with gcc
LDCMD=$("$PY" -c 'import sysconfig; print((sysconfig.get_config_var("LDSHARED") or "gcc").split()[0])')
command -v "$LDCMD" >/dev/null || export LDSHARED="gcc -shared"

# ---- 2. the venv and the build (build.log) ---------------------------------------
# python3 there is itself a venv (/opt/torch/.venv): a venv made from it sees only
# the BASE interpreter's site-packages, so a .pth adds python3's own (numpy, torch,
# pip); the carried wheels go into the new venv and come first on sys.path.
make_venv() {
    set -e
    if [ -x "$VPY" ] && "$VPY" -c 'import cffi, scipy_openblas32' 2>/dev/null; then
        echo "reusing $VENV"
        return 0
    fi
    rm -rf "$VENV"
    "$PY" -m venv --without-pip --system-site-packages "$VENV"
    local site
    site=$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    "$PY" -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
        >"$site/_outer_python3.pth"
    echo "venv $VENV: $site/_outer_python3.pth ->"; cat "$site/_outer_python3.pth"
    "$VPY" -m pip --version || { "$VPY" -m ensurepip --default-pip && "$VPY" -m pip --version; }
    # the carried versions even where the base interpreter has some (--ignore-installed);
    # setuptools only when the one there is older than pyproject.toml's >=74
    "$VPY" -m pip install -q --no-index --no-cache-dir --no-deps --ignore-installed --find-links "$WHEELS" \
        cffi pycparser scipy-openblas32
    "$VPY" -m pip install -q --no-index --no-cache-dir --no-deps --find-links "$WHEELS" "setuptools>=74"
    "$VPY" -m pip list 2>/dev/null | grep -iE '^(cffi|pycparser|scipy-openblas32|setuptools|numpy|torch) ' || true
    "$VPY" -c 'import cffi, scipy_openblas32, numpy, setuptools; print("venv OK: cffi from", cffi.__file__)'
}
build() {
    set -e
    echo "compiling with $(nproc) jobs (setup.py: one per core)"
    # `time`: its user+sys over the real time is how many cores the compile kept busy
    time "$VPY" -m pip install --no-index --no-build-isolation --no-deps -e .
    "$VPY" -c 'import torchlet as tl; print("built: torchlet", tl.get_cpu_capability())'
}
export -f make_venv build
export VENV VPY PY WHEELS
# the steps run in `bash -c` (timeout needs a program, not a function)
if ! step venv 90 build.log bash -c make_venv; then
    log "FATAL: no venv with the carried wheels; see build.log"
    exit 4
fi
if ! step build 240 build.log bash -c build; then
    log "FATAL: torchlet did not build; see build.log"
    exit 5
fi

# ---- 3. smoke test (smoke.log) ---------------------------------------------------
export TORCHLET_BENCH_THREADS=$THREADS
step smoke 60 smoke.log "$VPY" benchmarks/device/smoke.py || log "smoke test FAILED: benchmarking anyway (see smoke.log)"

# ---- 4. the benchmarks, most important first --------------------------------------
# one log per bench file; the thread counts come from TORCHLET_BENCH_THREADS
# (the 2-core rehearsal, loaded, 2 thread counts: 125, 29, 23, 64 s)
step elementwise 150 elementwise.log "$VPY" benchmarks/bench_elementwise.py
step reductions 75 reductions.log "$VPY" benchmarks/bench_reductions.py --quick
step softmax+seeds 90 seed.log "$VPY" benchmarks/bench_seed.py
# matmul: BIG_THREADS runs every row plus mm 4096^3 (--big), the other counts without it
MM_THREADS=$(tr ',' '\n' <<<"$THREADS" | grep -vx "${BIG_THREADS:-none}" | paste -sd, -)
[[ -n $MM_THREADS ]] &&
    step matmul 90 matmul.log "$VPY" benchmarks/bench_matmul.py --rounds 3 --threads "$MM_THREADS"
[[ -n $BIG_THREADS ]] &&
    step "matmul --big ($BIG_THREADS threads)" 60 matmul.log "$VPY" benchmarks/bench_matmul.py --big --rounds 3 \
        --threads "$BIG_THREADS"

log "DONE: $FAILED step(s) failed or skipped; total $(($(date +%s) - START))s"
exit $((FAILED > 0))
