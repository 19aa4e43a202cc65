#!/usr/bin/env bash
# The main job, end to end: installs what is missing, builds what the demo runs (the shardpack
# command, the image-tree generator and the Python module: not the test suite, which
# scripts/test.sh builds), generates a small tree of real JPEG and PNG images in ImageNet layout,
# packs it into WebDataset shards, verifies them and prints their summary; then the other half:
# the training loader reading the shards (shardpack bench), and a few lines of Python taking a batch
# and writing a dataset from code. Everything lands in build/demo/.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$PWD/build/venv/bin/python  # the project's Python (scripts/install-deps.sh makes it)
scripts/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j"${JOBS:-2}" --target shardpack make_image_tree _shardpack

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
echo "== shardpack bench $demo/shards --crop 224 --batch 64 --epochs 2: the training loader, every core"
build/release/shardpack bench "$demo/shards" --crop 224 --batch 64 --epochs 2
echo "== Python: a batch from shardpack.Loader, and a dataset written from code with shardpack.Writer"
PYTHONPATH=build/release/python "$py" - "$demo" <<'PY'
import sys
import numpy as np
import shardpack

demo = sys.argv[1]
loader = shardpack.Loader(f"{demo}/shards", batch_size=64, size=224, shuffle=True)
images, labels = next(iter(loader))
print(f"a batch: images {images.dtype} {tuple(images.shape)}, labels {labels[:8].tolist()} ...")

with shardpack.Writer(f"{demo}/written", format="wds", classes=["noise", "stripes"]) as writer:
    for i in range(20):
        pixels = np.random.default_rng(i).integers(0, 256, size=(96, 128, 3), dtype=np.uint8)
        if i % 2:
            pixels[::8] = 255
        writer.write(pixels, label=["noise", "stripes"][i % 2], fields={"txt": f"sample {i}"})
print(f"shardpack.Writer: {writer.summary['samples']} samples from numpy into {demo}/written "
      f"({writer.summary['shards']} shard); shardpack.open(...)[3]['txt'] = "
      f"{shardpack.open(f'{demo}/written')[3]['txt'].decode()!r}")
PY
