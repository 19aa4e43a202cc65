#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, Debian's clang) and runs each for a while on a copy of
# its seed corpus: tests/fuzz/corpus/<target>. A crash, a leak, a hang (-timeout) or an allocation
# over -malloc_limit_mb (a header claiming terabytes) is a finding: the script stops with exit 1 and
# leaves the input in build/fuzz-work/findings/. Fix it, then copy the input into the target's
# corpus folder as a regression case.
#   scripts/fuzz.sh [--seconds N] [TARGET ...]      (default: 60 s each, every target)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
targets=()
while (($#)); do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if ((${#targets[@]} == 0)); then
  mapfile -t targets <tests/fuzz/targets.txt  # the one list, which tests/fuzz/CMakeLists.txt reads too
fi

bash scripts/install-deps.sh
if [[ ! -f build/fuzz/CMakeCache.txt ]]; then
  CC=clang CXX=clang++ cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHARDPACK_FUZZ=ON \
    -DSHARDPACK_BUILD_TESTS=OFF -DSHARDPACK_BUILD_BENCHMARKS=OFF -DSHARDPACK_BUILD_PYTHON=OFF -DSHARDPACK_CUDA=OFF >/dev/null
fi
cmake --build build/fuzz --target fuzz_all -j "$(nproc)"

work=build/fuzz-work
mkdir -p "$work/findings"
failed=0
for t in "${targets[@]}"; do
  rm -rf "$work/corpus/$t"
  mkdir -p "$work/corpus/$t"
  cp tests/fuzz/corpus/"$t"/* "$work/corpus/$t/"
  echo "fuzz: $t for ${seconds}s"
  if ! build/fuzz/tests/fuzz/"$t" "$work/corpus/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/findings/$t-" \
      >"$work/$t.log" 2>&1; then
    echo "fuzz: $t FOUND A PROBLEM (log: $work/$t.log, input: $work/findings/)"
    tail -40 "$work/$t.log"
    failed=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$t.log" | tr '\n' ' '
    echo
  fi
done
exit $failed
