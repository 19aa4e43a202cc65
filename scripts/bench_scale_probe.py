#!/usr/bin/env python3
"""One measurement of scripts/bench-scale.sh, in a fresh process: opens DATASET as MODE says and
prints one JSON line: seconds from the call that opens it to the first batch (or to 1,000 random
samples), and the process's resident memory above the interpreter with torch and shardpack
imported: anonymous (RssAnon: what this rank holds alone) and file-backed (RssFile: mapped pages,
which the ranks of a node share through the page cache).

    bench_scale_probe.py DATASET global|streaming|random|buckets|buckets-41

buckets: the global shuffle in three small aspect-ratio buckets, which reads every shard's sample table at
open and keeps a byte a sample (docs/buckets.md); buckets-41: the same in 41 small buckets (as many
as SDXL's preset, so as much work a sample to find its bucket). With $SHARDPACK_CACHE set, buckets
use the node's table in that folder (docs/buckets.md, "Cost"); "groups" says how it was had.
"""
import json
import random
import sys
import time


def rss():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile", "RssShmem"):
                fields[key] = int(value.split()[0]) * 1024
    return fields


def main():
    dataset, mode = sys.argv[1], sys.argv[2]
    import torch  # noqa: F401  (the interpreter a training job has)
    import shardpack
    before = rss()
    start = time.perf_counter()
    origin = None  # with buckets: "read", or with $SHARDPACK_CACHE "made" or "mapped" (the node's table)
    if mode == "random":
        ds = shardpack.open(dataset)
        rng = random.Random(1)
        for _ in range(1000):
            ds[rng.randrange(len(ds))]
        samples = len(ds)
    else:
        grouping = {"buckets": dict(buckets="64x64,80x48,48x80"),
                    "buckets-41": dict(buckets="area=64x64,step=4,min=28,max=144")}.get(mode, {})
        loader = shardpack.Loader(dataset, batch_size=256, size=16, threads=2, seed=1,
                                  shuffle_buffer=10000 if mode == "streaming" else 0, **grouping)
        next(iter(loader))
        samples = len(loader) * 256
        origin = loader.sample_groups_origin
    seconds = time.perf_counter() - start
    after = rss()
    print(json.dumps({"mode": mode, "samples": samples, "seconds": round(seconds, 3),
                      "rss_anon": after["RssAnon"] - before["RssAnon"],
                      "rss_file": after["RssFile"] - before["RssFile"], "groups": origin}))


if __name__ == "__main__":
    main()
