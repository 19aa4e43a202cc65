"""pack, convert and merge straight into an S3-protocol store (moto's server behind a proxy that checks every
request's AWS Signature V4 with botocore: tests/interop/s3_store.py), with small multipart parts so
that shards go up in parts:

- wds and raw packed into s3://, downloaded with awscli, equal a local pack byte for byte (every
  file), and `verify` of the s3:// URL passes; local disk held at most SHARDPACK_S3_UPLOADS
  published files at every upload, and the staging folder is gone afterwards;
- uploads that fail now and then (HTTP 503 on the first attempt of every third object or part) are retried: the dataset is still byte-identical;
- a shard whose uploads keep failing stops the pack with an error naming it; the store then holds
  no manifest, and its journal lists only shards that are there; --resume without the fault
  finishes it byte-identical, without uploading those shards again; a journaled shard replaced by
  other bytes of the same size (and another x-amz-meta-xxh64) makes --resume refuse;
- multipart uploads never leak: a failed shard's upload is aborted; one whose abort failed too (as a
  kill leaves it) is aborted by --resume of its part, while another part's live upload stays;
- a pack in 2 parts uploads independently; merge of the s3:// URL refuses while a part is missing
  and then writes a manifest that makes the dataset equal the one-node pack;
- convert from a local dataset into s3:// equals convert into a folder;
- append into s3:// equals pack and append into a folder; an appended shard whose uploads keep
  failing leaves the store's manifest as it was, and append --resume finishes it;
- shardpack.Writer into s3://, given the tree's files in pack's order, equals the local pack, and
  Writer(append=True) into it equals the local append;
- refusals: LMDB (written in place), an http:// OUT, a non-empty OUT without --force, a bad secret.

usage: s3_output_test.py SHARDPACK MAKE_IMAGE_TREE WORKDIR PYTHON_PACKAGE_DIR
Exits 77 (skipped) when moto, awscli or botocore is missing (scripts/install-deps.sh installs them
into build/venv).
"""

import json
import os
import subprocess
import sys

from checks import Checks, fresh_folder
from s3_store import BUCKET, S3Store, missing_tools

shardpack, make_tree, work, python_dir = sys.argv[1:5]
why = missing_tools()
if why:
    print("skipped:", why)
    sys.exit(77)

fresh_folder(work)
checks = Checks("s3 output test")
check = checks.check
src, staging = os.path.join(work, "src"), os.path.join(work, "staging")
subprocess.run([make_tree, src, "--classes", "3", "--images", "14", "--small"], check=True,
               stdout=subprocess.DEVNULL)
FLAGS = {"wds": ["--samples-per-shard", "4"], "raw": ["--format", "raw", "--crop", "16", "--samples-per-shard", "5"]}


def run(args, env=None):
    return subprocess.run([shardpack] + args, capture_output=True, text=True, env=env)


def local_files(folder):
    files = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            files[name] = f.read()
    return files


def without_last_append(files):
    """The files, with manifest.json's "last_append" and "manifest_xxh64" taken out."""
    manifest = json.loads(files["manifest.json"])
    manifest.pop("last_append", None)
    manifest.pop("manifest_xxh64", None)
    return dict(files, **{"manifest.json": json.dumps(manifest, sort_keys=True).encode()})


def differences(got, want):
    return sorted(set(got) ^ set(want)) + sorted(n for n in set(got) & set(want) if got[n] != want[n])


# The references: the same packs into local folders. The manifest records OUT's last component, so
# each reference folder is named as the prefix it is compared with.
references = {}
for name, flags in FLAGS.items():
    out = os.path.join(work, "local", name)
    r = run(["pack", src, out, "--quiet", "--no-sync"] + flags)
    check(r.returncode == 0, f"local pack {name}: {r.stderr}")
    references[name] = local_files(out)

with S3Store(os.path.join(work, "store")) as store:
    # Parts of 16 KiB: every shard goes up as a multipart upload (in 2 parts).
    env = store.client_env(SHARDPACK_S3_PART_SIZE="16384", SHARDPACK_S3_UPLOADS="2", SHARDPACK_STAGING=staging,
                           SHARDPACK_CACHE=os.path.join(work, "cache"), SHARDPACK_HTTP_ATTEMPTS="3")
    most_staged = [0]

    def watch_staging(method, path):
        if method == "PUT" and os.path.isdir(staging):
            for folder in os.listdir(staging):
                staged = [f for f in os.listdir(os.path.join(staging, folder)) if f.startswith(".upload-")]
                most_staged[0] = max(most_staged[0], len(staged))

    store.on_request = watch_staging
    for name, flags in FLAGS.items():
        r = run(["pack", src, f"s3://{BUCKET}/{name}", "--no-sync"] + flags, env)
        check(r.returncode == 0 and f" in s3://{BUCKET}/{name} " in r.stdout, f"pack {name} into s3: {r.stderr}")
        got = store.download(name, os.path.join(work, "dl", name))
        check(differences(got, references[name]) == [], f"{name}: s3 differs from local: "
              f"{differences(got, references[name])}")
        r = run(["verify", f"s3://{BUCKET}/{name}"], env)
        check(r.returncode == 0 and r.stdout.startswith("verify OK"), f"verify s3 {name}: {r.stdout} {r.stderr}")
    check(store.count("POST", "/wds/shard-000000.tar", ["uploads"]) == 1 and
          store.count("PUT", "/wds/shard-000000.tar", ["partNumber", "uploadId"]) > 1,
          "shard-000000.tar of wds did not go up as a multipart upload")
    check(0 < most_staged[0] <= 2, f"up to {most_staged[0]} published files waited on local disk (at most 2)")
    check(os.listdir(staging) == [], f"staging folders left: {os.listdir(staging)}")
    store.on_request = None

    # append into s3:// (issue 42): the new shards are packed in a local staging folder, uploaded
    # to their names, and the manifest goes up last. The store then holds, byte for byte, what pack
    # and append into a folder give; `more` brings a class the dataset lacks.
    more = os.path.join(work, "more")
    subprocess.run([make_tree, more, "--classes", "4", "--images", "6", "--small", "--seed", "2"], check=True,
                   stdout=subprocess.DEVNULL)
    for name, flags in FLAGS.items():
        local = os.path.join(work, "local-appended", name)
        r = run(["pack", src, local, "--quiet", "--no-sync"] + flags)
        r2 = run(["append", local, more, "--quiet", "--no-sync"] + flags)
        check(r.returncode == r2.returncode == 0, f"local pack and append {name}: {r.stderr} {r2.stderr}")
        url = f"s3://{BUCKET}/appended/{name}"
        r = run(["pack", src, url, "--quiet", "--no-sync"] + flags, env)
        r2 = run(["append", url, more, "--no-sync"] + flags, env)
        check(r.returncode == r2.returncode == 0 and f"appended to {url} " in r2.stdout,
              f"pack and append {name} in s3: {r.stderr} {r2.stdout} {r2.stderr}")
        got, want = store.download(f"appended/{name}", os.path.join(work, "dl-appended", name)), local_files(local)
        check(differences(got, want) == [], f"{name}: append in s3 differs from a local one: {differences(got, want)}")
        r = run(["verify", url], env)
        check(r.returncode == 0 and r.stdout.startswith("verify OK"), f"verify of the appended {url}: {r.stdout} {r.stderr}")
    check(os.listdir(staging) == [], f"staging folders left after appends: {os.listdir(staging)}")
    # A new shard whose uploads keep failing: the append stops naming it, the store's manifest is
    # the old one (the dataset verifies as it was), and --resume then finishes the append.
    url = f"s3://{BUCKET}/append-broken/wds"
    r = run(["pack", src, url, "--quiet", "--no-sync"] + FLAGS["wds"], env)
    old_manifest = store.download("append-broken/wds", os.path.join(work, "dl-append-old"))["manifest.json"]
    store.fault = lambda method, path: 500 if method == "PUT" and "append-broken/wds/shard-000005.tar" in path else None
    r = run(["append", url, more, "--quiet", "--no-sync"] + FLAGS["wds"], env)
    store.fault = None
    check(r.returncode == 1 and f"uploading {url}/shard-000005.tar: " in r.stderr, f"a failing appended shard: {r.stderr!r}")
    left = store.download("append-broken/wds", os.path.join(work, "dl-append-broken"))
    check(left.get("manifest.json") == old_manifest, "a failed append changed the manifest in the store")
    r = run(["verify", url], env)
    check(r.returncode == 0 and "14 samples" in r.stdout, f"the dataset after a failed append: {r.stdout} {r.stderr}")
    r = run(["append", url, more, "--quiet", "--no-sync", "--resume"] + FLAGS["wds"], env)
    check(r.returncode == 0, f"append --resume after the failed upload: {r.stderr}")
    got = store.download("append-broken/wds", os.path.join(work, "dl-append-resumed"))
    want = local_files(os.path.join(work, "local-appended", "wds"))
    check(differences(got, want) == [], f"append resumed in s3: {differences(got, want)}")
    check(os.listdir(staging) == [], f"staging folders left after the resumed append: {os.listdir(staging)}")

    # Keys as S3 defines them: a prefix with a space, '+', '~', '=', '%' and a non-ASCII letter goes
    # up and comes back through the signature check (one encoder for writes and reads), and
    # awscli finds the objects under that very key.
    odd = "keys/my data+v1~=%\u00e9"
    odd_local = os.path.join(work, "local-odd", os.path.basename(odd))  # the manifest names the dataset
    r = run(["pack", src, odd_local, "--no-sync", "--quiet"] + FLAGS["wds"])
    check(r.returncode == 0, f"pack into {odd_local!r}: {r.stderr}")
    r = run(["pack", src, f"s3://{BUCKET}/{odd}", "--no-sync", "--quiet"] + FLAGS["wds"], env)
    check(r.returncode == 0, f"pack into s3://{BUCKET}/{odd}: {r.stderr}")
    got = store.download(odd, os.path.join(work, "dl-odd"))
    check(differences(got, local_files(odd_local)) == [], f"{odd!r}: s3 differs from local: "
          f"{differences(got, local_files(odd_local))}")
    for command in (["verify"], ["stat"]):
        r = run(command + [f"s3://{BUCKET}/{odd}"], env)
        want = run(command + [odd_local])
        check(r.returncode == 0 and r.stdout == want.stdout, f"{command[0]} {odd!r}: {r.stdout} {r.stderr}")
    check(not store.bad, f"keys with odd characters: the proxy refused {store.bad[:3]}")

    # Uploads failing now and then: the first attempt of every third PUT target (object or part)
    # answers 503; retried, same bytes. Counting targets, not requests, keeps the test independent
    # of how the concurrent uploads interleave (a global "every third request" could hit one
    # object's three attempts in a row and exhaust its retries).
    seen = {}

    def every_third_put(method, path):
        if method != "PUT":
            return None
        first = path not in seen
        seen.setdefault(path, len(seen) + 1)
        return 503 if first and seen[path] % 3 == 0 else None

    store.fault = every_third_put
    r = run(["pack", src, f"s3://{BUCKET}/flaky/wds", "--no-sync", "--quiet"] + FLAGS["wds"], env)
    store.fault = None
    check(r.returncode == 0, f"pack through failing uploads: {r.stderr}")
    check(len(seen) >= 3, f"only {len(seen)} PUT targets: no upload was made to fail")
    got = store.download("flaky/wds", os.path.join(work, "dl-flaky"))
    check(differences(got, references["wds"]) == [], f"flaky uploads: {differences(got, references['wds'])}")

    # A shard whose uploads keep failing: a clear error, no manifest, a journal of shards that exist.
    store.fault = lambda method, path: 500 if method == "PUT" and "shard-000002.tar" in path else None
    url = f"s3://{BUCKET}/broken/wds"
    r = run(["pack", src, url, "--no-sync", "--quiet"] + FLAGS["wds"], env)
    store.fault = None
    check(r.returncode == 1 and f"uploading {url}/shard-000002.tar: " in r.stderr and "answered HTTP 500" in r.stderr
          and "gave up after 3 attempts" in r.stderr and "--resume" in r.stderr, f"failing shard: {r.stderr!r}")
    check([k for k, _ in store.live_uploads() if k.startswith("broken/")] == [],
          f"a failed upload was not aborted: {store.live_uploads()}")
    left = store.download("broken/wds", os.path.join(work, "dl-broken"))
    check("manifest.json" not in left, f"a manifest was uploaded beside a missing shard: {sorted(left)}")
    journal = json.loads(left.get("pack-journal.json", b"{}"))
    journaled = [s["url"] for s in journal.get("shardlist", [])]
    check(journaled and all(f in left and len(left[f]) == references["wds"][f].__len__() for f in journaled)
          and "shard-000002.tar" not in journaled, f"the journal lists {journaled}; the store has {sorted(left)}")
    before = {f: store.count("PUT", f"/broken/wds/{f}") for f in journaled}
    r = run(["pack", src, url, "--no-sync", "--quiet", "--resume"] + FLAGS["wds"], env)
    check(r.returncode == 0, f"--resume after the failed upload: {r.stderr}")
    got = store.download("broken/wds", os.path.join(work, "dl-resumed"))
    check(differences(got, references["wds"]) == [], f"resumed: {differences(got, references['wds'])}")
    check(all(store.count("PUT", f"/broken/wds/{f}") == n for f, n in before.items()),
          "--resume uploaded journaled shards again")

    # A journaled shard replaced by other bytes of its size: --resume refuses it.
    store.fault = lambda method, path: 500 if method == "PUT" and "shard-000002.tar" in path else None
    url = f"s3://{BUCKET}/swapped/wds"
    run(["pack", src, url, "--no-sync", "--quiet"] + FLAGS["wds"], env)
    store.fault = None
    first = store.download("swapped/wds", os.path.join(work, "dl-swapped"))["shard-000000.tar"]
    forged = os.path.join(work, "forged")
    os.makedirs(forged)
    with open(os.path.join(forged, "shard-000000.tar"), "wb") as f:
        f.write(bytes(len(first)))
    store.aws("s3", "cp", "--only-show-errors", "--metadata", "xxh64=0123456789abcdef",
              os.path.join(forged, "shard-000000.tar"), f"{url}/shard-000000.tar")
    r = run(["pack", src, url, "--no-sync", "--quiet", "--resume"] + FLAGS["wds"], env)
    check(r.returncode == 1 and r.stderr.startswith(f"pack failed: {url}/shard-000000.tar has XXH64 0123456789abcdef, "
                                                    "not ") and "use --force to start over" in r.stderr,
          f"--resume over a replaced shard: {r.stderr!r}")

    # Two parts, uploaded independently, then merged in the store.
    url = f"s3://{BUCKET}/parts/wds"
    r0 = run(["pack", src, url, "--no-sync", "--quiet", "--partition", "0/2"] + FLAGS["wds"], env)
    r = run(["merge", url], env)
    check(r0.returncode == 0 and r.returncode == 1 and "part 1 of 2 is missing" in r.stderr,
          f"merge with a part missing: {r0.stderr} {r.stderr!r}")
    r1 = run(["pack", src, url, "--no-sync", "--quiet", "--partition", "1/2"] + FLAGS["wds"], env)
    r = run(["merge", url], env)
    check(r1.returncode == 0 and r.returncode == 0, f"parts and merge: {r1.stderr} {r.stderr}")
    got = store.download("parts/wds", os.path.join(work, "dl-parts"))
    got = {n: b for n, b in got.items() if not n.startswith("part-")}
    check(differences(got, references["wds"]) == [], f"merged parts: {differences(got, references['wds'])}")

    # Multipart uploads never leak. Part 0's shard-000001.tar fails, and so does its abort (as a kill
    # would leave it): its upload stays open. Another task (part 1) has a live upload of its own
    # shard-000003.tar. --resume of part 0 aborts its own stale upload, leaves part 1's alone.
    url = f"s3://{BUCKET}/leaks/wds"
    store.fault = lambda method, path: (500 if "shard-000001.tar" in path and
                                        (method == "DELETE" or (method == "PUT" and "partNumber" in path)) else None)
    r = run(["pack", src, url, "--no-sync", "--quiet", "--partition", "0/2"] + FLAGS["wds"], env)
    store.fault = None
    stale = [(k, i) for k, i in store.live_uploads() if k.startswith("leaks/")]
    check(r.returncode == 1 and [k for k, _ in stale] == ["leaks/wds/shard-000001.tar"],
          f"a failed part with a failed abort: {r.stderr!r}, uploads open {stale}")
    other = store.start_upload("leaks/wds/shard-000003.tar")
    r = run(["pack", src, url, "--no-sync", "--quiet", "--partition", "0/2", "--resume"] + FLAGS["wds"], env)
    check(r.returncode == 0, f"--resume of part 0: {r.stderr}")
    check(store.live_uploads() == [("leaks/wds/shard-000003.tar", other)],
          f"after --resume the store holds the uploads {store.live_uploads()}")
    check(stale[0] in store.aborted, f"the stale upload {stale} was not aborted: {store.aborted}")
    r = run(["pack", src, url, "--no-sync", "--quiet", "--partition", "1/2"] + FLAGS["wds"], env)
    r2 = run(["merge", url], env)
    got = {n: b for n, b in store.download("leaks/wds", os.path.join(work, "dl-leaks")).items()
           if not n.startswith("part-")}
    check(r.returncode == 0 and r2.returncode == 0 and differences(got, references["wds"]) == [],
          f"the parts after the leak: {r.stderr} {r2.stderr} {differences(got, references['wds'])}")
    print(f"multipart: {len(store.aborted)} uploads aborted through the proxy; open now: {store.live_uploads()}")

    # convert from a local dataset into the store equals convert into a folder.
    local_wds = os.path.join(work, "local", "wds")
    conv = os.path.join(work, "conv", "raw")
    r = run(["convert", local_wds, conv, "--format", "raw", "--crop", "16", "--no-sync", "--quiet"])
    r2 = run(["convert", local_wds, f"s3://{BUCKET}/conv/raw", "--format", "raw", "--crop", "16", "--no-sync",
              "--quiet"], env)
    got = store.download("conv/raw", os.path.join(work, "dl-conv"))
    check(r.returncode == 0 and r2.returncode == 0 and differences(got, local_files(conv)) == [],
          f"convert into s3: {r2.stderr} {differences(got, local_files(conv))}")

    # shardpack.Writer into the store: the tree's files in pack's order (sorted class folders, sorted
    # files), with their paths and pack's class list, give the local pack's files, byte for byte.
    writer = (
        "import os, sys, shardpack\n"
        "src, url = sys.argv[1:3]\n"
        "classes = sorted(os.listdir(src))\n"
        "with shardpack.Writer(url, classes=classes, samples_per_shard=4, sync=False) as w:\n"
        "    for c in classes:\n"
        "        for f in sorted(os.listdir(os.path.join(src, c))):\n"
        "            w.write(open(os.path.join(src, c, f), 'rb').read(), label=c, path=c + '/' + f)\n")
    # The sanitizer builds have no Python module (a sanitized extension cannot load into Debian's
    # python3): there the Release build's run of this test is the one that checks the writer.
    package = os.path.join(python_dir, "shardpack")
    if os.path.isdir(package) and any(f.startswith("_shardpack") for f in os.listdir(package)):
        r = subprocess.run([sys.executable, "-c", writer, src, f"s3://{BUCKET}/writer/wds"], capture_output=True,
                           text=True, env=dict(env, PYTHONPATH=python_dir))
        got = store.download("writer/wds", os.path.join(work, "dl-writer"))
        check(r.returncode == 0 and differences(got, references["wds"]) == [],
              f"shardpack.Writer into s3: {r.stderr} {differences(got, references['wds'])}")
        # ... and Writer(append=True) of the `more` tree to it: what `shardpack append` gives.
        appender = writer.replace("shardpack.Writer(url,", "shardpack.Writer(url, append=True,")
        r = subprocess.run([sys.executable, "-c", appender, more, f"s3://{BUCKET}/writer/wds"], capture_output=True,
                           text=True, env=dict(env, PYTHONPATH=python_dir))
        got = store.download("writer/wds", os.path.join(work, "dl-writer-appended"))
        want = local_files(os.path.join(work, "local-appended", "wds"))
        # The manifests differ in what `shardpack append` records of its source ("last_append", for
        # `append --resume`; a writer has no source to record), and so in their own checksums.
        check("last_append" not in json.loads(got["manifest.json"]), "the writer recorded a last_append")
        got, want = without_last_append(got), without_last_append(want)
        check(r.returncode == 0 and differences(got, want) == [],
              f"shardpack.Writer(append=True) into s3: {r.stderr} {differences(got, want)}")
    else:
        print(f"shardpack.Writer into s3: not checked, {python_dir} holds no Python module (a sanitizer build)")

    # Refusals.
    r = run(["pack", src, f"s3://{BUCKET}/lmdb", "--format", "lmdb"], env)
    check(r.returncode == 1 and r.stderr == "pack failed: the lmdb format cannot be written into an object store: its "
          "library writes one file in place; pack it into a local folder and upload that (aws s3 cp --recursive), or "
          f"pack wds or raw into s3://{BUCKET}/lmdb\n", f"lmdb into s3: {r.stderr!r}")
    r = run(["pack", src, "http://127.0.0.1:9/x"], env)
    check(r.returncode == 1 and r.stderr == "pack failed: http://127.0.0.1:9/x: an output goes to a local folder or "
          "to s3://BUCKET/PREFIX (http(s):// is read-only)\n", f"http OUT: {r.stderr!r}")
    r = run(["pack", src, f"s3://{BUCKET}/wds", "--no-sync"] + FLAGS["wds"], env)
    check(r.returncode == 1 and r.stderr == f"pack failed: output folder s3://{BUCKET}/wds is not empty; choose an "
          "empty folder or pass --force to replace its dataset\n", f"non-empty OUT: {r.stderr!r}")
    r = run(["pack", src, f"s3://{BUCKET}/wds", "--no-sync", "--quiet", "--force"] + FLAGS["wds"], env)
    got = store.download("wds", os.path.join(work, "dl-forced"))
    check(r.returncode == 0 and differences(got, references["wds"]) == [], f"--force into s3: {r.stderr}")
    check(store.good > 0 and not store.bad, f"signatures: {store.good} passed, refused: {store.bad[:3]}")
    r = run(["pack", src, f"s3://{BUCKET}/denied"], dict(env, AWS_SECRET_ACCESS_KEY="not-the-secret"))
    check(r.returncode == 1 and r.stderr.startswith(f"pack failed: GET {store.endpoint()}/{BUCKET}?") and
          r.stderr.endswith("answered HTTP 403 (access denied: check the URL and credentials)\n"),
          f"wrong secret: {r.stderr!r}")

sys.exit(checks.finish())
