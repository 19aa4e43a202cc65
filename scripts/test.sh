#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: once in a Release build, once more under
# AddressSanitizer + UndefinedBehaviorSanitizer. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=${JOBS:-2}

echo "== Release build and tests"
scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release
ctest --test-dir build/release --output-on-failure -j"$jobs"

echo "== ASan + UBSan build and tests"
scripts/build.sh build/asan -DCMAKE_BUILD_TYPE=Debug -DSHARDPACK_SANITIZE=ON -DSHARDPACK_BUILD_BENCHMARKS=OFF
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs"
