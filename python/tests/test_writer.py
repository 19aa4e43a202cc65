"""shardpack.Writer and shardpack.pack() (issue 31), checked with independent readers: Python's
tarfile, python3-lmdb and numpy read what the writer wrote, and pack's own output is the reference
for byte identity."""

import io
import json
import os
import struct
import subprocess
import sys
import tarfile

import numpy as np
import pytest

import shardpack
from conftest import tool


def pack_order(src):
    """The files of an ImageNet-layout tree in pack's order (docs/formats/source-layout.md): class
    folders sorted by name, files sorted within each; labels by class position."""
    classes = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    files = []
    for label, name in enumerate(classes):
        for f in sorted(os.listdir(os.path.join(src, name))):
            files.append((f"{name}/{f}", name, label))
    return classes, files


def tar_members(folder):
    members = {}
    for shard in sorted(f for f in os.listdir(folder) if f.endswith(".tar")):
        with tarfile.open(os.path.join(folder, shard)) as t:
            for m in t.getmembers():
                members[m.name] = t.extractfile(m).read()
    return members


def cli(*args):
    return subprocess.run([tool("SHARDPACK_CLI"), *args], capture_output=True, text=True)


def test_shards_are_byte_identical_to_packs(tree, wds, tmp_path):
    """The files of the tree written in pack's order, with their paths and pack's class list, give
    the very shards, indexes and sample tables pack wrote (the fixture packs with
    --samples-per-shard 16 --no-sync)."""
    src = tree / "src"
    classes, files = pack_order(src)
    out = tmp_path / "written"
    with shardpack.Writer(out, "wds", classes=classes, samples_per_shard=16, sync=False) as w:
        for relpath, name, _ in files:
            w.write((src / relpath).read_bytes(), label=name, path=relpath)
    assert w.summary["samples"] == 60 and w.summary["skipped"] == 0 and w.summary["shards"] == 4
    packed = sorted(f for f in os.listdir(wds) if f != "manifest.json")
    assert sorted(f for f in os.listdir(out) if f != "manifest.json") == packed
    for f in packed:
        assert (out / f).read_bytes() == (wds / f).read_bytes(), f
    mine, theirs = json.loads((out / "manifest.json").read_text()), json.loads((wds / "manifest.json").read_text())
    assert mine["shardlist"] == theirs["shardlist"] and mine["classes"] == theirs["classes"]
    assert mine["options"] == theirs["options"]
    assert cli("verify", str(out)).returncode == 0


def test_every_member_is_its_input(tree, tmp_path):
    """tarfile reads back each image, caption, JSON and label exactly as written, keys given."""
    src = tree / "src"
    classes, files = pack_order(src)
    out = tmp_path / "fields"
    expected = {}
    with shardpack.Writer(out, classes=classes, sync=False, shard_size=64 * 1024) as w:
        for i, (relpath, name, label) in enumerate(files[:20]):
            data = (src / relpath).read_bytes()
            key = f"img{i:03d}"
            caption = f"caption ü {i}"
            w.write(data, key=key, label=label if i % 2 else name,
                    fields={"txt": caption, "boxes.json": {"boxes": [i, i + 1]}, "raw.bin": bytes([i, 0, 255])})
            ext = "png" if data[:4] == b"\x89PNG" else "jpg"
            expected[f"{key}.{ext}"] = data
            expected[f"{key}.txt"] = caption.encode()
            expected[f"{key}.boxes.json"] = json.dumps({"boxes": [i, i + 1]}).encode()
            expected[f"{key}.raw.bin"] = bytes([i, 0, 255])
            expected[f"{key}.cls"] = str(label).encode()
    assert w.summary["shards"] > 1
    members = tar_members(out)
    for name, data in expected.items():
        assert members[name] == data, name
    meta = json.loads(members["img003.json"])
    assert meta["class"] == classes[files[3][2]] and meta["path"] == ""
    assert cli("verify", str(out)).returncode == 0


def test_pixels_to_raw_read_back_equal(tmp_path):
    """Arrays written to raw (keep_size) are the pixels numpy reads from the shard; a grey array is
    stored as RGB."""
    rng = np.random.default_rng(5)
    arrays = [rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8) for h, w in [(17, 23), (40, 8), (5, 5)]]
    grey = rng.integers(0, 256, size=(9, 11), dtype=np.uint8)
    out = tmp_path / "raw"
    with shardpack.Writer(out, "raw", keep_size=True, sync=False) as w:
        for a in arrays:
            w.write(a, label=3)
        w.write(grey)
    flat = np.load(out / "shard-000000.npy")
    offsets = np.load(out / "shard-000000.offsets.npy")
    shapes = np.load(out / "shard-000000.shapes.npy")
    for i, a in enumerate(arrays + [np.repeat(grey[:, :, None], 3, axis=2)]):
        assert np.array_equal(flat[offsets[i]:offsets[i + 1]].reshape(shapes[i]), a), i
    assert np.load(out / "shard-000000.labels.npy").tolist() == [3, 3, 3, -1]


def test_numpy_images_with_captions_to_lmdb(tmp_path):
    """python3-lmdb reads each record: PNG pixels that decode (PIL) to the array written, the
    caption, the class; JPEG pixels at the documented quality decode close to it."""
    import lmdb
    from PIL import Image

    rng = np.random.default_rng(1)
    arrays = [rng.integers(0, 256, size=(12 + i, 20, 3), dtype=np.uint8) for i in range(6)]
    out = tmp_path / "lmdb"
    with shardpack.Writer(out, "lmdb", classes=["a", "b"], sync=False) as w:
        for i, a in enumerate(arrays):
            w.write(a, label="ab"[i % 2], fields={"txt": f"image {i}"})
    env = lmdb.open(str(out), readonly=True, lock=False, subdir=True)
    with env.begin() as txn:
        for i, a in enumerate(arrays):
            record = txn.get(f"{i:09d}".encode())
            assert record[:4] == b"SPR2"
            (n,) = struct.unpack_from("<I", record, 4)
            header = json.loads(record[8:8 + n])
            image = record[8 + n:][:header["image_size"]]
            assert header["format"] == "png" and header["label"] == i % 2 and header["class"] == "ab"[i % 2]
            assert np.array_equal(np.asarray(Image.open(io.BytesIO(image)).convert("RGB")), a)
            assert record[8 + n + header["image_size"]:] == f"image {i}".encode()
    env.close()
    smooth = np.tile(np.arange(64, dtype=np.uint8)[None, :, None] * 3, (48, 1, 3))
    with shardpack.Writer(tmp_path / "jpeg", "lmdb", pixels="jpeg", sync=False) as w:
        w.write(smooth)
    env = lmdb.open(str(tmp_path / "jpeg"), readonly=True, lock=False)
    with env.begin() as txn:
        record = txn.get(b"000000000")
        (n,) = struct.unpack_from("<I", record, 4)
        image = record[8 + n:]
        assert image[:2] == b"\xff\xd8"
        decoded = np.asarray(Image.open(io.BytesIO(image)).convert("RGB")).astype(int)
        assert np.abs(decoded - smooth).mean() < 2.0
    env.close()


def test_an_exception_in_the_block_leaves_no_manifest(tree, tmp_path):
    src = tree / "src"
    _, files = pack_order(src)
    out = tmp_path / "failed"
    with pytest.raises(KeyError):
        with shardpack.Writer(out, samples_per_shard=4, sync=False, queue_samples=4) as w:
            for relpath, _, _ in files[:40]:
                w.write((src / relpath).read_bytes())
            raise KeyError("producer failed")
    assert not (out / "manifest.json").exists()
    assert any(f.endswith(".tar") for f in os.listdir(out))  # complete shards stay, as a killed pack's
    assert not any(f.endswith(".tmp") for f in os.listdir(out))
    r = cli("verify", str(out))
    assert r.returncode != 0 and "manifest.json" in r.stderr
    # A writer does not resume: a new run writes again, replacing what the failed one left.
    with pytest.raises(ValueError, match=r"holds an interrupted pack or writer; a writer does not resume: write it "
                                         r"again with force \(Python: force=True\)"):
        shardpack.Writer(out, samples_per_shard=4, sync=False)
    with shardpack.Writer(out, samples_per_shard=4, sync=False, force=True) as w:
        w.write((src / files[0][0]).read_bytes())
    assert json.loads((out / "manifest.json").read_text())["samples"] == 1


def test_bad_samples_are_skipped_and_reported(tree, tmp_path):
    src = tree / "src"
    _, files = pack_order(src)
    good = (src / files[0][0]).read_bytes()
    out = tmp_path / "skips"
    mask = np.zeros((3, 3), dtype=np.uint8)
    # Skipped without a word before (only the summary told): now a warning each, as the Loader's.
    with pytest.warns(UserWarning) as warned:
        with shardpack.Writer(out, sync=False) as w:
            w.write(good, key="a")
            w.write(good[: len(good) // 2], key="b")
            w.write(good, key="c", fields={"txt": b"\xff\xfe"})
            w.write(good, key="d", fields={"seg.png": mask})
            w.write(b"not an image at all", key="e")
            w.write(good, key="f")
    from PIL import Image

    size = Image.open(io.BytesIO(good)).size
    skipped = {s["path"]: s["reason"] for s in w.summary["skipped_files"]}
    assert w.summary["samples"] == 2 and list(skipped) == ["sample 'b'", "sample 'c'", "sample 'd'", "sample 'e'"]
    assert skipped["sample 'b'"] == "truncated JPEG: no end-of-image marker after the image data"
    assert skipped["sample 'c'"] == "field txt is not valid UTF-8 text"
    assert skipped["sample 'd'"] == (f"field seg.png is 3x3 pixels, its image {size[0]}x{size[1]}; "
                                     "a mask must have its image's size")
    assert skipped["sample 'e'"] == "not a supported image (JPEG, PNG, WebP, BMP)"
    assert set(tar_members(out)) == {"a.jpg", "a.json", "f.jpg", "f.json"}
    assert [str(m.message) for m in warned] == [f"{out}: skipped {path}: {reason}" for path, reason in skipped.items()]
    # on_error="skip": the same, quietly; "raise": the first bad sample stops the writer, named.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with shardpack.Writer(tmp_path / "quiet", sync=False, on_error="skip") as w:
            w.write(good, key="a")
            w.write(b"not an image at all", key="e")
    assert w.summary["samples"] == 1 and len(w.summary["skipped_files"]) == 1
    with pytest.raises(RuntimeError, match="sample 'e'"):
        with shardpack.Writer(tmp_path / "raise", sync=False, on_error="raise") as w:
            w.write(good, key="a")
            w.write(b"not an image at all", key="e")
            for i in range(50):
                w.write(good, key=f"g{i}")
    assert not (tmp_path / "raise" / "manifest.json").exists()
    with pytest.raises(ValueError, match=r"on_error='ignore': give \"warn\", \"skip\" or \"raise\""):
        shardpack.Writer(tmp_path / "bad", on_error="ignore")


def test_strict_raises_naming_the_sample(tree, tmp_path):
    src = tree / "src"
    _, files = pack_order(src)
    good = (src / files[0][0]).read_bytes()
    with pytest.raises(RuntimeError) as e:
        with shardpack.Writer(tmp_path / "strict", strict=True, sync=False) as w:
            w.write(good)
            w.write(good, fields={"json": "{not json"})
            for _ in range(50):
                w.write(good)
    assert "sample 1 (counting writes from 0): field json is not valid JSON" in str(e.value)
    assert not (tmp_path / "strict" / "manifest.json").exists()


def test_samples_wrong_as_given_raise_at_once(tmp_path):
    w = shardpack.Writer(tmp_path / "args", classes=["cat", "dog"], sync=False)
    png = shardpack._shardpack._encode_mask_png(np.zeros((4, 4), dtype=np.uint8))
    with pytest.raises(ValueError, match=r"^sample 0: class 'cow' is not in the writer's class list \(2 classes\)$"):
        w.write(png, label="cow")
    with pytest.raises(ValueError, match=r"^sample 0: label 2 is outside the class list \(-1 for none, 0..1\)$"):
        w.write(png, label=2)
    w.write(png, key="k1", label="dog")
    w.write(png, key="k0", label=np.int64(0))  # numpy's integers are labels too
    with pytest.raises(ValueError, match=r"^sample 'a.b': a key may not hold '\.', '/'"):
        w.write(png, key="a.b")
    with pytest.raises(ValueError, match=r"^sample 'k1': the key was given to an earlier sample; keys must be unique$"):
        w.write(png, key="k1")
    with pytest.raises(ValueError, match=r"^sample 2: give a key to every sample or to none"):
        w.write(png)
    with pytest.raises(ValueError, match=r"^sample 'k2': field 'cls': the class is the sample's label"):
        w.write(png, key="k2", fields={"cls": "1"})
    with pytest.raises(ValueError, match=r"^image: give a uint8 array of shape \(height, width, 3\)"):
        w.write(np.zeros((4, 4, 4), dtype=np.uint8), key="k3")
    with pytest.raises(TypeError, match="label must be an int or a class name, not float"):
        w.write(png, key="k5", label=1.0)
    with pytest.raises(TypeError, match="unknown writer option 'shuffle'"):
        shardpack.Writer(tmp_path / "x", shuffle=True)
    assert w.close()["samples"] == 2
    with pytest.raises(ValueError, match="closed"):
        w.write(png, key="k4")


def test_a_pil_image_is_written_as_its_pixels(tmp_path):
    from PIL import Image

    a = np.random.default_rng(3).integers(0, 256, size=(10, 14, 3), dtype=np.uint8)
    with shardpack.Writer(tmp_path / "pil", sync=False) as w:
        w.write(Image.fromarray(a))
        w.write(Image.fromarray(a).convert("L"))
    m = tar_members(tmp_path / "pil")
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(m["000000000.png"]))), a)
    assert np.asarray(Image.open(io.BytesIO(m["000000001.png"]))).shape == (10, 14, 3)


WRITER_PART = r"""
import sys, os
import shardpack
src, out, part = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(os.path.join(r, f) for r, _, fs in os.walk(src) for f in fs)
with shardpack.Writer(out, part=part, parts=3, samples_per_shard=7, sync=False) as w:
    for f in files[part::3]:
        w.write(open(f, "rb").read(), path=os.path.relpath(f, src))
"""


def test_three_writer_processes_merged(tree, tmp_path):
    """Three processes write parts of one dataset; merge joins them; verify accepts it; every file
    of the tree is in it once, under a key unique across parts."""
    out = tmp_path / "parts"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER_PART, str(tree / "src"), str(out), str(p)])
             for p in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    assert sorted(f for f in os.listdir(out) if f.startswith("writer-")) == [
        f"writer-0000{p}-of-00003.json" for p in range(3)]
    r = cli("merge", str(out))
    assert r.returncode == 0, r.stderr
    r = cli("verify", str(out), "--json")
    assert json.loads(r.stdout)["ok"] and json.loads(r.stdout)["samples"] == 60
    members = tar_members(out)
    images = {k: v for k, v in members.items() if not k.endswith(".json")}
    assert len(images) == 60 and all(k.split("-")[0] in ("w00000", "w00001", "w00002") for k in images)
    src = tree / "src"
    want = sorted((src / r).read_bytes() for _, files in [pack_order(src)] for r, _, _ in files)
    assert sorted(images.values()) == want
    # LMDB writes one file: no parts.
    with pytest.raises(ValueError, match=r"^parts: the lmdb format writes one file, which cannot be written in parts; "
                                         r"write wds or raw in parts and convert the merged dataset$"):
        with shardpack.Writer(tmp_path / "lmdb-parts", "lmdb", part=0, parts=2, sync=False) as w:
            w.write((src / pack_order(src)[1][0][0]).read_bytes())


def test_a_writer_part_written_again_after_merge_is_refused(tree, tmp_path):
    """Before: the part rewrote its shards under the merged manifest.json, and verify then failed
    with checksum mismatches."""
    out = tmp_path / "parts"
    jpegs = sorted((tree / "src").rglob("*.JPEG"))[:6]
    for part in range(2):
        with shardpack.Writer(out, part=part, parts=2, samples_per_shard=2, sync=False) as w:
            for f in jpegs[part::2]:
                w.write(f.read_bytes())
    assert cli("merge", str(out)).returncode == 0
    manifest = (out / "manifest.json").read_bytes()
    with pytest.raises(ValueError, match=r"^output folder .*parts holds a merged dataset \(manifest.json\): writer "
                                         r"part 1 of 2 is in it already"):
        shardpack.Writer(out, part=1, parts=2, samples_per_shard=2, sync=False)
    assert (out / "manifest.json").read_bytes() == manifest
    assert json.loads(cli("verify", str(out), "--json").stdout)["ok"]


def test_merge_refuses_a_key_given_in_two_writer_parts(tree, tmp_path):
    """Before: merge and verify passed with two samples keyed alike. Part 0 gives the key part 1
    generates for its first sample (w00001-000000000), and in a second dataset both parts give 'a'."""
    jpeg = next((tree / "src").rglob("*.JPEG")).read_bytes()
    for name, keys in (("generated", ["w00001-000000000", None]), ("given", ["a", "a"])):
        out = tmp_path / name
        for part, key in enumerate(keys):
            with shardpack.Writer(out, part=part, parts=2, sync=False) as w:
                w.write(jpeg, key=key)
        r = cli("merge", str(out))
        assert r.returncode == 1
        key = keys[0]
        assert f"key '{key}' is given to a sample in {out}/writer-00000-of-00002.json (" in r.stderr, r.stderr
        assert "keys must be unique across the writers' parts" in r.stderr
        assert not (out / "manifest.json").exists()


def test_pack_from_python_returns_the_summary(tree, tmp_path):
    seen = []
    summary = shardpack.pack(tree / "src", tmp_path / "p", samples_per_shard=16, sync=False, progress=seen.append)
    assert summary["samples"] == 60 and summary["shards"] == 4 and summary["format"] == "wds"
    assert seen and seen[-1]["files_done"] == 60
    with pytest.raises(ValueError, match="does not exist"):
        shardpack.pack(tree / "missing", tmp_path / "q")
    def interrupt(progress):
        raise KeyboardInterrupt

    # An exception in the callback surfaces; the pack stops as Ctrl-C stops it (no manifest), or, when
    # the only report was the last one, it had finished whole.
    with pytest.raises(KeyboardInterrupt):
        shardpack.pack(tree / "src", tmp_path / "stopped", samples_per_shard=4, sync=False, progress=interrupt)
    stopped = tmp_path / "stopped"
    # Stopped before any shard was complete, it leaves no OUT (it made it: an empty folder would look
    # like a start); else no manifest, or the whole dataset.
    if stopped.exists():
        assert not (stopped / "manifest.json").exists() or cli("verify", str(stopped)).returncode == 0
        assert os.listdir(stopped) and not any(f.endswith(".tmp") for f in os.listdir(stopped))
    with pytest.raises(TypeError, match="unknown pack option 'colour'"):
        shardpack.pack(tree / "src", tmp_path / "q", colour=1)


_SHARED_WRITER_RACE = r'''
import sys, threading, time
import shardpack

jpeg = open(sys.argv[1], "rb").read()
for run in range(int(sys.argv[3])):
    errors = []

    def produce(w):
        try:
            for _ in range(200):
                w.write(jpeg)
        except ValueError as e:  # "the writer is closed ..." or "aborted ..."
            errors.append(str(e))
        except RuntimeError as e:
            errors.append(str(e))

    try:
        with shardpack.Writer(f"{sys.argv[2]}/run{run}", samples_per_shard=4, queue_samples=2, sync=False) as w:
            threads = [threading.Thread(target=produce, args=(w,)) for _ in range(8)]
            for t in threads:
                t.start()
            while w.written < 8 * (run % 4 + 1) and any(t.is_alive() for t in threads):
                time.sleep(0.0005)  # the producers are in write(), most of them blocked on the full queue
            raise KeyError("the training script failed")
    except KeyError:
        pass
    for t in threads:
        t.join()
    assert all("aborted" in e or "closed" in e for e in errors), errors
print("survived")
'''


def test_a_writer_shared_by_threads_survives_an_abort_while_they_write(tree, tmp_path):
    """Eight threads write through one Writer with a queue of 2 while the main thread raises in the
    with-block (which aborts it): 60 rounds in one process. Before the fix, abort() destroyed the
    queue that blocked write() calls waited on (SIGSEGV in about 1 round in 6)."""
    jpeg = next((tree / "src").rglob("*.JPEG"))
    script = tmp_path / "race.py"
    script.write_text(_SHARED_WRITER_RACE)
    run = subprocess.run([sys.executable, str(script), str(jpeg), str(tmp_path), "60"], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout.strip() == "survived"
    assert not any((tmp_path / f"run{i}" / "manifest.json").exists() for i in range(60))


def test_messages_name_a_bad_label_or_key_briefly(tree, tmp_path):
    """A label outside int32 used to raise pybind's TypeError holding the whole image's bytes; a key
    with a NUL was cut at the NUL in its message."""
    jpeg = next((tree / "src").rglob("*.JPEG")).read_bytes()
    with shardpack.Writer(tmp_path / "out", sync=False) as w:
        with pytest.raises(ValueError) as e:
            w.write(jpeg, label=2**40)
        assert str(e.value) == ("label 1099511627776 does not fit the 32-bit labels a dataset stores (-1 for none, "
                                "else 0 up to the number of classes - 1)")
        with pytest.raises(ValueError) as e:
            w.write(jpeg, key="a\x00b")
        assert str(e.value) == ("sample 'a\\x00b': a key may not hold '.', '/' or control characters (WebDataset "
                                "splits a member's name at its first dot)")
        with pytest.raises(ValueError) as e:
            w.write(jpeg, key="k" * 5000)
        assert str(e.value).startswith("sample '" + "k" * 100 + "... (5000 bytes)': the key is longer than 90")
        w.write(jpeg)


def test_a_writer_refuses_to_append_to_path_keys_in_its_own_words(tree, tmp_path):
    """A dataset packed with --key path names its samples by their files' paths; a writer names
    them by the keys it is given (no '/') or their index, and has no keys= keyword: its refusal
    says what to do instead, not "(keys=)" (what it said), and nothing changes."""
    out = tmp_path / "by-path"
    assert cli("pack", str(tree / "src"), str(out), "--key", "path", "--no-sync", "--quiet").returncode == 0
    before = (out / "manifest.json").read_bytes()
    with pytest.raises(ValueError) as e:
        shardpack.Writer(out, "wds", append=True)
    assert str(e.value) == (
        f"{out} was packed with keys \"path\" (each sample named by its file's path), and a writer names samples "
        "by the key each is given or by their index: append to it with `shardpack append " + str(out) +
        " SRC --key path`, or write a new dataset")
    assert (out / "manifest.json").read_bytes() == before and not (out / ".append").exists()


def test_a_writer_appends_to_a_packed_dataset(tree, wds, tmp_path):
    """Writer(out, append=True) adds shards after a packed dataset's, as `shardpack append` does:
    the first half of the tree packed, the second half written by the writer in pack's order gives
    the whole tree's samples, keys and labels (read back with tarfile), a class it names anew gets
    the next label, and the manifest says generation 1. Another option is refused, naming it."""
    src = tree / "src"
    classes, files = pack_order(src)
    half = tmp_path / "half"
    for relpath, _, _ in files[:32]:
        (half / relpath).parent.mkdir(parents=True, exist_ok=True)
        (half / relpath).write_bytes((src / relpath).read_bytes())
    out = tmp_path / "grown"
    assert cli("pack", str(half), str(out), "--samples-per-shard", "16", "--no-sync", "--quiet").returncode == 0
    # In Python's words: the keyword, not pack's flag (it said "(--samples-per-shard)").
    with pytest.raises(ValueError, match=r"was packed with samples_per_shard 16, this append gives 100000 "
                                         r"\(samples_per_shard=\): append with the options the dataset was packed with"):
        shardpack.Writer(out, "wds", append=True)
    before = (out / "manifest.json").read_bytes()
    with pytest.raises(RuntimeError, match="^stop$"):  # an exception in the block: nothing changes
        with shardpack.Writer(out, "wds", append=True, samples_per_shard=16, sync=False) as w:
            w.write((src / files[0][0]).read_bytes(), label=classes[0])
            raise RuntimeError("stop")
    assert (out / "manifest.json").read_bytes() == before and not (out / ".append").exists()
    manifest = json.loads(before)
    assert "generation" not in manifest and manifest["samples"] == 32
    # The half holds the first three classes; the writer names the fourth and a new one.
    with shardpack.Writer(out, "wds", append=True, classes=classes + ["zebra"], samples_per_shard=16,
                          sync=False) as w:
        for relpath, name, _ in files[32:]:
            w.write((src / relpath).read_bytes(), label=name, path=relpath)
        w.write((src / files[0][0]).read_bytes(), label="zebra")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["generation"] == 1 and manifest["samples"] == 61
    assert manifest["classes"] == classes + ["zebra"]
    members = tar_members(out)
    whole = tar_members(wds)
    for name, data in whole.items():  # the first 60 samples: the whole tree's, key for key
        assert members[name] == data, name
    assert members["000000060.cls"] == str(len(classes)).encode()  # zebra
    assert members["000000060.jpg"] == (src / files[0][0]).read_bytes() or \
        members.get("000000060.png") == (src / files[0][0]).read_bytes()
    assert cli("verify", str(out)).returncode == 0
