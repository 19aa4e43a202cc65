"""shardpack.open: random access returning WebDataset-style samples."""

import json
import tarfile

import numpy as np
import pytest

import shardpack


def test_samples_are_webdataset_style_dicts(wds, tree):
    ds = shardpack.open(wds)
    assert len(ds) == 60 and ds.format == "wds"
    assert ds.classes == sorted(p.name for p in (tree / "src").iterdir())
    manifest = json.loads((wds / "manifest.json").read_text())
    with tarfile.open(wds / manifest["shardlist"][0]["url"]) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    sample = ds[0]
    key = sample["__key__"]
    ext = "jpg" if "jpg" in sample else "png"
    assert sample[ext] == members[f"{key}.{ext}"]
    assert sample["cls"] == int(members[f"{key}.cls"])
    assert sample["json"] == json.loads(members[f"{key}.json"])
    source = (tree / "src" / sample["json"]["path"]).read_bytes()
    assert sample[ext] == source
    assert ds[-1]["__key__"] == ds[59]["__key__"]
    with pytest.raises(IndexError):
        ds[60]
    assert [s["__key__"] for s in ds][:3] == [ds[i]["__key__"] for i in range(3)]


def test_lmdb_and_raw_datasets(lmdb_dataset, raw, wds):
    a, b = shardpack.open(wds), shardpack.open(lmdb_dataset)
    assert [a[i]["__key__"] for i in range(60)] == [b[i]["__key__"] for i in range(60)]
    assert all(a[i].get("jpg", a[i].get("png")) == b[i].get("jpg", b[i].get("png")) for i in range(60))
    r = shardpack.open(raw)[3]
    assert r["npy"].shape == (32, 32, 3) and r["npy"].dtype == np.uint8


def test_shards_by_brace_range(wds):
    ds = shardpack.open(str(wds / "shard-{000000..000003}.tar"))
    assert len(ds) == 60
    assert ds[17]["__key__"] == shardpack.open(wds)[17]["__key__"]
