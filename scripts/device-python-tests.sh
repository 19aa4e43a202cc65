#!/usr/bin/env bash
# Runs on the device machine: the whole Python test suite (python/tests, 8 processes) under the
# machine's Python 3.12, PyTorch and numpy 2, with the module of build/device-bundle.tar.xz, and
# first, when OLD names another module's tarball (a python/shardpack folder, as device-bundle.sh
# stages it), with that one: how a fix changes the same tests there. Then cuda_feed_test in full.
# Everything into $OUT/device-python-tests.tar.
#   run: bash scripts/device-python-tests.sh [OLD]    (carry: build/device-bundle.tar.xz [and OLD])
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build/device-out}
mkdir -p "$out/logs"
source scripts/device-unpack.sh
python3 -c 'import sys, numpy, torch; print("python", sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__)' |
  tee "$out/logs/versions.txt"
suite() {  # NAME PYTHONPATH
  PYTHONPATH=$2 timeout 150 python3 -m pytest -q -n 8 -p no:cacheprovider -rfs python/tests >"$out/logs/pytest-$1.txt" 2>&1
  echo "pytest with the $1 module: exit $?: $(tail -1 "$out/logs/pytest-$1.txt")"
  grep -E "^(FAILED|ERROR) " "$out/logs/pytest-$1.txt" | cut -c1-160 | sort
}
if (($#)); then
  mkdir -p "$work/old"
  tar -C "$work/old" -xf "$1"
  suite before "$work/old/python:$PWD/python/tests:$PWD/scripts"
fi
suite after "$PYTHONPATH"
"$work/bin/cuda_feed_test" >"$out/logs/cuda_feed_test.txt" 2>&1
echo "cuda_feed_test exit $?: $(grep -E '^\[  (PASSED|FAILED) ' "$out/logs/cuda_feed_test.txt")"
tar -C "$out/logs" -cf "$out/device-python-tests.tar" . && rm -rf "$out/logs"
