#!/usr/bin/env bash
# The training loader over HTTP against the same datasets on local disk, measured in the same run:
# nginx on 127.0.0.1 (loopback) serves the datasets that scripts/bench-read.sh packed (it runs this
# at its end). JPEG WebDataset with random-resized-crop 224 on 2 threads: images/s from a cold
# cache (the download is part of opening) and from a warm one, against local; raw shards (no
# decode): MB/s the same way. Every figure includes opening the dataset; medians of R runs; peak
# RSS of each.
#
#   scripts/bench-remote.sh [--work DIR] [--runs R] [--bin DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
work=build/bench runs=3 bin=build/release
while (($#)); do
  case $1 in
    --work) work=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--work DIR] [--runs R] [--bin DIR]" >&2; exit 2 ;;
  esac
done
work=$(realpath "$work")
for d in read-wds read-raw; do
  [[ -f $work/$d/manifest.json ]] || { echo "no $work/$d: run scripts/bench-read.sh first" >&2; exit 1; }
done

port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nginx_dir=$(mktemp -d /tmp/shardpack-nginx.XXXXXX)
chmod 755 "$nginx_dir" "$work"
cat >"$nginx_dir/nginx.conf" <<CONF
daemon off;
worker_processes 2;
pid $nginx_dir/nginx.pid;
error_log $nginx_dir/error.log;
$( ((EUID == 0)) && echo "user root;")
events { worker_connections 256; }
http {
  access_log off;
  sendfile on;
  client_body_temp_path $nginx_dir/body;
  proxy_temp_path $nginx_dir/proxy;
  fastcgi_temp_path $nginx_dir/fastcgi;
  uwsgi_temp_path $nginx_dir/uwsgi;
  scgi_temp_path $nginx_dir/scgi;
  server { listen 127.0.0.1:$port; root $work; }
}
CONF
/usr/sbin/nginx -c "$nginx_dir/nginx.conf" -p "$nginx_dir" &
nginx_pid=$!
trap 'kill $nginx_pid 2>/dev/null; wait $nginx_pid 2>/dev/null; rm -rf "$nginx_dir" "$work/remote-cache"' EXIT
for _ in $(seq 100); do  # bounded: 10 s for nginx to listen
  /usr/bin/python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.1)" 2>/dev/null && break
  sleep 0.1
done
url=http://127.0.0.1:$port
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
# `shardpack bench` under /usr/bin/time: prints "<rate including the open> <peak RSS in KB>", the rate
# being images/s or bytes/s (FIELD images or bytes).
bench() {
  local field=$1
  shift
  SHARDPACK_CACHE=$work/remote-cache /usr/bin/time -f "%M" -o "$nginx_dir/rss" "$bin/shardpack" bench "$@" --json |
    /usr/bin/python3 -c "import json,sys; r=json.load(sys.stdin); n = r['images'] if '$field' == 'images' else r['bytes_per_s'] * r['seconds']; print(n / (r['seconds'] + r['open_seconds']))" |
    tr '\n' ' '
  cat "$nginx_dir/rss"
}
declare -A rate rss
for kind in wds raw; do
  if [[ $kind == wds ]]; then args=(--crop 224 --batch 64 --threads 2) field=images; else
    args=(--eval --crop 224 --batch 64 --threads 2) field=bytes; fi
  local_r=() cold_r=() warm_r=() local_m=() cold_m=() warm_m=()
  for ((r = 1; r <= runs; r++)); do
    read -r v m < <(bench $field "$work/read-$kind" "${args[@]}"); local_r+=("$v") local_m+=("$m")
    rm -rf "$work/remote-cache"
    read -r v m < <(bench $field "$url/read-$kind" "${args[@]}"); cold_r+=("$v") cold_m+=("$m")
    read -r v m < <(bench $field "$url/read-$kind" "${args[@]}"); warm_r+=("$v") warm_m+=("$m")
    echo "run $r ($kind): local ${local_r[-1]}, cold cache ${cold_r[-1]}, warm cache ${warm_r[-1]}"
  done
  rate[$kind-local]=$(median "${local_r[@]}") rate[$kind-cold]=$(median "${cold_r[@]}")
  rate[$kind-warm]=$(median "${warm_r[@]}")
  rss[$kind-local]=$(median "${local_m[@]}") rss[$kind-cold]=$(median "${cold_m[@]}") rss[$kind-warm]=$(median "${warm_m[@]}")
done
awk -v wl="${rate[wds-local]}" -v wc="${rate[wds-cold]}" -v ww="${rate[wds-warm]}" \
    -v rl="${rate[raw-local]}" -v rc="${rate[raw-cold]}" -v rw="${rate[raw-warm]}" \
    -v ml="${rss[wds-local]}" -v mc="${rss[wds-cold]}" -v mw="${rss[wds-warm]}" \
    -v nl="${rss[raw-local]}" -v nc="${rss[raw-cold]}" -v nw="${rss[raw-warm]}" 'BEGIN {
  printf "wds + random-resized-crop 224, 2 threads: local %.0f images/s; over HTTP, cold cache %.0f (%.2fx), warm cache %.0f (%.2fx)\n", wl, wc, wc / wl, ww, ww / wl
  printf "raw shards into batches: local %.0f MB/s; over HTTP, cold cache %.0f MB/s (%.2fx), warm cache %.0f MB/s (%.2fx)\n", rl / 1e6, rc / 1e6, rc / rl, rw / 1e6, rw / rl
  printf "peak RSS (MB): wds local %.0f, cold %.0f, warm %.0f; raw local %.0f, cold %.0f, warm %.0f\n", ml / 1024, mc / 1024, mw / 1024, nl / 1024, nc / 1024, nw / 1024
}'
