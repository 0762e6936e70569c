#!/usr/bin/env bash
# Build, on this machine, the wheel that a GPU session installs instead of compiling the Cython
# kernels on the lent machine (about 140 s of its 15 minutes): CPython 3.12, the lent machines'
# Python, into .gpu-wheel/ (ignored by git; name it in the run's carry), with the digest of the
# sources it was built from (benchmarks/source_digest.py). benchmarks/gpu_session.sh installs it
# only when that digest matches the sources that travelled and the wheel's modules import there;
# otherwise it builds as before.
#
#   PY312=python3.12 bash benchmarks/gpu_prebuild.sh        # here, after the last commit
#   run(command="bash benchmarks/gpu_session.sh", carry=[".gpu-wheel"], kind="nvidia-h200")
set -euo pipefail
cd "$(dirname "$0")/.."
PY312=${PY312:-python3.12}
"$PY312" -c 'import sys; assert sys.version_info[:2] == (3, 12), sys.version' \
    || { echo "gpu_prebuild: $PY312 is not CPython 3.12 (set PY312)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SOLVER_BUILD_JOBS=${SOLVER_BUILD_JOBS:-2} "$PY312" -m pip wheel -q --no-deps -w "$tmp" .
rm -rf .gpu-wheel
mkdir .gpu-wheel
mv "$tmp"/gamesolver-*.whl .gpu-wheel/
python3 benchmarks/source_digest.py > .gpu-wheel/SOURCES
ls -l .gpu-wheel
