#!/usr/bin/env bash
# Checks that two shardpack binaries write byte-identical datasets: every file of every output
# (shards, indexes, sample tables, side files, LMDB's data.mdb, the manifest) for the same generated
# tree, over every format and every family of pack options, and for convert between the formats.
# Used when restructuring the code ("no behaviour change"): build the old commit into one folder,
# the new one into another, and compare.
#
#   scripts/compare-pack-output.sh OLD_SHARDPACK NEW_SHARDPACK [MAKE_IMAGE_TREE]
#
# Exits non-zero, naming the case and the file, at the first difference.
set -euo pipefail
old=$(realpath "$1")
new=$(realpath "$2")
make_tree=$(realpath "${3:-build/release/tests/make_image_tree}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A tree with JPEGs and PNGs in 5 classes, a bad file (skipped and listed) and a --list file.
"$make_tree" "$work/src" --classes 5 --images 120 --png-every 7 --small --seed 11 >/dev/null
printf "not an image" >"$(find "$work/src" -mindepth 1 -maxdepth 1 -type d | sort | sed -n 3p)/broken.jpg"
(cd "$work/src" && find . -type f -iname "*.jpeg" | sort | head -40 | awk '{ print substr($0, 3) "\t" (NR % 3) }') >"$work/list.tsv"

cases=(
  "wds|pack|--format wds"
  "wds-small-shards|pack|--format wds --samples-per-shard 17 --prefix part"
  "wds-shard-size|pack|--format wds --shard-size 64KB"
  "wds-shuffle-pathkeys|pack|--format wds --shuffle --seed 5 --key path"
  "wds-decode-check|pack|--format wds --check decode --max-pixels 100000"
  "wds-list|pack|--format wds --list $work/list.tsv"
  "lmdb|pack|--format lmdb"
  "lmdb-shuffle|pack|--format lmdb --shuffle --seed 2 --key path"
  "raw-crop|pack|--format raw --crop 32 --samples-per-shard 50"
  "raw-resize-crop|pack|--format raw --resize 40 --crop 24x32"
  "raw-keep-size|pack|--format raw --keep-size --samples-per-shard 33"
  "raw-zstd|pack|--format raw --crop 16 --compress zstd --chunk-samples 5"
  "raw-keep-size-zstd|pack|--format raw --keep-size --compress zstd --chunk-samples 3"
  "convert-wds-lmdb|convert wds|--format lmdb"
  "convert-wds-raw|convert wds|--format raw --crop 16"
  "convert-lmdb-wds|convert lmdb|--format wds --samples-per-shard 40"
  "convert-lmdb-raw|convert lmdb|--format raw --keep-size"
)
for entry in "${cases[@]}"; do
  IFS='|' read -r name how opts <<<"$entry"
  for side in old new; do
    bin=${!side}
    out="$work/$side/$name"
    mkdir -p "$work/$side"
    case $how in
      pack) src="$work/src" ;;
      convert*) src="$work/$side/${how#convert }" ;;
    esac
    # shellcheck disable=SC2086
    "$bin" ${how%% *} "$src" "$out" $opts --threads 2 >"$work/$side/$name.log" 2>&1 ||
      { echo "FAIL $name: $side binary failed:"; cat "$work/$side/$name.log"; exit 1; }
  done
  files=$(cd "$work/old/$name" && find . -type f ! -name lock.mdb | sort)
  [[ -n "$files" ]] || { echo "FAIL $name: no output"; exit 1; }
  if [[ "$files" != "$(cd "$work/new/$name" && find . -type f ! -name lock.mdb | sort)" ]]; then
    echo "FAIL $name: the two outputs hold different files"
    diff <(cd "$work/old/$name" && find . -type f | sort) <(cd "$work/new/$name" && find . -type f | sort) || true
    exit 1
  fi
  for f in $files; do
    cmp "$work/old/$name/$f" "$work/new/$name/$f" || { echo "FAIL $name: $f differs"; exit 1; }
  done
  echo "same  $name ($(echo "$files" | wc -l) files)"
done
echo "all ${#cases[@]} cases byte-identical"
