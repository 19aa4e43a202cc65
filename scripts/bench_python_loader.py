#!/usr/bin/env python3
"""shardpack.Loader from Python, as a training loop consumes it: iterate one epoch of (images, labels)
torch tensors and print "images_per_s N". For scripts/bench-read.sh, against `shardpack bench` with the
same options. Timed from opening the dataset to the last batch, as bench-read.sh times the others.

    PYTHONPATH=build/release/python bench_python_loader.py DATASET SIZE BATCH THREADS [eval]
"""

import sys
import time

import torch  # noqa: F401 (imported before the timer, as a training script has it; the Loader imports it lazily)

import shardpack


def main():
    dataset, size, batch, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    transform = "eval" if len(sys.argv) > 5 and sys.argv[5] == "eval" else "train"
    start, n = time.time(), 0
    loader = shardpack.Loader(dataset, batch_size=batch, size=size, threads=threads, transform=transform)
    for images, labels in loader:
        n += images.shape[0]
    print(f"images_per_s {n / (time.time() - start):.1f}")


if __name__ == "__main__":
    main()
