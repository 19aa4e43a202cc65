#!/usr/bin/env python3
"""One side of scripts/bench-writer.sh: writes the files of a pack --list (path<TAB>class name)
into WebDataset shards from Python, reading each file in this process (the reads count on the
writer's side), and prints the images/s.

    bench_writer.py shardpack LIST SRC OUT   shardpack.Writer fed encoded bytes (no sync)
    bench_writer.py webdataset LIST SRC OUT  webdataset's ShardWriter (PYTHONPATH: a checkout's src/)

Both cut shards as pack does by default (512 MB, 100,000 samples) and neither syncs; ShardWriter
gets its best settings (no verbose output), and keys as pack gives them.
"""

import os
import sys
import time


def read_file(path):
    """A file's bytes, the quickest way plain Python has (os.read of the whole size: a third of the
    time of open().read(), which builds a buffered reader per file). Both Python sides use it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size)
        while len(data) < size:  # a short read: go on until the whole file is in
            more = os.read(fd, size - len(data))
            if not more:
                break
            data += more
        return data
    finally:
        os.close(fd)


def main():
    side, list_file, src, out = sys.argv[1:5]
    with open(list_file, encoding="utf-8") as f:
        entries = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    classes = sorted({c for _, c in entries})
    label = {c: i for i, c in enumerate(classes)}
    os.makedirs(out, exist_ok=True)
    start = time.perf_counter()
    if side == "shardpack":
        import shardpack

        with shardpack.Writer(out, classes=classes, sync=False) as w:
            for path, cls in entries:
                w.write(read_file(os.path.join(src, path)), label=cls, path=path)
    elif side == "webdataset":
        import webdataset

        with webdataset.ShardWriter(os.path.join(out, "shard-%06d.tar"), maxcount=100_000, maxsize=512e6,
                                    verbose=0) as w:
            for i, (path, cls) in enumerate(entries):
                w.write({"__key__": f"{i:09d}", "jpg": read_file(os.path.join(src, path)), "cls": label[cls]})
    else:
        raise SystemExit(f"unknown side {side!r}: shardpack or webdataset")
    seconds = time.perf_counter() - start
    print(f"{len(entries) / seconds:.1f}")  # the job's images/s: opening the writer to closing it


if __name__ == "__main__":
    main()
