#!/usr/bin/env python3
"""The ranks of one node opening a dataset with aspect-ratio buckets at once: RANKS processes of
scripts/bench_scale_probe.py started together, each one rank's loader. Prints one JSON line: the
wall time until every rank has its first batch, each rank's seconds and how it had its bucket table
("read", "made", "mapped"), and the memory of all of them together: anonymous (RssAnon, each rank's
own) summed, file-backed (RssFile, the node's table mapped: one copy in the page cache) the largest.

    bench_node_ranks.py DATASET MODE RANKS [CACHE_DIR]

Without CACHE_DIR every rank reads every sample table and keeps its own table; with it (an empty
folder, or one a run before filled) the first rank makes the node's table there and the others map
it (docs/buckets.md, "Cost").
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    dataset, mode, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    env = dict(os.environ)
    env.pop("SHARDPACK_CACHE", None)
    if len(sys.argv) > 4:
        env["SHARDPACK_CACHE"] = sys.argv[4]
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, os.path.join(HERE, "bench_scale_probe.py"), dataset, mode],
                              stdout=subprocess.PIPE, env=env, text=True) for _ in range(ranks)]
    said = []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode != 0:
            sys.exit(f"a rank failed (exit {p.returncode})")
        said.append(json.loads(out))
    wall = time.perf_counter() - start
    print(json.dumps({"mode": mode, "ranks": ranks, "cache": len(sys.argv) > 4, "wall_seconds": round(wall, 2),
                      "rank_seconds": [s["seconds"] for s in said], "groups": sorted(str(s["groups"]) for s in said),
                      "rss_anon_sum": sum(s["rss_anon"] for s in said),
                      "rss_file_max": max(s["rss_file"] for s in said)}))


if __name__ == "__main__":
    main()
