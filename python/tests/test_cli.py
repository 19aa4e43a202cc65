"""python -m shardpack runs the same code as the shardpack command."""

import json
import os
import subprocess
import sys


def run(*args):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "shardpack", *args], capture_output=True, text=True, env=env)


def test_verify_and_stat_through_python(wds):
    r = run("verify", str(wds))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("verify OK: 4 shards, 60 samples")
    stat = json.loads(run("stat", str(wds), "--json").stdout)
    assert stat["samples"] == 60 and stat["format"] == "wds"


def test_pack_through_python(tree, tmp_path):
    r = run("pack", str(tree / "src"), str(tmp_path / "out"), "--quiet", "--no-sync")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("packed 60 samples into 1 shard")
    bad = run("pack", str(tmp_path / "missing"), str(tmp_path / "o2"))
    assert bad.returncode == 1 and "does not exist" in bad.stderr
