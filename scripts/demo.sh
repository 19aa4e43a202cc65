#!/usr/bin/env bash
# The main job, end to end: installs what is missing, builds Release, generates a small tree of real
# JPEG and PNG images in ImageNet layout, packs it into WebDataset shards, verifies them and prints
# their summary. Everything lands in build/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build/release -DCMAKE_BUILD_TYPE=Release

demo=build/demo
rm -rf "$demo"
echo "== generating $demo/images: 10 classes, 500 images (JPEG, every 10th a PNG)"
build/release/tests/make_image_tree "$demo/images" --classes 10 --images 500 --jobs "${JOBS:-2}"
echo "== shardpack pack $demo/images $demo/shards --format wds --shard-size 16MB --shuffle"
build/release/shardpack pack "$demo/images" "$demo/shards" --format wds --shard-size 16MB --shuffle --seed 1
echo "== shardpack verify $demo/shards --decode"
build/release/shardpack verify "$demo/shards" --decode
echo "== shardpack stat $demo/shards"
build/release/shardpack stat "$demo/shards"
echo "== files"
ls -l "$demo/shards"
