"""Datasets read over HTTP from a real web server (nginx, started here on 127.0.0.1 and always
stopped): for each format, `stat` and `verify` of the URL print what they print for the local
folder, and the C++ loader's batches from the URL equal those from the local folder byte for byte
(2 ranks, and a resumed epoch), also from a shard list of URLs and of pipe: commands. Also: a second read uses the cache without downloading again
(nginx's access log counts the requests), a missing dataset and a missing cache folder give clear
errors, and a shard the server serves damaged is refused and never published in the cache.

With PYTHON_PACKAGE_DIR (the built Python package, absent in builds without it), also
shardpack.open(URL)[i] in Python equals shardpack.open(folder)[i] for every sample.

usage: http_dataset_test.py SHARDPACK MAKE_IMAGE_TREE DUMP_BATCHES WORKDIR [PYTHON_PACKAGE_DIR]
"""

import os
import shutil
import subprocess
import sys

from checks import Checks, free_port, fresh_folder, pack_every_format, wait_for_port

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
        for command in (["stat"], ["verify", "--decode"]):
            want, got = run([shardpack] + command + [local]), run([shardpack] + command + [url], env)
            check(got.returncode == want.returncode == 0, f"{name}: {command[0]} of the URL: {got.stderr}")
            check(got.stdout == want.stdout, f"{name}: {command[0]} of the URL printed\n{got.stdout}\nnot\n{want.stdout}")
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

        if python_dir:
            script = ("import shardpack, sys\n"
                      "a, b = shardpack.open(sys.argv[1]), shardpack.open(sys.argv[2])\n"
                      "assert len(a) == len(b) > 0, (len(a), len(b))\n"
                      "for i in range(len(a)):\n"
                      "    x, y = a[i], b[i]\n"
                      "    assert x.keys() == y.keys() and all((x[k] == y[k]).all() if hasattr(x[k], 'all') "
                      "else x[k] == y[k] for k in x), i\n"
                      "print(len(a))\n")
            r = run([sys.executable, "-c", script, local, url], dict(env, PYTHONPATH=python_dir))
            check(r.returncode == 0 and r.stdout.strip() == "14", f"{name}: shardpack.open over HTTP in Python: "
                  f"{r.stdout} {r.stderr}")

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
    # pipe: commands that print shards (webdataset's convention), brace-expanded like URLs.
    out = os.path.join(work, "shardlist-pipe")
    r = run([dump_batches, f"pipe:cat {serve}/wds/{spec}", out, "4", "7", "16", "0", "0", "0", "1"], env)
    check(r.returncode == 0 and (open(out + ".bin", "rb").read(), open(out + ".txt").read()) == outputs[0],
          f"the loader's batches from pipe:cat differ from the local shard list's: {r.stderr}")
    r = run([dump_batches, "pipe:exit 3; true x.tar", out, "4", "7", "16", "0", "0", "0", "1"], env)
    check(r.returncode != 0 and "pipe:exit 3; true x.tar: the command exited with status 3" in r.stderr,
          f"a failing pipe: command: {r.stderr!r}")

    # The cache serves a second read without downloading anything but the manifest.
    requests = len(open(os.path.join(work, "access.log")).read().splitlines())
    check(run([shardpack, "stat", f"{base}/wds"], env).returncode == 0, "second stat of the URL")
    log = open(os.path.join(work, "access.log")).read().splitlines()
    check(len(log) == requests + 1 and "/wds/manifest.json" in log[-1],
          f"a cached dataset made {len(log) - requests} requests: {log[requests:]}")

    r = run([shardpack, "stat", f"{base}/missing"], env)
    check(r.returncode == 1 and r.stderr == f"stat failed: {base}/missing/manifest.json does not exist (HTTP 404)\n",
          f"missing dataset: {r.returncode} {r.stderr!r}")
    r = run([shardpack, "stat", f"{base}/wds"], {k: v for k, v in os.environ.items() if k != "SHARDPACK_CACHE"})
    check(r.returncode == 1 and r.stderr == f"stat failed: reading {base}/wds needs a local cache folder: set "
          "SHARDPACK_CACHE=DIR (a folder with room for the dataset)\n", f"no cache: {r.stderr!r}")

    r = run([shardpack, "verify", f"{base}/damaged"], env)
    check(r.returncode == 1 and r.stderr == f"verify failed: {base}/damaged/shard-000001.tar does not match the "
          "checksum its manifest lists, in 3 downloads (the server holds a damaged or changed copy)\n", f"damaged: {r.stderr!r}")
    cached = [f for d, _, fs in os.walk(cache) if os.path.basename(d).startswith("damaged-") for f in fs]
    check("shard-000001.tar" not in cached and "manifest.json" not in cached and
          not any(".part" in f for f in cached), f"the cache kept a damaged or partial file: {sorted(cached)}")
finally:
    nginx.terminate()
    try:
        nginx.wait(timeout=10)
    except subprocess.TimeoutExpired:
        nginx.kill()

sys.exit(checks.finish())
