#!/usr/bin/env python3
"""A generator of numpy images with captions written to an LMDB dataset with shardpack.Writer, then
read back with shardpack.open and checked. Runs in CI (ctest example_numpy_captions_to_lmdb).

    PYTHONPATH=build/release/python build/venv/bin/python examples/writing/numpy_captions_to_lmdb.py /tmp/work

Arrays are stored as PNG by default (lossless: they read back equal), or as JPEG with
pixels="jpeg" (jpeg_quality, default 90). Captions are text fields ("txt"); any other field (JSON,
bytes, a mask) is written the same way.
"""

import io
import pathlib
import sys

import numpy as np
from PIL import Image

import shardpack

work = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/shardpack-numpy")
out = work / "captioned-lmdb"


def generate(n, seed=0):
    """Stands for a preprocessing job: yields (image, caption, json) without touching the disk."""
    rng = np.random.default_rng(seed)
    for i in range(n):
        h, w = int(rng.integers(24, 64)), int(rng.integers(24, 64))
        image = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
        yield image, f"a random picture number {i}, {w} pixels wide", {"source": "generator", "index": i}


with shardpack.Writer(out, format="lmdb", force=True) as writer:
    for image, caption, info in generate(50):
        writer.write(image, fields={"txt": caption, "json": info})
print(f"wrote {writer.summary['samples']} samples into {out}")

dataset = shardpack.open(out)
assert len(dataset) == 50
for i, (image, caption, info) in enumerate(generate(50)):
    sample = dataset[i]
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(sample["png"]))), image), i
    assert sample["txt"] == caption.encode(), i
    assert sample["json"] == b'{"source": "generator", "index": %d}' % i, i
print("read back 50 images, captions and JSON fields: equal to what was written")
