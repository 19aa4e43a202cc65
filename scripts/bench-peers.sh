#!/usr/bin/env bash
# shardpack beside the loaders and writers users would pick instead (webdataset, MosaicML Streaming,
# LitData, Hugging Face datasets, DALI's CPU pipeline, SPDL, FFCV, torch's DataLoader over the
# folder, Grain's DataLoader over shardpack.grain.DataSource beside shardpack.grain.Loader), on one image tree, in one run, the contenders alternating round by round; medians and
# ranges printed, the table also in WORK/peers.md (scripts/bench_peers.py does the work and says
# what each contender runs); and the loader's rate against `shardpack doctor`'s crop-aware decode
# capacity of the same tree (its decode row: images/s on all threads at once), measured in each round.
# Each writer's tree and each loader's input are read whole right before it (not timed): this host
# takes cached pages back within minutes, and the table says "in the page cache".
#
#   scripts/bench-peers.sh [--images N] [--rounds R] [--batch B] [--work DIR] [--quick] [--only NAME]...
# --images: the benchmarks' medium tree (JPEGs of about 500x375 in 100 classes, scripts/bench-tree.sh)
# cut to N images (4000). --quick: a tiny tree, one round, each loader one batch: a smoke test that
# every contender runs here (CI runs it), judging no speed. --only: just the contenders named (as
# bench_peers.py lists them; a loader's writer too), e.g. --only "shardpack pack" --only
# "shardpack.grain.Loader (jax.Array)" --only "Grain DataLoader (shardpack.grain.DataSource, PIL)".
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
bin=$PWD/build/release
images=4000 rounds=3 batch=256 work=build/bench quick=0 only=()
while (($#)); do
  case $1 in
    --images) images=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --only) only+=(--only "$2"); shift 2 ;;
    *) echo "usage: $0 [--images N] [--rounds R] [--batch B] [--work DIR] [--quick] [--only NAME]..." >&2; exit 2 ;;
  esac
done
[[ -x $bin/shardpack && -d $bin/python/shardpack ]] || { echo "$0: build first (scripts/build.sh)" >&2; exit 2; }
export PYTHONPATH=$bin/python${PYTHONPATH:+:$PYTHONPATH}
if ((quick)); then
  # Small enough for CI: 48 images in 4 classes, batches of 16.
  tree=$work/peers-quick-tree out=$work/peers-quick
  scripts/bench-tree.sh "$bin" "$tree" --classes 4 --images 48 --png-every 0
  rm -rf "$out"
  exec "$py" scripts/bench_peers.py run "$tree" "$out" --shardpack "$bin/shardpack" --quick --batch 16 "${only[@]}"
fi
tree=$work/read-tree-$images out=$work/peers-$images
scripts/bench-tree.sh "$bin" "$tree" --classes 100 --images "$images" --png-every 0 --noise 46
rm -rf "$out"
exec "$py" scripts/bench_peers.py run "$tree" "$out" --shardpack "$bin/shardpack" --rounds "$rounds" --batch "$batch" \
  "${only[@]}"
