"""Datasets read over HTTP from a real web server (nginx, started here on 127.0.0.1 and always
stopped): for each format, `stat` and `verify` of the URL print what they print for the local
folder, and the C++ loader's batches from the URL equal those from the local folder byte for byte
(2 ranks, and a resumed epoch), also from a shard list of URLs and of pipe: commands, and read at
random without a cache folder (each sample's bytes by a range request, no shard fetched whole), also
as views (a split of the URL reads as the same split of the folder). Also: a second read uses the cache without downloading again
(nginx's access log counts the requests), a mixture of local and URL sources (and of two URLs in one
cache folder) reads as the same mixture of local folders, a missing dataset and a missing cache folder give clear
errors, and a shard the server serves damaged is refused and never published in the cache.

With PYTHON_PACKAGE_DIR (the built Python package, absent in builds without it), also
shardpack.open(URL)[i] in Python equals shardpack.open(folder)[i] for every sample.

usage: http_dataset_test.py SHARDPACK MAKE_IMAGE_TREE DUMP_BATCHES WORKDIR [PYTHON_PACKAGE_DIR]
"""

import json
import os
import shutil
import subprocess
import sys

from checks import Checks, free_port, fresh_folder, pack_every_format, stop_process, wait_for_port

shardpack, make_tree, dump_batches, work = sys.argv[1:5]
python_dir = sys.argv[5] if len(sys.argv) > 5 and os.path.isdir(os.path.join(sys.argv[5], "shardpack")) else None
fresh_folder(work)
checks = Checks("http dataset test")
check = checks.check


def run(args, env=None):
    return subprocess.run(args, capture_output=True, text=True, env=env)


serve = os.path.join(work, "serve")
packs = pack_every_format(shardpack, make_tree, work, serve)
# A copy of the wds dataset whose second shard the server holds damaged (one byte flipped).
shutil.copytree(os.path.join(serve, "wds"), os.path.join(serve, "damaged"))
with open(os.path.join(serve, "damaged", "shard-000001.tar"), "r+b") as f:
    f.seek(700)
    byte = f.read(1)
    f.seek(700)
    f.write(bytes([byte[0] ^ 0xFF]))
# 7 shards of 2 samples, for the modes that fetch shards as the epoch goes.
subprocess.run([shardpack, "pack", os.path.join(work, "src"), os.path.join(serve, "many"), "--quiet", "--no-sync",
                "--samples-per-shard", "2"], check=True, stdout=subprocess.DEVNULL)
for root, dirs, files in os.walk(work):  # nginx's workers may run as another user
    os.chmod(root, 0o755)
    for f in files:
        os.chmod(os.path.join(root, f), 0o644)


port = free_port()
conf = os.path.join(work, "nginx.conf")
open(conf, "w").write(f"""
daemon off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 64; }}
http {{
  access_log {work}/access.log;
  client_body_temp_path {work}/tmp-body;
  proxy_temp_path {work}/tmp-proxy;
  fastcgi_temp_path {work}/tmp-fastcgi;
  uwsgi_temp_path {work}/tmp-uwsgi;
  scgi_temp_path {work}/tmp-scgi;
  server {{
    listen 127.0.0.1:{port};
    root {serve};
  }}
}}
""" + ("user root;\n" if os.geteuid() == 0 else ""))
nginx = subprocess.Popen(["/usr/sbin/nginx", "-c", conf, "-p", work], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
try:
    if not wait_for_port(port):
        raise SystemExit("nginx did not start: " + open(os.path.join(work, "error.log")).read())
    base = f"http://127.0.0.1:{port}"
    cache = os.path.join(work, "cache")
    env = dict(os.environ, SHARDPACK_CACHE=cache)

    for name in packs:
        local, url = os.path.join(serve, name), f"{base}/{name}"
        no_cache_env = {k: v for k, v in os.environ.items() if k != "SHARDPACK_CACHE"}
        for command in (["stat"], ["verify", "--decode"]):
            want = run([shardpack] + command + [local])
            # With a cache folder, and (but LMDB, one file read at random) through memory without one.
            for mode, mode_env in (("cached", env), ("no cache", no_cache_env)):
                if name == "lmdb" and mode == "no cache":
                    continue
                log_lines = len(open(os.path.join(work, "access.log")).read().splitlines())
                got = run([shardpack] + command + [url], mode_env)
                check(got.returncode == want.returncode == 0, f"{name}: {command[0]} of the URL, {mode}: {got.stderr}")
                if mode == "no cache":  # stat reads no shard; verify each shard once
                    shard_urls = [s["url"] for s in json.load(open(os.path.join(local, "manifest.json")))["shardlist"]]
                    fetched = [line for line in open(os.path.join(work, "access.log")).read().splitlines()[log_lines:]
                               if any(f'"GET /{name}/{u} ' in line for u in shard_urls)]
                    shards = len(shard_urls)
                    check(len(fetched) == (0 if command[0] == "stat" else shards),
                          f"{name}: {command[0]} without a cache downloaded {len(fetched)} shards: {fetched}")
                check(got.stdout == want.stdout,
                      f"{name}: {command[0]} of the URL, {mode}, printed\n{got.stdout}\nnot\n{want.stdout}")
        for args in (["0", "0", "0", "1"], ["0", "0", "0", "2"], ["0", "0", "1", "2"], ["1", "1", "1", "2"]):
            # EPOCH FIRST_BATCH RANK WORLD
            outputs = []
            for source, tag in ((local, "local"), (url, "url")):
                out = os.path.join(work, f"{name}-{tag}-{'-'.join(args)}")
                r = run([dump_batches, source, out, "4", "7", "16"] + args, env)
                check(r.returncode == 0, f"{name}: dump_batches {tag} {args}: {r.stderr}")
                outputs.append((open(out + ".bin", "rb").read(), open(out + ".txt").read()))
            check(outputs[0] == outputs[1] and len(outputs[0][0]) > 0,
                  f"{name}: the loader's batches over HTTP differ from the local ones (epoch, first batch, rank, "
                  f"world = {args})")
        # Buckets over a URL: each sample's size comes from the sample tables, read through the server;
        # the same batches, in the same bucket shapes, as from the folder (cached, and for wds without
        # a cache folder too, where the global shuffle reads samples by range requests).
        for mode, mode_env in (("cached", env), ("no cache", no_cache_env)):
            if name != "wds" and mode == "no cache":
                continue
            outputs = []
            for source, tag in ((local, "local"), (url, "url")):
                out = os.path.join(work, f"{name}-buckets-{tag}-{mode.replace(' ', '-')}")
                r = run([dump_batches, source, out, "4", "7", "16", "1", "0", "0", "2"],
                        dict(mode_env, DUMP_BUCKETS="32x16,24x16,16x16"))
                check(r.returncode == 0, f"{name}: dump_batches with buckets, {tag}, {mode}: {r.stderr}")
                outputs.append((open(out + ".bin", "rb").read(), open(out + ".txt").read()))
            check(outputs[0] == outputs[1] and len(outputs[0][0]) > 0 and "x" in outputs[0][1],
                  f"{name}: bucketed batches over HTTP ({mode}) differ from the local ones:\n{outputs[0][1]}\n"
                  f"{outputs[1][1]}")

        if python_dir:
            # And, where Grain is installed, Grain's MapDataset over shardpack.grain.DataSource(URL).
            script = ("import importlib.util, shardpack, sys\n"
                      "a, b = shardpack.open(sys.argv[1]), shardpack.open(sys.argv[2])\n"
                      "assert len(a) == len(b) > 0, (len(a), len(b))\n"
                      "def same(x, y):\n"
                      "    return x.keys() == y.keys() and all((x[k] == y[k]).all() if hasattr(x[k], 'all') "
                      "else x[k] == y[k] for k in x)\n"
                      "for i in range(len(a)):\n"
                      "    assert same(a[i], b[i]), i\n"
                      "if importlib.util.find_spec('grain'):\n"
                      "    import grain, shardpack.grain\n"
                      "    records = list(grain.MapDataset.source(shardpack.grain.DataSource(sys.argv[2])))\n"
                      "    assert len(records) == len(a) and all(same(a[i], r) for i, r in enumerate(records))\n"
                      "print(len(a))\n")
            r = run([sys.executable, "-c", script, local, url], dict(env, PYTHONPATH=python_dir))
            check(r.returncode == 0 and r.stdout.strip() == "14", f"{name}: shardpack.open over HTTP in Python: "
                  f"{r.stdout} {r.stderr}")
            if name != "lmdb":  # without a cache folder: each sample's bytes by a range request
                since = len(open(os.path.join(work, "access.log")).read().splitlines())
                r = run([sys.executable, "-c", script, local, url], dict(no_cache_env, PYTHONPATH=python_dir))
                check(r.returncode == 0 and r.stdout.strip() == "14", f"{name}: shardpack.open over HTTP without a "
                      f"cache folder in Python: {r.stdout} {r.stderr}")
                shard_urls = [s["url"] for s in json.load(open(os.path.join(local, "manifest.json")))["shardlist"]]
                shard_gets = [line for line in open(os.path.join(work, "access.log")).read().splitlines()[since:]
                              if any(f'"GET /{name}/{u} ' in line for u in shard_urls)]
                check(len(shard_gets) >= 14 and all('HTTP/1.1" 206 ' in line for line in shard_gets),
                      f"{name}: shardpack.open over HTTP without a cache folder fetched shards {shard_gets}")

    # Views of a dataset at a URL (docs/views.md): a split made from the URL names it as its base,
    # and its loader batches equal those of the same split of the local folder, read with a cache
    # folder and without one (range requests); verify of such a view checks its base over HTTP.
    no_cache_env = {k: v for k, v in os.environ.items() if k != "SHARDPACK_CACHE"}
    for name in ("wds", "raw"):
        local, url = os.path.join(serve, name), f"{base}/{name}"
        views = {}
        for source, tag in ((local, "local"), (url, "url")):
            sides = [os.path.join(work, f"view-{name}-{tag}-{side}") for side in "ab"]
            r = run([shardpack, "split", source, *sides, "--fraction", "0.5", "--seed", "3", "--json"], env)
            check(r.returncode == 0, f"{name}: split of the {tag} dataset: {r.stderr}")
            counts = json.loads(r.stdout) if r.returncode == 0 else {}
            views[tag] = (sides, [counts.get(side, {}).get("samples") for side in "ab"])
        check(views["local"][1] == views["url"][1] and sum(views["url"][1]) == 14,
              f"{name}: the split of the URL holds {views['url'][1]} samples, of the folder {views['local'][1]}")
        view_base = json.load(open(os.path.join(views["url"][0][0], "manifest.json")))["view"]["base"]
        check(view_base == url, f"{name}: the view of the URL names its base {view_base!r}")
        for side in (0, 1):
            outputs = []
            for tag, run_env, mode in (("local", env, "cached"), ("url", env, "cached"), ("url", no_cache_env, "ranged")):
                out = os.path.join(work, f"view-batches-{name}-{tag}-{mode}-{side}")
                r = run([dump_batches, views[tag][0][side], out, "2", "7", "16", "0", "0", "0", "1"], run_env)
                check(r.returncode == 0, f"{name}: dump_batches of a view of the {tag} dataset ({mode}): {r.stderr}")
                outputs.append((open(out + ".bin", "rb").read(), open(out + ".txt").read()) if r.returncode == 0 else None)
            check(outputs[0] is not None and len(outputs[0][0]) > 0 and outputs[0] == outputs[1] == outputs[2],
                  f"{name}: a view of the URL reads other batches than the same view of the folder")
        r = run([shardpack, "verify", views["url"][0][0]], no_cache_env)
        check(r.returncode == 0 and r.stdout.startswith(f"view of {url}: "),
              f"{name}: verify of a view of the URL: {r.stdout} {r.stderr}")

    # A shard list of URLs, as webdataset takes them: the same batches as the local shard list.
    shards = sorted(f for f in os.listdir(os.path.join(serve, "wds")) if f.endswith(".tar"))
    spec = "shard-{000000..%06d}.tar" % (len(shards) - 1)
    outputs = []
    for source, tag in ((os.path.join(serve, "wds", spec), "local"), (f"{base}/wds/{spec}", "url")):
        out = os.path.join(work, "shardlist-" + tag)
        r = run([dump_batches, source, out, "4", "7", "16", "0", "0", "0", "1"], env)
        check(r.returncode == 0, f"shard list {tag}: {r.stderr}")
        outputs.append((open(out + ".bin", "rb").read(), open(out + ".txt").read()))
    check(outputs[0] == outputs[1] and len(outputs[0][0]) > 0 and len(shards) == 3,
          "the loader's batches from a shard list of URLs differ from the local shard list's")
    # The same shard list of URLs streamed without a cache folder (the streaming shuffle): indexed by
    # streaming each shard once when it opens, then streamed again as the epoch reads it; the
    # batches equal the local shard list's with the same shuffle. A global shuffle is refused.
    no_cache_env = {k: v for k, v in os.environ.items() if k != "SHARDPACK_CACHE"}
    streamed_lists = []
    for source, tag, run_env in ((os.path.join(serve, "wds", spec), "local", env),
                                 (f"{base}/wds/{spec}", "url", no_cache_env)):
        out = os.path.join(work, "shardlist-streamed-" + tag)
        log_lines = len(open(os.path.join(work, "access.log")).read().splitlines())
        r = run([dump_batches, source, out, "4", "7", "16", "0", "0", "0", "1"], dict(run_env, DUMP_SHUFFLE_BUFFER="5"))
        check(r.returncode == 0, f"shard list streamed {tag}: {r.stderr}")
        streamed_lists.append((open(out + ".bin", "rb").read(), open(out + ".txt").read()))
        fetched = [line for line in open(os.path.join(work, "access.log")).read().splitlines()[log_lines:]
                   if '"GET /wds/shard-' in line and ".tar " in line]
        check(tag == "local" or len(fetched) == 2 * len(shards),
              f"a shard list streamed without a cache: {len(fetched)} shard requests, not 2 x {len(shards)}")
    check(streamed_lists[0] == streamed_lists[1] and len(streamed_lists[0][0]) > 0,
          "the loader's batches from a shard list of URLs streamed without a cache differ from the local ones")
    r = run([dump_batches, f"{base}/wds/{spec}", os.path.join(work, "shardlist-random"), "4", "7", "16", "0", "0", "0",
             "1"], no_cache_env)
    check(r.returncode == 1 and r.stderr == f"dump_batches: invalid argument: reading {base}/wds/{spec} at random "
          "needs a local cache folder: set SHARDPACK_CACHE=DIR (or --cache-dir DIR; --cache-limit bounds it), or "
          "stream it without one with the streaming shuffle (--shuffle-buffer N) or without shuffling\n",
          f"a shard list of URLs read at random without a cache: {r.stderr!r}")
    # pipe: commands that print shards (webdataset's convention), brace-expanded like URLs.
    out = os.path.join(work, "shardlist-pipe")
    r = run([dump_batches, f"pipe:cat {serve}/wds/{spec}", out, "4", "7", "16", "0", "0", "0", "1"], env)
    check(r.returncode == 0 and (open(out + ".bin", "rb").read(), open(out + ".txt").read()) == outputs[0],
          f"the loader's batches from pipe:cat differ from the local shard list's: {r.stderr}")
    r = run([dump_batches, "pipe:exit 3; true x.tar", out, "4", "7", "16", "0", "0", "0", "1"], env)
    check(r.returncode != 0 and "pipe:exit 3; true x.tar: the command exited with status 3" in r.stderr,
          f"a failing pipe: command: {r.stderr!r}")

    # Shards fetched as the epoch goes: the batches equal the local ones, each shard is requested
    # once, in the epoch's order of first use, and a bounded cache stays within its bound.
    many = os.path.join(serve, "many")
    shard_bytes = {f: os.path.getsize(os.path.join(many, f)) for f in os.listdir(many) if f.endswith(".tar")}
    no_cache = {k: v for k, v in os.environ.items() if k != "SHARDPACK_CACHE"}
    log_path = os.path.join(work, "access.log")

    def shard_requests(since):
        lines = open(log_path).read().splitlines()[since:]
        return [line.split('"GET /many/')[1].split(" ")[0] for line in lines if '"GET /many/shard-' in line
                and '.tar ' in line]

    def streamed(tag, extra_env, args=("0", "0", "0", "1")):
        """dump_batches of the URL and of the folder with extra_env; (equal, shard requests, first-use order)."""
        since = len(open(log_path).read().splitlines())
        outputs = []
        for source, env_of in ((many, dict(os.environ)), (f"{base}/many", extra_env)):
            out = os.path.join(work, f"many-{tag}-{source == many}")
            r = run([dump_batches, source, out, "2", "5", "16"] + list(args), dict(env_of, DUMP_SHUFFLE_BUFFER="3"))
            check(r.returncode == 0, f"{tag}: dump_batches {source}: {r.stderr}")
            outputs.append((open(out + ".bin", "rb").read(), open(out + ".txt").read()))
        order = []  # shards in the order the epoch first reads them (2 samples a shard)
        first_batch = {}  # shard -> the batch (2 samples each) that reads it first
        for n, line in enumerate(outputs[0][1].splitlines()):
            name = "shard-%06d.tar" % (int(line.split()[0]) // 2)
            if name not in order:
                order.append(name)
                first_batch[name] = n // 2
        streamed.first_batch = first_batch
        return outputs[0] == outputs[1] and len(outputs[0][0]) > 0, shard_requests(since), order

    since = len(open(log_path).read().splitlines())
    equal, requests, order = streamed("streaming", no_cache)
    check(equal, "streaming mode: the loader's batches over HTTP differ from the local ones")
    # Opening costs the manifest's request; a shard's index and sample table come when it is first
    # needed: a handful of requests before the first shard's bytes, not two for every shard.
    asked = [line.split('"GET /many/')[1].split(" ")[0] for line in open(log_path).read().splitlines()[since:]
             if '"GET /many/' in line]
    before_shard = next((i for i, name in enumerate(asked) if name.endswith(".tar")), len(asked))
    check(asked[:1] == ["manifest.json"] and 1 <= before_shard <= 5,
          f"streaming mode: {before_shard} requests before the first shard's bytes: {asked[:before_shard + 1]}")
    check(sorted(requests) == sorted(shard_bytes) and len(order) == 7,
          f"streaming mode: shard requests {requests} (each of the 7 shards once)")
    # Raw shards streamed (the other format that streams; LMDB needs a cache, checked below).
    outputs = []
    for source, env_of in ((os.path.join(serve, "raw"), dict(os.environ)), (f"{base}/raw", no_cache)):
        out = os.path.join(work, f"raw-streamed-{source == f'{base}/raw'}")
        r = run([dump_batches, source, out, "4", "7", "16", "0", "0", "0", "1"], dict(env_of, DUMP_SHUFFLE_BUFFER="3"))
        check(r.returncode == 0, f"raw streamed: dump_batches {source}: {r.stderr}")
        outputs.append((open(out + ".bin", "rb").read(), open(out + ".txt").read()))
    check(outputs[0] == outputs[1] and len(outputs[0][0]) > 0, "raw streamed: the batches differ from the local ones")
    equal, requests, _ = streamed("streaming-resume", no_cache, ("1", "1", "1", "2"))
    check(equal and len(requests) == len(set(requests)) > 0,
          f"streaming mode, rank 1 of 2 resumed at batch 1: equal {equal}, shard requests {requests}")
    cache_limit = 4 * max(shard_bytes.values())
    bounded = dict(env, SHARDPACK_CACHE=os.path.join(work, "bounded-cache"), DUMP_CACHE_LIMIT=str(cache_limit),
                   DUMP_DOWNLOADS="1", DUMP_PREFETCH_SHARDS="1")
    equal, requests, order = streamed("bounded", bounded)
    kept = [f for d, _, fs in os.walk(bounded["SHARDPACK_CACHE"]) for f in fs if f.endswith(".tar")]
    check(equal, "bounded cache: the loader's batches over HTTP differ from the local ones")
    # Downloads follow the order of first use by batch; two shards first read by the same batch are
    # wanted at once by its decode threads, and whichever thread asks first is served first.
    first_use = [streamed.first_batch.get(f, -1) for f in requests]
    check(sorted(requests) == sorted(order) and first_use == sorted(first_use),
          f"bounded cache, one download at a time: shards requested {requests} (first read by batches "
          f"{first_use}), the epoch reads them first in the order {order}")
    check(0 < sum(shard_bytes[f] for f in kept) <= cache_limit < sum(shard_bytes.values()),
          f"bounded cache: keeps {sorted(kept)}, over the bound of {cache_limit} bytes")
    # A global shuffle without a cache folder: the local batches, each sample's bytes read with a
    # range request (206), no shard fetched whole.
    since = len(open(log_path).read().splitlines())
    outputs = []
    for source, env_of in ((many, dict(os.environ)), (f"{base}/many", no_cache)):
        out = os.path.join(work, f"many-ranged-{source == many}")
        r = run([dump_batches, source, out, "2", "5", "16", "0", "0", "0", "1"], env_of)
        check(r.returncode == 0, f"a global shuffle without a cache: dump_batches {source}: {r.stderr}")
        outputs.append((open(out + ".bin", "rb").read(), open(out + ".txt").read()))
    check(outputs[0] == outputs[1] and len(outputs[0][0]) > 0,
          "a global shuffle without a cache: the batches over HTTP differ from the local ones")
    shard_gets = [line for line in open(log_path).read().splitlines()[since:] if '"GET /many/shard-' in line
                  and '.tar ' in line]
    check(len(shard_gets) >= 14 and all('HTTP/1.1" 206 ' in line for line in shard_gets),
          f"a global shuffle without a cache fetched shards {shard_gets}")
    # A global shuffle over more than the cache's bound downloads shards again and again: the loader
    # says so when it opens, with the numbers and the ways out.
    r = run([shardpack, "bench", f"{base}/many", "--epochs", "1", "--threads", "1", "--batch", "2", "--crop", "16",
             "--cache-limit", str(cache_limit)], dict(env, SHARDPACK_CACHE=os.path.join(work, "warned-cache")))

    def human(n):  # FormatBytes, computed here by hand
        units, v, u = ["B", "KB", "MB", "GB"], float(n), 0
        while v >= 1000:
            v, u = v / 1000, u + 1
        return f"{n} B" if u == 0 else f"{v:.1f} {units[u]}"
    total = sum(shard_bytes.values())
    check(r.returncode == 0 and r.stderr == f"warning: a global shuffle of {base}/many reads its 7 shards "
          f"({human(total)}) all epoch long, but --cache-limit holds {human(cache_limit)}: shards will be downloaded "
          "again and again. Use the streaming shuffle (--shuffle-buffer N), which reads each shard "
          f"once an epoch within the limit, or a --cache-limit of at least {human(total)}\n",
          f"a global shuffle over more than the cache limit: {r.returncode} {r.stderr!r}")
    r = run([dump_batches, f"{base}/lmdb", os.path.join(work, "lmdb-stream"), "2", "5", "16", "0", "0", "0", "1"],
            dict(no_cache, DUMP_SHUFFLE_BUFFER="3"))
    check(r.returncode == 1 and r.stderr == f"dump_batches: invalid argument: reading {base}/lmdb needs a local "
          "cache folder (the lmdb format is one file, read at random): set SHARDPACK_CACHE=DIR (or --cache-dir "
          "DIR) with room for the dataset\n", f"lmdb without a cache: {r.stderr!r}")
    if python_dir:  # the Python Loader: streamed without a cache, and through a bounded cache folder
        script = ("import shardpack, sys\n"
                  "def epoch(path, **kw):\n"
                  "    loader = shardpack.Loader(path, batch_size=2, seed=5, size=16, shuffle_buffer=3, threads=1, **kw)\n"
                  "    return [(images.numpy().tobytes(), labels.tolist()) for images, labels in loader]\n"
                  "local = epoch(sys.argv[1])\n"
                  "assert len(local) == 7, len(local)\n"
                  "assert epoch(sys.argv[2]) == local, 'streamed'\n"
                  "assert epoch(sys.argv[2], cache_dir=sys.argv[3], cache_limit=int(sys.argv[4])) == local, 'cached'\n"
                  "def global_epoch(path):\n"  # the global shuffle, by range requests without a cache folder
                  "    loader = shardpack.Loader(path, batch_size=2, seed=5, size=16, threads=2)\n"
                  "    return [(images.numpy().tobytes(), labels.tolist()) for images, labels in loader]\n"
                  "assert global_epoch(sys.argv[2]) == global_epoch(sys.argv[1]), 'global shuffle, ranged'\n"
                  "print('ok')\n")
        r = run([sys.executable, "-c", script, many, f"{base}/many", os.path.join(work, "py-cache"), str(cache_limit)],
                dict(no_cache, PYTHONPATH=python_dir))
        check(r.returncode == 0 and r.stdout == "ok\n", f"Python Loader over HTTP: {r.stdout} {r.stderr}")
        # A mixture of local and URL sources, and of two URL sources sharing one cache folder and its
        # limit, gives the batches of the same mixture read from the local folders.
        mix_limit = 2 * sum(os.path.getsize(os.path.join(d, f)) for d in (many, os.path.join(serve, "lmdb"))
                            for f in os.listdir(d))
        script = ("import os, shardpack, sys\n"
                  "def epoch(a, b, **kw):\n"
                  "    loader = shardpack.Loader(sources=[(a, 0.7), (b, 0.3)], batch_size=4, seed=5, size=16,\n"
                  "                              threads=1, **kw)\n"
                  "    return [(x.numpy().tobytes(), y.tolist(), s.tolist()) for x, y, s in loader]\n"
                  "many, lmdb, base, cache, limit = sys.argv[1:6]\n"
                  "local = epoch(many, lmdb)\n"
                  "assert sorted(sum((s for _, _, s in local), [])) == [0] * 20 + [1] * 8, local\n"
                  "assert epoch(many, base + '/lmdb', cache_dir=cache + '-1') == local, 'local + URL'\n"
                  "assert epoch(base + '/many', base + '/lmdb', cache_dir=cache + '-2', cache_limit=int(limit)) == local, 'URLs'\n"
                  "kept = sorted(d.split('-')[0] for d in os.listdir(cache + '-2') if os.path.isdir(os.path.join(cache + '-2', d)))\n"
                  "assert kept == ['lmdb', 'many'], kept\n"
                  "size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(cache + '-2') for f in fs\n"
                  "           if f.endswith(('.tar', '.mdb')))\n"
                  "assert 0 < size <= int(limit), size\n"
                  "print('ok')\n")
        r = run([sys.executable, "-c", script, many, os.path.join(serve, "lmdb"), base, os.path.join(work, "mix-cache"),
                 str(mix_limit)], dict(no_cache, PYTHONPATH=python_dir))
        check(r.returncode == 0 and r.stdout == "ok\n", f"a mixture of local and URL sources: {r.stdout} {r.stderr}")

    # A second epoch from a full cache downloads nothing but the manifest.
    since = len(open(log_path).read().splitlines())
    r = run([dump_batches, f"{base}/wds", os.path.join(work, "wds-again"), "4", "7", "16", "1", "0", "0", "1"], env)
    log = open(log_path).read().splitlines()[since:]
    check(r.returncode == 0 and len(log) == 1 and "/wds/manifest.json" in log[0],
          f"the loader over a full cache made requests {log}: {r.stderr}")

    # The cache serves a second read without downloading anything but the manifest.
    requests = len(open(os.path.join(work, "access.log")).read().splitlines())
    check(run([shardpack, "stat", f"{base}/wds"], env).returncode == 0, "second stat of the URL")
    log = open(os.path.join(work, "access.log")).read().splitlines()
    check(len(log) == requests + 1 and "/wds/manifest.json" in log[-1],
          f"a cached dataset made {len(log) - requests} requests: {log[requests:]}")

    # A small file deleted from the cache is fetched again, not reported missing.
    cached_wds = [os.path.join(cache, d) for d in os.listdir(cache) if d.startswith("wds-")][0]
    os.remove(os.path.join(cached_wds, "shard-000001.idx"))
    since = len(open(log_path).read().splitlines())
    want, got = run([shardpack, "verify", os.path.join(serve, "wds")]), run([shardpack, "verify", f"{base}/wds"], env)
    log = open(log_path).read().splitlines()[since:]
    check(got.returncode == 0 and got.stdout == want.stdout and sum("/wds/shard-000001.idx" in l for l in log) == 1,
          f"a deleted cached index: {got.stdout} {got.stderr} {log}")

    r = run([shardpack, "stat", f"{base}/missing"], env)
    check(r.returncode == 1 and r.stderr == f"stat failed: {base}/missing/manifest.json does not exist (HTTP 404)\n",
          f"missing dataset: {r.returncode} {r.stderr!r}")
    no_cache_env = {k: v for k, v in os.environ.items() if k != "SHARDPACK_CACHE"}
    r = run([shardpack, "stat", f"{base}/lmdb"], no_cache_env)
    check(r.returncode == 1 and r.stderr == f"stat failed: reading {base}/lmdb needs a local cache folder (the lmdb "
          "format is one file, read at random): set SHARDPACK_CACHE=DIR with room for the dataset\n",
          f"lmdb without a cache: {r.stderr!r}")
    r = run([shardpack, "verify", f"{base}/damaged"], no_cache_env)
    check(r.returncode == 1 and r.stderr == f"verify failed: {base}/damaged/shard-000001.tar does not match the "
          "checksum its manifest lists, in 3 downloads (the server holds a damaged or changed copy)\n",
          f"damaged, without a cache: {r.stderr!r}")

    r = run([shardpack, "verify", f"{base}/damaged"], env)
    check(r.returncode == 1 and r.stderr == f"verify failed: {base}/damaged/shard-000001.tar does not match the "
          "checksum its manifest lists, in 3 downloads (the server holds a damaged or changed copy)\n", f"damaged: {r.stderr!r}")
    cached = [f for d, _, fs in os.walk(cache) if os.path.basename(d).startswith("damaged-") for f in fs]
    check("shard-000001.tar" not in cached and
          not any(".part" in f for f in cached), f"the cache kept a damaged or partial file: {sorted(cached)}")
finally:
    stop_process(nginx)

sys.exit(checks.finish())
