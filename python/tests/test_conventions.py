"""The conventions PyTorch and webdataset users already know (issue 40), as a user hits them: options
of the wrong type named in Python's words, pack's and the writer's messages in keywords, webdataset's
writer habits, slices, and the paths a user gives (a manifest, shard files, a glob). Each expectation
is checked against an independent reference: tarfile for what the writer wrote, the dataset's own
folder read through another path for what a path opens."""

import glob
import io
import os
import tarfile

import numpy as np
import pytest

import shardpack

torch = pytest.importorskip("torch")


def png(pixels):
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


# --- options of the wrong type: named, with what they take, never guessed at ---

@pytest.mark.parametrize("keyword, message", [
    (dict(threads="2"), "threads='2': threads takes a non-negative int, not str"),
    (dict(batch_size=2.5), "batch_size=2.5: batch_size takes an int of at least 1, not float"),
    (dict(shuffle="False"), "shuffle='False': shuffle takes True or False, not str"),
    (dict(size="224"), "size='224': size takes an int or a (height, width) pair of ints, not str"),
    (dict(drop_last=1), "drop_last=1: drop_last takes True or False, not int"),
])
def test_a_loader_option_of_another_type_is_named(wds, keyword, message):
    with pytest.raises(TypeError) as e:
        shardpack.Loader(wds, **keyword)
    assert str(e.value) == message


def test_a_loader_option_out_of_range_is_a_value_error(wds):
    with pytest.raises(ValueError) as e:
        shardpack.Loader(wds, batch_size=0)
    assert str(e.value) == "batch_size=0: batch_size takes an int of at least 1"


def test_sizes_take_what_the_cli_takes(tree, tmp_path):
    pixels = np.full((8, 8, 3), 7, np.uint8)
    with shardpack.Writer(tmp_path / "sized", shard_size="4KiB", queue_bytes="1MiB") as w:
        for i in range(20):
            w.write(png(pixels + i))
    shards = sorted(glob.glob(str(tmp_path / "sized" / "*.tar")))
    assert len(shards) > 1 and all(os.path.getsize(s) <= 4096 for s in shards)  # a new shard before 4 KiB
    with pytest.raises(ValueError) as e:
        shardpack.Writer(tmp_path / "bad", shard_size="12XB")
    assert str(e.value) == ("shard_size='12XB': '12XB' is not a byte size; write a number with an optional unit, "
                            "e.g. 512MB or 1GiB")
    for keyword, message in [(dict(threads="2"), "threads='2': threads takes an int, not str"),
                             (dict(crop="224"), "crop='224': crop takes an int or a (height, width) pair of ints, "
                                                "not str"),
                             (dict(shard_size=True), 'shard_size=True: shard_size takes bytes as an int or a size '
                                                     'such as "512MB" or "2GiB", not bool')]:
        with pytest.raises(TypeError) as e:
            shardpack.Writer(tmp_path / "bad", **keyword)
        assert str(e.value) == message
    assert len(shardpack.Loader(tmp_path / "sized", batch_size=4, cache_limit="1GB")) == 5


# --- pack's and the writer's messages in the keywords a Python caller has ---

def test_messages_name_python_keywords_not_cli_flags(tree, tmp_path):
    out = tmp_path / "taken"
    out.mkdir()
    (out / "something").write_text("x")
    with pytest.raises(ValueError) as e:
        shardpack.Writer(out)
    assert "pass force=True to replace its dataset" in str(e.value) and "--force" not in str(e.value)
    with pytest.raises(ValueError) as e:
        shardpack.pack(tree / "src", out)
    assert "force=True" in str(e.value) and "--" not in str(e.value)
    w = shardpack.Writer(tmp_path / "cls")
    with pytest.raises(ValueError) as e:
        w.write(png(np.zeros((4, 4, 3), np.uint8)), fields={"cls": "3"})
    w.abort()
    assert str(e.value) == "sample 0: field 'cls': the class is the sample's label (give label=)"


# --- webdataset's writer habits ---

def test_webdataset_sample_dicts_maxcount_and_torch_tensors(tmp_path):
    pixels = (np.arange(6 * 5 * 3) % 251).astype(np.uint8).reshape(6, 5, 3)
    chw = torch.from_numpy(pixels.copy()).permute(2, 0, 1)  # as torchvision.io.read_image gives it
    with shardpack.Writer(tmp_path / "wds", maxcount=2) as w:
        w.write({"__key__": "a", "png": png(pixels), "cls": 1, "txt": "first"})
        w.write({"__key__": "b", "png": png(pixels), "cls": b"2"})  # cls as webdataset writes its text
        w.write(chw, key="c", label=torch.tensor(3))
        w.write(torch.from_numpy(pixels[:, :, 0].copy()), key="d", label=np.int64(0))
    members = {}
    for shard in sorted(glob.glob(str(tmp_path / "wds" / "*.tar"))):
        with tarfile.open(shard) as t:
            names = t.getnames()
            members[os.path.basename(shard)] = names
            for name in names:
                if name.endswith(".cls"):
                    members[name] = t.extractfile(name).read().decode()
                if name.endswith(".txt"):
                    members[name] = t.extractfile(name).read().decode()
    assert sorted(k for k in members if k.endswith(".tar")) == ["shard-000000.tar", "shard-000001.tar"]
    assert {n for n in members["shard-000000.tar"] if n.startswith("a.")} >= {"a.png", "a.cls", "a.txt"}
    assert {n.split(".")[0] for n in members["shard-000000.tar"]} == {"a", "b"}  # maxcount=2: two a shard
    assert (members["a.cls"], members["b.cls"], members["c.cls"], members["d.cls"]) == ("1", "2", "3", "0")
    assert members["a.txt"] == "first"
    ds = shardpack.open(tmp_path / "wds")
    from PIL import Image

    decoded = {s["__key__"]: np.asarray(Image.open(io.BytesIO(s.get("png") or s.get("jpg")))) for s in ds}
    assert np.array_equal(decoded["c"], pixels)  # the CHW tensor was stored as its image, not transposed wrong
    assert np.array_equal(decoded["d"], np.repeat(pixels[:, :, :1], 3, axis=2))
    with pytest.raises(ValueError) as e:
        shardpack.Writer(tmp_path / "float").write(torch.zeros(3, 4, 4))
    assert "give a uint8 tensor, not torch.float32" in str(e.value)
    with pytest.raises(ValueError) as e:
        with shardpack.Writer(tmp_path / "noimage") as w:
            w.write({"__key__": "x", "txt": "no image"})
    assert str(e.value).startswith("a sample dict needs one image under one of jpg, jpeg, png, webp, bmp")
    with pytest.raises(TypeError) as e:
        shardpack.Writer(tmp_path / "both", maxcount=2, samples_per_shard=3)
    assert str(e.value) == "give samples_per_shard= or webdataset's maxcount=, not both"


# --- slices and paths ---

def test_slices_give_what_a_list_slice_gives(wds):
    ds = shardpack.open(wds)
    keys = [ds[i]["__key__"] for i in range(len(ds))]
    assert [s["__key__"] for s in ds[1:3]] == keys[1:3]
    assert [s["__key__"] for s in ds[-3:]] == keys[-3:]
    assert [s["__key__"] for s in ds[::20]] == keys[::20]
    assert ds[5:2] == []
    with pytest.raises(TypeError) as e:
        ds["3"]
    assert str(e.value) == "dataset indices must be integers or slices, not str"


def test_a_manifest_shard_files_and_a_glob_open_the_dataset(wds):
    want = [s["__key__"] for s in shardpack.open(wds)]
    assert [s["__key__"] for s in shardpack.open(wds / "manifest.json")] == want
    shards = sorted(glob.glob(str(wds / "*.tar")))
    assert len(shards) == 4
    assert [s["__key__"] for s in shardpack.open(shards)] == want
    assert [s["__key__"] for s in shardpack.open(str(wds / "*.tar"))] == want
    assert len(shardpack.Loader(str(wds / "*.tar"), batch_size=8, shuffle=False)) == (len(want) + 7) // 8
    with pytest.raises(FileNotFoundError) as e:
        shardpack.open(str(wds / "*.tarx"))
    assert str(e.value).endswith("*.tarx matches no file: give a dataset folder, shard files, or a pattern that "
                                 "matches them")


def test_stat_takes_the_manifest_path(wds):
    import subprocess

    from conftest import tool

    by_folder = subprocess.run([tool("SHARDPACK_CLI"), "stat", str(wds), "--json"], capture_output=True, text=True)
    by_manifest = subprocess.run([tool("SHARDPACK_CLI"), "stat", str(wds / "manifest.json"), "--json"],
                                 capture_output=True, text=True)
    assert by_folder.returncode == 0 and by_manifest.returncode == 0, by_manifest.stderr
    assert by_manifest.stdout == by_folder.stdout


# --- the DataLoader and checkpoint habits ---

def test_iterable_dataset_samples_are_chw_as_torchvision_gives_them(wds):
    """torchvision's ToTensor gives (3, H, W) per sample, so a DataLoader's batch is what model()
    takes; (H, W, 3) on request. Both are the same pixels, read independently through open()."""
    import torch.utils.data

    def first_batch(**options):
        ds = shardpack.IterableDataset(wds, size=16, shuffle=False, transform="eval", chunk=4, **options)
        return next(iter(torch.utils.data.DataLoader(ds, batch_size=4)))

    images, labels = first_batch()
    assert images.shape == (4, 3, 16, 16) and images.dtype == torch.uint8
    conv = torch.nn.Conv2d(3, 2, 3)
    assert conv(images.float()).shape == (4, 2, 14, 14)
    hwc, hwc_labels = first_batch(layout="HWC")
    assert hwc.shape == (4, 16, 16, 3) and torch.equal(hwc_labels, labels)
    assert torch.equal(hwc.permute(0, 3, 1, 2), images)
    # The same pixels as the batched loader's NHWC buffer.
    nhwc, _ = next(iter(shardpack.Loader(wds, batch_size=4, size=16, shuffle=False, transform="eval",
                                         layout="NHWC")))
    assert torch.equal(hwc, nhwc)
    with pytest.raises(ValueError) as e:
        shardpack.IterableDataset(wds, layout="NHWC")
    assert str(e.value) == ("layout='NHWC': an IterableDataset yields one sample at a time: layout takes 'CHW' "
                            "(3, H, W, as torchvision's ToTensor gives) or 'HWC'")


def test_set_epoch_after_load_state_dict_keeps_the_resumed_position(wds):
    """The DistributedSampler habit: a training loop calls set_epoch(epoch) at the top of every epoch,
    also the first one after loading a checkpoint. Doing so must not throw the resume away (which
    would train on the epoch's first batches twice, silently)."""
    def batches(loader):
        return [labels.tolist() for _, labels in loader]

    options = dict(batch_size=8, size=16, seed=3, threads=1)
    whole = shardpack.Loader(wds, **options)
    whole.set_epoch(2)
    epoch = batches(whole)
    first = shardpack.Loader(wds, **options)
    first.set_epoch(2)
    it = iter(first)
    for _ in range(3):
        next(it)
    state = first.state_dict()
    del it

    resumed = shardpack.Loader(wds, **options)
    resumed.load_state_dict(state)
    resumed.set_epoch(state["epoch"])  # as `for epoch in range(start_epoch, epochs): loader.set_epoch(epoch)`
    assert batches(resumed) == epoch[3:]
    resumed.set_epoch(2)  # after iterating, set_epoch starts the epoch again
    assert batches(resumed) == epoch
    other = shardpack.Loader(wds, **options)
    other.load_state_dict(state)
    other.set_epoch(3)  # another epoch than the state's: that epoch from its start
    whole.set_epoch(3)
    assert batches(other) == batches(whole)


def test_an_environment_variable_set_to_nonsense_is_named_not_ignored(wds, monkeypatch):
    """A typo in a job script's export (SHARDPACK_INDEX_MEMORY=512M8) ran with the default unnoticed;
    now the CLI fails naming it, and Python raises ValueError naming it."""
    import subprocess

    from conftest import tool

    want = "SHARDPACK_INDEX_MEMORY='512M8' in the environment: not a size such as 512MB; fix or unset it"
    env = dict(os.environ, SHARDPACK_INDEX_MEMORY="512M8")
    r = subprocess.run([tool("SHARDPACK_CLI"), "stat", str(wds)], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"stat failed: {want}\n"
    r = subprocess.run([tool("SHARDPACK_CLI"), "verify", str(wds)], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and r.stderr == f"verify failed: {want}\n"
    monkeypatch.setenv("SHARDPACK_INDEX_MEMORY", "512M8")
    with pytest.raises(ValueError) as e:
        shardpack.open(wds)
    assert str(e.value) == want
    with pytest.raises(ValueError) as e:
        shardpack.Loader(wds, batch_size=8)
    assert str(e.value) == want
    monkeypatch.setenv("SHARDPACK_INDEX_MEMORY", "512MB")
    assert len(shardpack.open(wds)) == 60
