#!/usr/bin/env bash
# The report page at scale (issue 43): `shardpack report` of 1,000 classes in 100,000 shards (the
# billion-samples benchmark's hard-linked dataset: one real shard of K tiny JPEGs, linked S times by
# tests/support/make_scaled_dataset, here with 1,000 classes), then the page opened in headless
# Chromium: its size, the time the report took, and the time to render, measured three ways: the
# browser process from start to the dumped DOM (wall), the same for an empty page (the baseline: the
# browser's own start), and the page's own drawing time (data-render-ms). Acceptance: under 3 s and
# under 5 MB. With --medium, first the benchmarks' medium tree (20,000 camera-like JPEGs, 100
# classes) packed as wds, its report (verified) opened in Chromium and checked as the browser test
# checks its small trees (tests/interop/report_browser_test.py --dataset).
#
#   scripts/bench-report.sh [--medium] [--shards S] [--samples K] [--work DIR] [--bin DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
shards=100000 samples=10000 work=build/bench-report bin='' medium=0
while (($#)); do
  case $1 in
    --medium) medium=1; shift ;;
    --shards) shards=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--medium] [--shards S] [--samples K] [--work DIR] [--bin DIR]" >&2; exit 2 ;;
  esac
done
scripts/install-deps.sh
if [[ -z $bin ]]; then
  scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release
  bin=build/release
fi
mkdir -p "$work"
work=$(realpath "$work")
if ((medium)); then
  scripts/bench-tree.sh "$bin" "$work/medium-src" --classes 100 --images 20000 --png-every 0 --noise 46
  [[ -f $work/medium/manifest.json ]] || "$bin/shardpack" pack "$work/medium-src" "$work/medium" --no-sync -q >/dev/null
  start=$(date +%s.%N)
  "$py" tests/interop/report_browser_test.py "$bin/shardpack" "$bin/tests/make_image_tree" \
    "$work/medium-check" --dataset "$work/medium"
  echo "medium tree: report and its checks took $("$py" -c "print(f'{$(date +%s.%N) - $start:.1f}')") s;" \
    "page $(stat -c %s "$work/medium-check/medium.html") bytes"
fi
one=$work/one-1000-$samples
if [[ ! -f $one/manifest.json ]]; then
  rm -rf "$work/tree" "$one"
  "$bin/tests/make_image_tree" "$work/tree" --classes 1000 --images "$samples" --small --png-every 0 --jobs 2 >/dev/null
  "$bin/shardpack" pack "$work/tree" "$one" --samples-per-shard "$samples" --shard-size 100GB -q >/dev/null
fi
ds=$work/ds-1000-$samples-x$shards
[[ -f $ds/manifest.json ]] || { rm -rf "$ds"; "$bin/tests/make_scaled_dataset" "$one" "$ds" --shards "$shards"; }

start=$(date +%s.%N)
"$bin/shardpack" report "$ds" -o "$work/report.html" >/dev/null 2>"$work/report.err"
report_s=$("$py" -c "print(f'{$(date +%s.%N) - $start:.1f}')")
printf '<!DOCTYPE html><html><body><p>empty</p></body></html>\n' >"$work/empty.html"

# render PAGE: "WALL_SECONDS RENDER_MS" of one headless Chromium run that dumps the DOM.
render() {
  local t0 t1 dom
  t0=$(date +%s.%N)
  dom=$(timeout 120 chromium-headless-shell --no-sandbox --disable-gpu --user-data-dir="$work/profile" --dump-dom \
    "file://$1" 2>/dev/null)
  t1=$(date +%s.%N)
  local ms
  ms=$(grep -o 'data-render-ms="[0-9.]*"' <<<"$dom" | grep -o '[0-9.]*' || echo -)
  grep -q 'data-rendered="ok"' <<<"$dom" || [[ $1 == *empty.html ]] || { echo "not rendered: $1" >&2; exit 1; }
  echo "$("$py" -c "print(f'{$t1 - $t0:.2f}')") $ms"
}
echo "dataset: $((shards * samples)) samples, 1000 classes, $shards shards; report took $report_s s"
echo "page: $(stat -c %s "$work/report.html") bytes"
printf '%-6s %12s %12s %14s\n' run "page wall s" "empty wall s" "drawing ms"
for i in 1 2 3; do
  read -r page_s ms <<<"$(render "$work/report.html")"
  read -r empty_s _ <<<"$(render "$work/empty.html")"
  printf '%-6s %12s %12s %14s\n' "$i" "$page_s" "$empty_s" "$ms"
done
