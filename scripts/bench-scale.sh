#!/usr/bin/env bash
# A billion samples (issue 39): what opening a dataset costs as it grows from 1M to 1B samples.
# Makes one real WebDataset shard of K tiny JPEGs, then datasets of S shards of it (hard links and
# a manifest that lists them: tests/support/make_scaled_dataset), and measures, each in a fresh
# process (scripts/bench_scale_probe.py): the time from shardpack.Loader(...) to the first batch and
# the resident memory above the interpreter (RssAnon, what one rank holds; RssFile, mapped pages
# the ranks of a node share), for the global shuffle and the streaming shuffle, and the same for
# shardpack.open(ds)[i] at 1,000 random i; `shardpack stat`'s time and peak memory for the
# smaller datasets (stat reads every sample table: --stat-max S bounds which are measured); and,
# unless --no-http, the same over HTTP from nginx on 127.0.0.1 (scripts/nginx-serve.sh), without a
# cache folder (the streaming shuffle streams shards; the global shuffle and the random samples read
# by range requests), and the global shuffle into a fresh cache folder for datasets of at most
# --cached-max shards (it downloads the shards of the first batch whole: 256 x 48 MB at 1B), with
# the requests nginx saw before the first shard's bytes and in all. Prints a table and the growth
# from the smallest S to the largest.
#
#   scripts/bench-scale.sh [--shards "100 1000 10000 100000"] [--samples K] [--stat-max S] [--no-http]
#                          [--cached-max S] [--work DIR] [--bin DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
shards="100 1000 10000 100000" samples=10000 stat_max=1000 cached_max=1000 work=build/bench-scale bin= http=1
while (($#)); do
  case $1 in
    --shards) shards=$2; shift 2 ;;
    --samples) samples=$2; shift 2 ;;
    --stat-max) stat_max=$2; shift 2 ;;
    --no-http) http=0; shift ;;
    --cached-max) cached_max=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--shards \"S ...\"] [--samples K] [--stat-max S] [--no-http] [--cached-max S] [--work DIR] [--bin DIR]" >&2
       exit 2 ;;
  esac
done
scripts/install-deps.sh
if [[ -z $bin ]]; then
  scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release
  bin=build/release
fi
mkdir -p "$work"
work=$(realpath "$work")
one=$work/one-$samples
if [[ ! -f $one/manifest.json ]]; then
  rm -rf "$work/tree-$samples" "$one"
  "$bin/tests/make_image_tree" "$work/tree-$samples" --classes 10 --images "$samples" --small --png-every 0 --jobs 2
  "$bin/shardpack" pack "$work/tree-$samples" "$one" --samples-per-shard "$samples" --shard-size 100GB -q >/dev/null
fi
export PYTHONPATH=$bin/python
printf '%-9s %-14s %-10s %10s %12s %12s\n' shards samples what seconds "RssAnon MB" "RssFile MB"
declare -A first_s first_m last_s last_m
for s in $shards; do
  ds=$work/ds-$samples-x$s
  [[ -f $ds/manifest.json ]] || { rm -rf "$ds"; "$bin/tests/make_scaled_dataset" "$one" "$ds" --shards "$s"; }
  for mode in global streaming random; do
    line=$("$py" scripts/bench_scale_probe.py "$ds" "$mode")
    read -r sec anon file <<<"$("$py" -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["seconds"], d["rss_anon"]/1e6, d["rss_file"]/1e6)' "$line")"
    printf '%-9s %-14s %-10s %10.2f %12.1f %12.1f\n' "$s" "$((s * samples))" "$mode" "$sec" "$anon" "$file"
    [[ -n ${first_s[$mode]:-} ]] || { first_s[$mode]=$sec; first_m[$mode]=$anon; }
    last_s[$mode]=$sec last_m[$mode]=$anon
  done
  if ((s <= stat_max)); then
    /usr/bin/time -f '%e %M' -o "$work/stat.time" "$bin/shardpack" stat "$ds" >/dev/null
    read -r sec kb <"$work/stat.time"
    printf '%-9s %-14s %-10s %10.2f %12.1f %12s\n' "$s" "$((s * samples))" "stat" "$sec" "$((kb / 1000))" "(peak RSS)"
  fi
done
# print_growth FIRST_S FIRST_M LAST_S LAST_M MODE...: for each mode, the time and RssAnon of the
# largest dataset less the smallest's (the four arrays by name, keyed by mode).
print_growth() {
  local -n fs=$1 fm=$2 ls=$3 lm=$4
  shift 4
  for mode in "$@"; do
    printf '  %-10s time %+.2f s, RssAnon %+.1f MB\n' "$mode" \
      "$("$py" -c "print(${ls[$mode]} - ${fs[$mode]})")" \
      "$("$py" -c "print(${lm[$mode]} - ${fm[$mode]})")"
  done
}
if ((http)); then
  # shellcheck source=scripts/nginx-serve.sh
  source scripts/nginx-serve.sh
  NGINX_ACCESS_LOG=$work/access.log
  export NGINX_ACCESS_LOG
  : >"$NGINX_ACCESS_LOG"
  trap 'stop_nginx; rm -rf "$work/http-cache"' EXIT
  start_nginx "$work"
  echo
  printf '%-9s %-14s %-22s %10s %12s %16s\n' shards samples "over HTTP" seconds "RssAnon MB" "requests before"
  declare -A http_first_s http_first_m http_last_s http_last_m
  for s in $shards; do
    for mode in streaming global random global-cached; do
      [[ $mode == global-cached ]] && ((s > cached_max)) && continue
      : >"$NGINX_ACCESS_LOG"
      rm -rf "$work/http-cache"
      cache=()
      [[ $mode == global-cached ]] && cache=(SHARDPACK_CACHE="$work/http-cache")
      line=$(env -u SHARDPACK_CACHE "${cache[@]}" "$py" scripts/bench_scale_probe.py \
        "$url/ds-$samples-x$s" "${mode%-cached}")
      read -r sec anon <<<"$("$py" -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["seconds"], d["rss_anon"]/1e6)' "$line")"
      before=$(grep -c 'GET ' "$NGINX_ACCESS_LOG" || true)
      first=$(grep -m1 -n '\.tar ' "$NGINX_ACCESS_LOG" | cut -d: -f1 || true)
      printf '%-9s %-14s %-22s %10.2f %12.1f %16s\n' "$s" "$((s * samples))" "$mode" "$sec" "$anon" \
        "$((${first:-1} - 1)) (of $before)"
      [[ -z ${http_first_s[$mode]:-} ]] && http_first_s[$mode]=$sec http_first_m[$mode]=$anon
      http_last_s[$mode]=$sec http_last_m[$mode]=$anon
    done
  done
  echo
  echo "growth from the smallest to the largest dataset (over HTTP):"
  print_growth http_first_s http_first_m http_last_s http_last_m streaming global random
fi
echo
echo "growth from the smallest to the largest dataset (local):"
print_growth first_s first_m last_s last_m global streaming random
