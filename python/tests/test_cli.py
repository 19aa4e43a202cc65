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


def test_doctor_json_gives_every_layer_and_a_verdict(tree, tmp_path):
    """shardpack doctor --json (issue 18): the figures a script reads, consistent with each other:
    the sample is within --sample, the table lists the layers fastest first, and the model rate far
    above anything measured makes the input pipeline the bottleneck."""
    env = dict(os.environ, TMPDIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-m", "shardpack", "doctor", str(tree / "src"), "--seconds", "2", "--sample",
                        "20", "--crop", "32", "--batch", "8", "--model-rate", "1e9", "--json"],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["storage"]["files_listed"] == 60 and report["storage"]["sample_files"] == 20
    layers = [layer for layer in report["layers"] if layer["measured"]]
    assert [layer["name"] for layer in layers if layer["name"] in ("storage", "decode", "transform")]
    assert [layer["images_per_s"] for layer in layers] == sorted((layer["images_per_s"] for layer in layers),
                                                                  reverse=True)
    # The feed is the slowest of the storage, the copy to the device and the loader (which does the
    # decode and the transform as training does): never above the loader row printed beside it.
    bounds = {layer["name"]: layer["images_per_s"] for layer in layers if layer["name"] in ("storage", "host to device")}
    bounds["loader"] = report["loader"]["images_per_s"]
    assert report["feed_today"] == min(bounds.values())
    slowest = min(bounds, key=bounds.get)
    assert report["bottleneck"] == (slowest if slowest != "loader" else "decode" if report["decode"][
        "crop_decode_per_core"] <= report["transform"]["per_core"] else "transform")
    assert report["verdict"].startswith("the input pipeline is the bottleneck")
    assert report["loader"]["images_per_s"] > 0
    assert os.listdir(tmp_path) == []  # its temporary folder is gone
    assert "doctor: storage: listing" in r.stderr  # the progress lines


def test_bench_json_says_keeps_up_only_when_a_consumer_was_simulated(wds):
    """keeps_up answers --consumer-rate; without one it is null (it said true, of no consumer)."""
    plain = json.loads(run("bench", str(wds), "--epochs", "1", "--crop", "16", "--json").stdout)
    assert plain["keeps_up"] is None and plain["images"] == 60
    paced = json.loads(run("bench", str(wds), "--epochs", "1", "--crop", "16", "--json",
                           "--consumer-rate", "1000000").stdout)
    assert isinstance(paced["keeps_up"], bool)
