"""Datasets read from an S3-protocol store: moto's S3 server on 127.0.0.1 holds them, uploaded by
awscli, and shardpack reads s3://BUCKET/NAME through a proxy of this test that checks every
request's AWS Signature V4 with an independent implementation (botocore's S3SigV4Auth, recomputed
from the request and the secret key) before passing it on: moto does not check SigV4 itself.
For each format, `stat` and `verify --decode` of the s3:// URL print what they print for the local
folder and the loader's batches are byte-identical (through an empty cache, shards arriving as the
epoch goes; and streamed without a cache, except LMDB); every request shardpack signed passed the
check; a wrong secret key gives a clear error (and the proxy saw the bad signature); missing
credentials give a clear error before any request.

usage: s3_dataset_test.py SHARDPACK MAKE_IMAGE_TREE DUMP_BATCHES WORKDIR
Exits 77 (skipped) when moto, awscli or botocore is not installed (scripts/install-deps.sh
installs them into build/venv).
"""

import os
import subprocess
import sys

from checks import Checks, fresh_folder, pack_every_format
from s3_store import BUCKET, S3Store, missing_tools

shardpack, make_tree, dump_batches, work = sys.argv[1:5]
why = missing_tools()
if why:
    print("skipped:", why)
    sys.exit(77)

fresh_folder(work)
checks = Checks("s3 dataset test")
check = checks.check

serve = os.path.join(work, "serve")
packs = pack_every_format(shardpack, make_tree, work, serve)

with S3Store(os.path.join(work, "store")) as store:
    # Upload with a real S3 client, straight to the store.
    store.upload(serve, "")
    env = store.client_env(SHARDPACK_CACHE=os.path.join(work, "cache"))
    for name in packs:
        local, url = os.path.join(serve, name), f"s3://{BUCKET}/{name}"
        for command in (["stat"], ["verify", "--decode"]):
            want = subprocess.run([shardpack] + command + [local], capture_output=True, text=True)
            got = subprocess.run([shardpack] + command + [url], capture_output=True, text=True, env=env)
            check(got.returncode == want.returncode == 0, f"{name}: {command[0]} of {url}: {got.stderr}")
            check(got.stdout == want.stdout, f"{name}: {command[0]} of {url} printed\n{got.stdout}\nnot\n{want.stdout}")
        # The loader: through a cache of its own (empty, so shards arrive as the epoch goes), and,
        # with the streaming shuffle, streamed without a cache (not LMDB: it needs one).
        modes = [("cached", dict(env, SHARDPACK_CACHE=os.path.join(work, "cache-loader-" + name)))]
        if name != "lmdb":
            streaming = {k: v for k, v in env.items() if k != "SHARDPACK_CACHE"}
            modes.append(("streamed", dict(streaming, DUMP_SHUFFLE_BUFFER="3")))
        # Buckets: each sample's size from the sample tables, read through the store (docs/buckets.md).
        modes.append(("bucketed", dict(env, SHARDPACK_CACHE=os.path.join(work, "cache-buckets-" + name),
                                       DUMP_BUCKETS="32x16,24x16,16x16")))
        for mode, mode_env in modes:
            outputs = []
            for source, tag in ((local, "local"), (url, "s3")):
                out = os.path.join(work, f"{name}-{mode}-{tag}")
                r = subprocess.run([dump_batches, source, out, "4", "7", "16", "0", "0", "1", "2"],
                                   capture_output=True, text=True, env=mode_env)
                check(r.returncode == 0, f"{name}: dump_batches {mode} {tag}: {r.stderr}")
                outputs.append((open(out + ".bin", "rb").read(), open(out + ".txt").read()))
            check(outputs[0] == outputs[1] and len(outputs[0][0]) > 0,
                  f"{name}: the loader's batches from S3 ({mode}) differ")
    check(store.good > 0 and not store.bad,
          f"signed requests: {store.good} passed the check, refused: {store.bad[:3]}")

    bad = dict(env, AWS_SECRET_ACCESS_KEY="not-the-secret", SHARDPACK_CACHE=os.path.join(work, "cache-bad"))
    r = subprocess.run([shardpack, "stat", f"s3://{BUCKET}/wds"], capture_output=True, text=True, env=bad)
    endpoint = env["AWS_ENDPOINT_URL"]
    check(r.returncode == 1 and r.stderr == f"stat failed: GET {endpoint}/{BUCKET}/wds/manifest.json answered HTTP "
          "403 (access denied: check the URL and credentials)\n", f"wrong secret: {r.stderr!r}")
    check(store.bad == ["signature mismatch"], f"the proxy saw {store.bad}")
    none = {k: v for k, v in env.items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    r = subprocess.run([shardpack, "stat", f"s3://{BUCKET}/wds"], capture_output=True, text=True, env=none)
    check(r.returncode == 1 and r.stderr == f"stat failed: s3://{BUCKET}/wds needs credentials: set "
          "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones; AWS_ENDPOINT_URL "
          "for a store other than AWS)\n", f"no credentials: {r.stderr!r}")

sys.exit(checks.finish())
