#!/usr/bin/env bash
# Pack throughput against `tar cf` of the same tree, measured in the same run (the machines are
# shared and noisy, so only the ratio means anything), plus pack's peak memory.
#
#   scripts/bench-pack.sh [--images N] [--runs R] [--work DIR] [--raw-images N] [--large-images N] [--raw-only]
#                         [--bin DIR]
#
# Generates (once, cached in DIR) a tree of N JPEGs of ImageNet-like sizes (about 110 KB average),
# warms the page cache, then alternates `tar cf` and `shardpack pack` R times each (in a shuffled
# order) and reports the median times and their ratio. Both write to the same file system; pack is measured both with its
# default fsync-before-publish and with --no-sync, tar both alone and followed by `sync`. LMDB pack
# is measured against the same tar figures, and so is the same pack in 4 parts (--partition I/4) run
# one after another and merged; then the merge of a 10,000-shard set (scripts/bench-merge.sh). Then, on the first --raw-images images, pre-decoding
# (`--format raw --resize 256 --crop 224`) against Debian's python3 + PIL doing the same with a
# 2-process pool (scripts/bench_pil_baseline.py), plain and with PIL's reduced-size JPEG decode
# (Image.draft, the best PIL can do); and the same on --large-images photographs twice
# as large on each side (either 0: skip). Beside them, the decode floor: the same pack with --resize 32
# --crop 32, which entropy-decodes every row of every image (at DCT scale 1/8) but does almost no
# other work: no pre-decoder built on libjpeg-turbo can beat its rate on these images.
# --raw-only skips the tar, WebDataset and LMDB part. --bin DIR measures the shardpack binary in DIR
# (DIR/shardpack, DIR/tests/make_image_tree) instead of building build/release: an older build, to
# compare before and after a change on the same machine.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
images=20000 runs=5 work=build/bench raw_images=2000 large_images=1000 raw_only=0 bin=
while (($#)); do
  case $1 in
    --images) images=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --raw-images) raw_images=$2; shift 2 ;;
    --large-images) large_images=$2; shift 2 ;;
    --raw-only) raw_only=1; shift ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "usage: $0 [--images N] [--runs R] [--work DIR] [--raw-images N] [--large-images N] [--raw-only] [--bin DIR]" >&2
       exit 2 ;;
  esac
done
scripts/install-deps.sh
if [[ -z $bin ]]; then
  scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release
  bin=build/release
fi
src=$work/tree-$images
scripts/bench-tree.sh "$bin" "$src" --classes 100 --images "$images" --png-every 0 --noise 46
bytes=$(du -sb --exclude=.complete "$src" | cut -f1)
echo "tree: $images images, $bytes bytes ($((bytes / images)) bytes average)"
cat "$src"/*/* >/dev/null  # warm the page cache for both contenders

# This virtual machine's balloon driver reports free memory to the host, which takes it back; the
# next touch of such a page then costs a fault in the host, and a contender that happened to get
# such pages for its output took up to 2.5x as long (docs/performance.md, "Memory the host took
# back"). So each timed command starts right after touching and freeing more memory than it will
# write: every contender gets recently used pages (the host reclaims free memory only after a delay
# of seconds).
avail_kb=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo)
warm_bytes=$((bytes + (512 << 20)))
if ((warm_bytes > avail_kb * 1024 / 2)); then warm_bytes=$((avail_kb * 1024 / 2)); fi
warm_memory() { "$py" -c "bytearray($warm_bytes)"; }

# Prints the wall seconds of "$@" (and keeps the peak RSS of the last run in $work/rss). Dirty pages
# of earlier runs are flushed first, so that no contender pays for another's write-back.
timed() {
  sync
  warm_memory
  /usr/bin/time -f "%e %M" -o "$work/time" "$@" >/dev/null 2>&1
  read -r secs kb <"$work/time"
  echo "$kb" >"$work/rss"
  echo "$secs"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# One timed run of contender $1, its output removed afterwards.
run_contender() {
  case $1 in
    tar) tar_t+=("$(timed tar cf "$work/tree.tar" -C "$src" .)") ;;
    tar+sync) tar_sync_t+=("$(timed sh -c "tar cf '$work/tree.tar' -C '$src' . && sync -f '$work/tree.tar'")") ;;
    pack)
      pack_t+=("$(timed $bin/shardpack pack "$src" "$work/out" --quiet)")
      rss+=("$(cat "$work/rss")") ;;
    pack-no-sync)
      pack_nosync_t+=("$(timed $bin/shardpack pack "$src" "$work/out" --quiet --no-sync)")
      rss+=("$(cat "$work/rss")") ;;
    lmdb) lmdb_t+=("$(timed $bin/shardpack pack "$src" "$work/lmdb" --format lmdb --quiet)") ;;
    parts)  # 4 parts one after another, then the merge: what partitioning costs over one pack
      parts_t+=("$(timed sh -c "for i in 0 1 2 3; do $bin/shardpack pack '$src' '$work/out' --quiet --no-sync \
        --partition \$i/4 || exit 1; done; $bin/shardpack merge '$work/out'")") ;;
  esac
  rm -rf "$work/tree.tar" "$work/out" "$work/lmdb"
}

# The contenders also run in a different order each run (a fixed shuffle per run), so that no
# contender always follows the same neighbour.
pack_vs_tar() {
  contenders=(tar tar+sync pack pack-no-sync lmdb parts)
  tar_t=() tar_sync_t=() pack_t=() pack_nosync_t=() lmdb_t=() parts_t=() rss=()
  rm -rf "$work/tree.tar" "$work/out" "$work/lmdb"
  for ((r = 1; r <= runs; r++)); do
    mapfile -t order < <(printf '%s\n' "${contenders[@]}" | shuf --random-source=<(yes "$r"))
    for c in "${order[@]}"; do run_contender "$c"; done
    echo "run $r (${order[*]}): tar ${tar_t[-1]} s, tar+sync ${tar_sync_t[-1]} s, pack ${pack_t[-1]} s," \
      "pack --no-sync ${pack_nosync_t[-1]} s, pack --format lmdb ${lmdb_t[-1]} s, 4 parts + merge ${parts_t[-1]} s"
  done

  t_tar=$(median "${tar_t[@]}") t_tar_sync=$(median "${tar_sync_t[@]}")
  t_pack=$(median "${pack_t[@]}") t_pack_nosync=$(median "${pack_nosync_t[@]}") t_lmdb=$(median "${lmdb_t[@]}")
  t_parts=$(median "${parts_t[@]}")
  peak_kb=$(printf '%s\n' "${rss[@]}" | sort -n | tail -n1)
  awk -v b="$bytes" -v n="$images" -v tt="$t_tar" -v tts="$t_tar_sync" -v tp="$t_pack" -v tpn="$t_pack_nosync" \
      -v tl="$t_lmdb" -v tparts="$t_parts" -v kb="$peak_kb" -v cores="$(nproc)" 'BEGIN {
    printf "cores: %d\n", cores
    printf "tar cf            %6.2f s  %7.1f MB/s\n", tt, b / tt / 1e6
    printf "tar cf + sync     %6.2f s  %7.1f MB/s\n", tts, b / tts / 1e6
    printf "pack (fsync)      %6.2f s  %7.1f MB/s  %7.0f images/s\n", tp, b / tp / 1e6, n / tp
    printf "pack --no-sync    %6.2f s  %7.1f MB/s  %7.0f images/s\n", tpn, b / tpn / 1e6, n / tpn
    printf "pack --format lmdb %6.2f s  %7.1f MB/s  %7.0f images/s\n", tl, b / tl / 1e6, n / tl
    printf "4 parts + merge   %6.2f s  %7.1f MB/s  (--no-sync, one after another)\n", tparts, b / tparts / 1e6
    printf "ratio 4 parts one after another / one pack (time, both --no-sync): %.3f\n", tparts / tpn
    printf "ratio pack/tar throughput: %.2f (fsync vs tar+sync), %.2f (no-sync vs tar)\n", tts / tp, tt / tpn
    printf "ratio lmdb pack/tar throughput: %.2f (vs tar+sync; lmdb syncs once at the end)\n", tts / tl
    printf "peak RSS of pack: %.1f MB\n", kb / 1024
  }'
}
((raw_only)) || pack_vs_tar
# Merge of a synthetic 10,000-shard set of part manifests (8 parts), against cat of the same files.
((raw_only)) || scripts/bench-merge.sh --bin "$bin" --work "$work" --runs "$runs"

# Pre-decoding: shardpack raw against PIL with a 2-process pool, on the same images.
# raw_vs_pil LABEL TREE N: the first N JPEGs of TREE (a --list file, so that both read the same).
raw_vs_pil() {
  local label=$1 tree=$2 n=$3
  # (awk, not head: head would close the pipe early, and pipefail would end the script.)
  find "$tree" -type f -name '*.JPEG' | sort | awk -v n="$n" 'NR <= n' | sed "s|^$tree/||" |
    awk -F/ '{print $0 "\t" $1}' >"$work/raw-list.txt"
  local raw_t=() pil_t=() draft_t=() floor_t=()
  for ((r = 1; r <= runs; r++)); do
    rm -rf "$work/raw"
    raw_t+=("$(timed $bin/shardpack pack "$tree" "$work/raw" --list "$work/raw-list.txt" --format raw --resize 256 --crop 224 --quiet)")
    rm -f "$work/pil.npy"
    pil_t+=("$(timed "$py" scripts/bench_pil_baseline.py "$tree" "$work/pil.npy" 256 224 2 "$n")")
    rm -f "$work/pil.npy"
    draft_t+=("$(timed "$py" scripts/bench_pil_baseline.py "$tree" "$work/pil.npy" 256 224 2 "$n" --draft)")
    rm -rf "$work/raw"
    floor_t+=("$(timed $bin/shardpack pack "$tree" "$work/raw" --list "$work/raw-list.txt" --format raw --resize 32 --crop 32 --quiet)")
    echo "raw run $r ($label): shardpack ${raw_t[-1]} s, PIL x2 ${pil_t[-1]} s, PIL+draft x2 ${draft_t[-1]} s," \
      "decode floor ${floor_t[-1]} s"
  done
  rm -rf "$work/raw" "$work/pil.npy"
  local t_raw t_pil t_draft t_floor
  t_raw=$(median "${raw_t[@]}") t_pil=$(median "${pil_t[@]}") t_draft=$(median "${draft_t[@]}")
  t_floor=$(median "${floor_t[@]}")
  awk -v n="$n" -v tr="$t_raw" -v tp="$t_pil" -v td="$t_draft" -v tf="$t_floor" -v label="$label" 'BEGIN {
    printf "%s, raw pack (decode+resize 256+crop 224)  %6.2f s  %7.0f images/s\n", label, tr, n / tr
    printf "%s, PIL, 2-process pool, same work         %6.2f s  %7.0f images/s\n", label, tp, n / tp
    printf "%s, PIL with Image.draft, same pool        %6.2f s  %7.0f images/s\n", label, td, n / td
    printf "%s, decode floor (raw pack to 32x32)       %6.2f s  %7.0f images/s\n", label, tf, n / tf
    printf "%s, ratio raw pack / PIL: %.2f, / PIL+draft: %.2f (decode floor / PIL: %.2f)\n", label, tp / tr, td / tr, tp / tf
  }'
}
if ((raw_images > 0)); then raw_vs_pil "ImageNet-sized" "$src" "$raw_images"; fi

# The same on photographs twice as large on each side (about 1000x750, 420 KB), where decoding at
# DCT scale 1/2 applies: entropy decoding grows with the file, so the ratio does not improve.
if ((large_images > 0)); then
  large=$work/tree-large-$large_images
  scripts/bench-tree.sh "$bin" "$large" --classes 100 --images "$large_images" --png-every 0 --noise 46 --scale 2
  cat "$large"/*/* >/dev/null
  raw_vs_pil "2x larger" "$large" "$large_images"
fi
if [[ -x $bin/bench/shardpack_micro_bench ]]; then
  echo "JPEG decode per core (500x375, ~110 KB), by DCT scale num/8 (args: num, flags):"
  $bin/bench/shardpack_micro_bench --benchmark_filter='AtScale|Region|TransformJpeg|Resample' 2>/dev/null | grep BM_
fi
