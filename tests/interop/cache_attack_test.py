"""The cache folder against another user of the node, played by a second, unprivileged user (setpriv
--reuid), with the real loader over a real nginx on 127.0.0.1 (started here and always stopped):

- Team cache (SHARDPACK_CACHE_TEAM=1, a folder of a group both users are in): the other member
  replaces a JPEG inside a cached shard (same size, in place) and forges the checked-record to
  match. The next loader must not serve the planted bytes: the record is not the loader's user's
  own, so the shard is hashed, found wrong, and downloaded again (nginx's access log counts it);
  the images equal the local dataset's.
- Private cache under a folder the other user owns (a predictable /tmp/$JOBID made first by them):
  refused when the loader opens, naming that folder (its owner could swap the cache folder).

usage: cache_attack_test.py SHARDPACK MAKE_IMAGE_TREE WORKDIR PYTHON_PACKAGE_DIR
Exits 77 (skipped) unless run as root with setpriv (util-linux): the second user needs both.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

from checks import Checks, start_nginx, stop_process

shardpack, make_tree, _, python_dir = sys.argv[1:5]
if os.geteuid() != 0 or not shutil.which("setpriv"):
    print("skipped: playing a second user needs root and setpriv")
    sys.exit(77)
if not os.path.isdir(os.path.join(python_dir, "shardpack")):
    print("skipped: the Python package is not built here")
    sys.exit(77)
ATTACKER, TEAM = 12345, 4242  # uids and gids of no one on the machine
checks = Checks("cache attack test")
check = checks.check
# Under /tmp (sticky, root's), readable by the second user whatever the checkout's folders allow.
base = tempfile.mkdtemp(prefix="shardpack-cache-attack-")
os.chmod(base, 0o755)
serve = os.path.join(base, "serve")
subprocess.run([make_tree, os.path.join(base, "src"), "--classes", "2", "--images", "24", "--small"], check=True,
               stdout=subprocess.DEVNULL)
subprocess.run([shardpack, "pack", os.path.join(base, "src"), os.path.join(serve, "ds"), "--quiet", "--no-sync",
                "--samples-per-shard", "8"], check=True, stdout=subprocess.DEVNULL)
local = os.path.join(serve, "ds")
manifest = json.load(open(os.path.join(local, "manifest.json")))
shard = manifest["shardlist"][0]["url"]

READ = r"""
import hashlib, json, sys
import shardpack
loader = shardpack.Loader(sys.argv[1], batch_size=4, size=16, shuffle=False, transform="eval", threads=1,
                          cache_dir=sys.argv[2] if len(sys.argv) > 2 else None)
digest = hashlib.sha256()
for images, labels in loader:
    digest.update(images.numpy().tobytes())
print(json.dumps(dict(images=digest.hexdigest(), corrupt=loader.stats()["corrupt"])))
"""

# The other team member: replace bytes inside the shard's first JPEG (same size, in place: the file
# is group-writable), then write records that vouch for the planted file, under every name a record
# may have, replacing what is there (the folder is the group's).
PLANT = r"""
import os, sys
path, xxh64 = sys.argv[1], sys.argv[2]
data = bytearray(open(path, "rb").read())
start = data.index(b"\xff\xda") + 40
data[start:start + 64] = bytes(64)
with open(path, "r+b") as f:
    f.write(data)
st = os.stat(path)
record = f"{xxh64} {st.st_size} {st.st_dev} {st.st_ino} {st.st_mtime_ns} {st.st_ctime_ns}\n"
for name in (path + ".checked", path + ".checked-0"):
    with open(name + ".forged", "w") as f:
        f.write(record)
    os.replace(name + ".forged", name)
print("planted")
"""


def as_user(uid, args):
    return subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", f"--groups={TEAM}", "--"] + args,
                          capture_output=True, text=True, timeout=60)


def read(location, cache=None, env_extra=None):
    env = dict(os.environ, PYTHONPATH=python_dir, **(env_extra or {}))
    env.pop("SHARDPACK_CACHE", None)
    # The loader's user is root here, a member of the team's group too (as the other member is).
    r = subprocess.run(["setpriv", f"--groups={TEAM}", "--", sys.executable, "-c", READ, location] +
                       ([cache] if cache else []), capture_output=True, text=True, env=env, timeout=120)
    return r


os.makedirs(os.path.join(base, "nginx"))
nginx, url = start_nginx(os.path.join(base, "nginx"), serve)
try:
    reference = json.loads(read(local).stdout)

    def shard_gets():
        log = open(os.path.join(base, "nginx", "access.log")).read().splitlines()
        return sum(1 for line in log if f"GET /ds/{shard} " in line)

    # Team cache.
    team = os.path.join(base, "team-cache")
    os.mkdir(team)
    os.chown(team, 0, TEAM)
    os.chmod(team, 0o2770)
    env_team = {"SHARDPACK_CACHE_TEAM": "1"}
    first = read(f"{url}/ds", team, env_team)
    check(first.returncode == 0 and json.loads(first.stdout) == reference, f"team, first read: {first.stderr[-800:]}")
    cached = [os.path.join(d, f) for d, _, fs in os.walk(team) for f in fs if f == shard]
    check(len(cached) == 1, f"team: the shard is cached once, found {cached}")
    plant = as_user(ATTACKER, [sys.executable, "-c", PLANT, cached[0], manifest["shardlist"][0]["xxh64"]])
    check(plant.returncode == 0 and plant.stdout == "planted\n", f"the attacker could not plant: {plant.stderr}")
    before = shard_gets()
    second = read(f"{url}/ds", team, env_team)
    check(second.returncode == 0, f"team, second read failed: {second.stderr}")
    got = json.loads(second.stdout) if second.returncode == 0 else {}
    check(got == reference, f"team: after the planted shard and forged record the loader gave {got}, the local "
                            f"dataset {reference}: the planted bytes were served")
    check(shard_gets() == before + 1, f"team: the planted shard was downloaded {shard_gets() - before} times again, "
                                      "expected once")
    if not checks.failures:
        print("team cache: planted shard hashed, refused and downloaded again; images equal the local dataset's")

    # Private cache under a folder the other user made first.
    job = os.path.join(base, "job-4711")
    os.mkdir(job)
    os.chown(job, ATTACKER, ATTACKER)
    r = read(f"{url}/ds", os.path.join(job, "cache"))
    expected = (f"the cache folder {job}/cache lies in {job}, which belongs to user {ATTACKER}: refused (its owner "
                "could put a folder of theirs in the cache folder's place)")
    check(r.returncode != 0 and expected in r.stderr and "ValueError" in r.stderr,
          f"private cache under the attacker's folder: exit {r.returncode}, {r.stderr[-600:]!r}")
    check(not os.path.exists(os.path.join(job, "cache")), "the cache folder was made in the attacker's folder")
    if not checks.failures:
        print("private cache: a folder above owned by another user is refused at open")
finally:
    stop_process(nginx)
    shutil.rmtree(base, ignore_errors=True)
sys.exit(checks.finish())
