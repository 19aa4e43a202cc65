#!/usr/bin/env bash
# Installs what is missing (scripts/install-deps.sh: Debian's packages, and build/venv from the pinned
# requirements.txt, the Python the tests run with), checks the formatting of the sources, builds,
# and runs every test (C++, command line, interop with real servers and the Python ecosystem's own
# libraries, Python package and examples/training/train_classifier.py): once in a Release build
# (with the CUDA feed and the nvJPEG probe where nvcc is), with the installed package and the
# Python package (pip install ., and a wheel repaired by auditwheel) checked from outside; once more under AddressSanitizer + UndefinedBehaviorSanitizer (of the interop tests,
# the two that reach code no unit test does; see below); the pipeline, loader,
# verify and LMDB writer tests once more under ThreadSanitizer. The fuzz targets' corpora (seeds and
# past findings) are replayed under the sanitizers as ctest tests (fuzz_replay_*); fuzzing proper is
# scripts/fuzz.sh (clang's libFuzzer), here only with FUZZ_SECONDS=N (N seconds a target), since
# its own build of everything does not fit CI's 45 minutes on 2 cores. Debug information is line
# tables only (-g1) in the sanitizer builds: their reports keep file and line, the builds are
# faster. Each build has its own folder. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=${JOBS:-2}
# Each stage's heading says when it started, so that a slow CI run shows where its time went.
stage() { echo "== $1 (at ${SECONDS} s)"; }

stage "Formatting (.clang-format)"
scripts/format.sh --check

stage "Release build and tests"
scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release
# The CUDA feed and the nvJPEG probe compile wherever nvcc is: a build that dropped them silently
# would leave a lent GPU nothing to run.
if command -v nvcc >/dev/null; then
  for target in libshardpack_cuda.a nvjpeg_probe; do
    [[ -e build/release/$target ]] || { echo "nvcc is here ($(command -v nvcc)) but build/release/$target was not built"; exit 1; }
  done
  echo "CUDA: shardpack_cuda and nvjpeg_probe built ($(nvcc --version | tail -1); nvJPEG: $(sed -n 's/^SHARDPACK_NVJPEG_LIBRARY:FILEPATH=//p' build/release/CMakeCache.txt))"
fi
ctest --test-dir build/release --output-on-failure -j"$jobs" | tee build/release/ctest.log
# Tests skip (exit 77) when what they need is missing; here, after install-deps.sh, none of these may.
if grep -E "^ *[0-9]+ - (s3_dataset|s3_output|slurm_script|slurm_pack|shared_cache|http_dataset) \(Skipped\)" build/release/ctest.log; then
  echo "a test above skipped although scripts/install-deps.sh installed what it needs"
  exit 1
fi

stage "The peers' benchmark, --quick: every loader and writer of scripts/bench-peers.sh runs here (no speed judged)"
scripts/bench-peers.sh --quick --work build/release/bench-peers

stage "Installed package: examples/embed against cmake --install (find_package and pkg-config)"
scripts/check-install.sh build/release

stage "Python package: pip install . and the repaired wheel (auditwheel) in fresh virtual environments"
scripts/check-python-package.sh build/release

stage "ASan + UBSan build and tests"
# (The Python module is not built here: a sanitized extension cannot load into an unsanitized python.)
# Nor the CUDA feed: nvcc does not take the sanitizer flags (the Release build compiles and tests it).
scripts/build.sh build/asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DSHARDPACK_SANITIZE=ON \
  -DSHARDPACK_BUILD_BENCHMARKS=OFF -DSHARDPACK_BUILD_PYTHON=OFF -DSHARDPACK_CUDA=OFF
# Of the interop tests (Python against real servers and tools; Release runs them all), only two run
# here, for the code only they reach: http_faults (the libcurl client on every failure path) and
# resolution_bound (pack --max-side's decode, resize and re-encode). The others drive code the unit
# tests run under the sanitizers (the S3, HTTP-cache and format paths through their Env and client
# seams; slurm_pack's packs in partition_test; report_browser's stat and thumbnails in verify_test
# and thumbnails_test), and under ASan they took about 150 s of CI's 45 minutes.
# SHARDPACK_TEST_SANITIZED: the resume tests, which run the CLI many times, do fewer runs here
# (kills at 10 spread points, not 40; Ctrl-C on 150 images, not 400); Release runs them all.
SHARDPACK_TEST_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs" -LE interop
SHARDPACK_TEST_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j"$jobs" -R '^(http_faults|resolution_bound)$'

stage "ThreadSanitizer build: pipeline, loader, verify, reader, sampler, LMDB writer, file writer, remote shard store, streaming memory, cache folder, object-store output, mixture, sample writer and shard index cache tests"
tsan_tests=(pack_test convert_test loader_test verify_test dataset_reader_test sampler_test lmdb_dataset_writer_test
  env_posix_test remote_shard_store_test object_store_output_env_test streaming_memory_test cache_folder_test
  mixture_test writer_test shard_index_cache_test)
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  -DSHARDPACK_TSAN=ON -DSHARDPACK_BUILD_BENCHMARKS=OFF -DSHARDPACK_BUILD_PYTHON=OFF -DSHARDPACK_CUDA=OFF >/dev/null
cmake --build build/tsan -j"$jobs" --target "${tsan_tests[@]}" make_image_tree
# $jobs tests at a time (most of them keep one core busy, not both), each one's output kept in
# build/tsan/NAME.log and printed below in the list's order; then the stage fails if one did.
# history_size=7: under load TSan otherwise loses the older stack of a report ("failed to restore
# the stack"), and the suppressions, which match stacks, cannot apply.
export TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1 history_size=7"
tsan_failed=0
printf '%s\n' "${tsan_tests[@]}" |
  xargs -P "$jobs" -I{} sh -c 'build/tsan/tests/{} --gtest_brief=1 >build/tsan/{}.log 2>&1 || { echo "FAILED: {}" >>build/tsan/{}.log; exit 1; }' ||
  tsan_failed=1
for t in "${tsan_tests[@]}"; do
  echo "-- $t"
  cat build/tsan/"$t".log
done
((tsan_failed == 0)) || { echo "ThreadSanitizer: a test failed (above)"; exit 1; }

if ((${FUZZ_SECONDS:-0} > 0)); then
  stage "Fuzz targets, ${FUZZ_SECONDS} s each (libFuzzer)"
  scripts/fuzz.sh --seconds "$FUZZ_SECONDS"
fi
echo "== All stages passed in ${SECONDS} s"
