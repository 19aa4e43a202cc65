#!/usr/bin/env python3
"""A torchvision dataset written to WebDataset shards with shardpack.Writer, then read back with
shardpack.Loader. Runs in CI (ctest example_torchvision_to_wds).

    PYTHONPATH=build/release/python build/venv/bin/python examples/writing/torchvision_to_wds.py /tmp/work

The dataset is an ImageFolder over a small tree of JPEGs this script makes with PIL. An ImageFolder
knows its files, so their bytes are written as they are (no decode, no re-encode: the fastest and
exact path). A dataset that only gives PIL images or tensors (CIFAR, a transformed dataset) writes
them as pixels instead: writer.write(image, label=label) (stored as PNG; pixels="jpeg" for JPEG).
"""

import collections
import io
import pathlib
import sys

import numpy as np
from PIL import Image

try:
    import torchvision
except (ImportError, RuntimeError) as e:  # RuntimeError: a torchvision built for another torch
    print(f"this example needs torchvision, which does not import here ({e}); "
          "install the torchvision release made for your torch", file=sys.stderr)
    sys.exit(77)  # ctest: skipped (the project's venv has no torchvision: requirements.txt says why)

import shardpack

work = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/shardpack-torchvision")
root, out = work / "images", work / "pets-wds"

# A small ImageFolder tree: 3 classes, 40 JPEGs of varied sizes.
rng = np.random.default_rng(0)
for i in range(40):
    folder = root / ["cat", "dog", "fox"][i % 3]
    folder.mkdir(parents=True, exist_ok=True)
    pixels = rng.integers(0, 256, size=(48 + i, 64, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(folder / f"{i:04d}.jpg", quality=90)

dataset = torchvision.datasets.ImageFolder(str(root))
with shardpack.Writer(out, format="wds", classes=dataset.classes, samples_per_shard=16, force=True) as writer:
    for path, label in dataset.samples:
        writer.write(pathlib.Path(path).read_bytes(), label=label, path=str(pathlib.Path(path).relative_to(root)))
    # Images only in memory (the dataset's transforms applied) go in as pixels:
    image, label = dataset[0]
    writer.write(image.transpose(Image.FLIP_LEFT_RIGHT), label=dataset.classes[label], path="flipped/0000.jpg")
print(f"wrote {writer.summary['samples']} samples into {writer.summary['shards']} shards of {out}")

# Read back for training: every sample once per epoch, the labels the ImageFolder gave.
loader = shardpack.Loader(out, batch_size=8, size=32, shuffle=True, threads=2)
labels = collections.Counter()
images = 0
for batch_images, batch_labels in loader:
    images += len(batch_labels)
    labels.update(int(x) for x in batch_labels)
expected = collections.Counter(dataset.targets + [dataset.targets[0]])
assert images == len(dataset) + 1, (images, len(dataset))
assert labels == expected, (labels, expected)
# And the bytes are the files' own.
first = shardpack.open(out)[0]
assert first["jpg"] == pathlib.Path(dataset.samples[0][0]).read_bytes()
assert np.asarray(Image.open(io.BytesIO(shardpack.open(out)[40]["png"]))).shape == (48, 64, 3)
print(f"read back {images} images, labels {dict(sorted(labels.items()))}: as written")
