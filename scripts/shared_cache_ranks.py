#!/usr/bin/env python3
"""The ranks of one node sharing a cache folder: N processes, each a Python shardpack.Loader of
rank r of N over one dataset URL with one cache folder (or each its own), run at once; while they
run, the folders' size (shard files, published or being written) is sampled every 50 ms. Used by
scripts/bench-shared-cache.sh and tests/interop/shared_cache_test.py.

As a module: run_ranks(...) -> dict(peak=bytes, seconds=wall time, images=total, digests=[per rank]).
As a script (one rank; PYTHONPATH has the package):
    shared_cache_ranks.py DATASET RANK WORLD CACHE_DIR LIMIT BUFFER EPOCHS OUT_JSON
prints nothing and writes {"digest", "images", "seconds"} to OUT_JSON; CACHE_DIR "-" for none.
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time


def folder_bytes(folder):
    """Bytes of shard files under `folder`: published (.tar) or being written (.tar.part-PID)."""
    total = 0
    for root, _, files in os.walk(folder):
        for f in files:
            if f.endswith(".tar") or ".tar.part-" in f:
                try:
                    total += os.path.getsize(os.path.join(root, f))
                except OSError:  # evicted or renamed meanwhile
                    pass
    return total


def run_ranks(dataset, world, cache_dirs, limit, buffer, epochs, python_dir, timeout=600, lockstep=False):
    """Runs `world` rank processes at once; cache_dirs: one folder per rank (the same for a shared
    cache), or None for none. lockstep: every rank waits after each batch until every other has
    taken as many, as the all-reduce of a training step makes them (else ranks on a busy machine
    drift apart by many shards, which no cache of a few shards can serve)."""
    script = os.path.abspath(__file__)
    env = dict(os.environ, PYTHONPATH=python_dir)
    env.pop("SHARDPACK_CACHE", None)
    with tempfile.TemporaryDirectory() as tmp:
        if lockstep:
            env["SHARDPACK_RANKS_LOCKSTEP"] = os.path.join(tmp, "steps")
            os.mkdir(env["SHARDPACK_RANKS_LOCKSTEP"])
        outs = [os.path.join(tmp, f"rank-{r}.json") for r in range(world)]
        start = time.time()
        procs = [subprocess.Popen([sys.executable, script, dataset, str(r), str(world),
                                   cache_dirs[r] if cache_dirs else "-", str(limit), str(buffer), str(epochs),
                                   outs[r]], env=env) for r in range(world)]
        folders = sorted(set(cache_dirs or []))
        peak = 0
        try:
            while any(p.poll() is None for p in procs):  # bounded by `timeout`
                if time.time() - start > timeout:
                    raise TimeoutError(f"the ranks did not finish in {timeout} s")
                peak = max(peak, sum(folder_bytes(f) for f in folders))
                time.sleep(0.05)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
        seconds = time.time() - start
        failed = [r for r, p in enumerate(procs) if p.returncode != 0]
        if failed:
            raise RuntimeError(f"ranks {failed} failed")
        results = [json.load(open(o)) for o in outs]
    return dict(peak=peak, seconds=seconds, images=sum(r["images"] for r in results),
                digests=[r["digest"] for r in results])


def step_barrier(folder, rank, world):
    """A barrier over files: each rank writes how many batches it has taken, then waits (bounded by
    the caller's timeout) until every rank has taken as many, or has finished."""
    steps = [0]

    def write(value):
        tmp = os.path.join(folder, f".rank-{rank}")
        with open(tmp, "w") as f:
            f.write(value)
        os.replace(tmp, os.path.join(folder, f"rank-{rank}"))

    def read(r):
        try:
            with open(os.path.join(folder, f"rank-{r}")) as f:
                text = f.read()
            return float("inf") if text == "done" else int(text or 0)
        except (OSError, ValueError):
            return 0

    def wait():
        steps[0] += 1
        write(str(steps[0]))
        while min(read(r) for r in range(int(world))) < steps[0]:
            time.sleep(0.001)

    return wait, lambda: write("done")


def rank_main(dataset, rank, world, cache_dir, limit, buffer, epochs, out):
    import shardpack

    folder = os.environ.get("SHARDPACK_RANKS_LOCKSTEP")
    wait, done = step_barrier(folder, rank, world) if folder else (lambda: None, lambda: None)
    start = time.time()
    loader = shardpack.Loader(dataset, batch_size=8, size=32, threads=1, seed=7, rank=int(rank),
                              world_size=int(world), shuffle_buffer=int(buffer),
                              cache_dir=None if cache_dir == "-" else cache_dir, cache_limit=int(limit))
    digest, images = hashlib.sha256(), 0
    for epoch in range(int(epochs)):
        loader.set_epoch(epoch)
        for batch in loader.batches():
            digest.update(batch.images().tobytes())
            digest.update(batch.labels().tobytes())
            images += len(batch.labels())
            wait()
    done()
    json.dump(dict(digest=digest.hexdigest(), images=images, seconds=time.time() - start), open(out, "w"))


if __name__ == "__main__":
    if len(sys.argv) != 9:
        sys.exit(__doc__)
    rank_main(*sys.argv[1:])
