"""shardpack.grain with the real Grain and jax (CPU) from PyPI (issue 64): the data source under
grain.MapDataset and grain.DataLoader (0 and 2 worker processes) gives every sample once an epoch,
checked against the image files themselves; a run checkpointed mid-epoch (Grain's get_state, and
Orbax with Grain's handler) and resumed in a new process yields exactly the batches of an
uninterrupted run; two processes (process_index 0 and 1) read disjoint halves; and the native
loader's jax arrays are its own buffers (the buffer pointer is checked).

Runs itself as the resumed process: python test_grain.py MODE ARGS... prints JSON."""

import collections
import hashlib
import json
import os
import pathlib
import pickle
import subprocess
import sys

import numpy as np
import pytest

import grain
import jax
import shardpack
import shardpack.grain as spg

HERE = pathlib.Path(__file__).resolve()


def sha(data):
    return hashlib.sha256(data).hexdigest()


def tree_files(tree):
    """(class folder, sha256 of the bytes) of every image file of the tree: the reference, read from disk."""
    return collections.Counter((p.parent.name, sha(p.read_bytes())) for p in (tree / "src").rglob("*")
                               if p.is_file())


def record_identity(record, classes):
    """(class name, sha256 of the image bytes) of a data source record."""
    image = record.get("jpg", record.get("png"))
    return classes[record["cls"]], sha(image)


class Identify(grain.transforms.Map):
    """Picklable (Grain sends it to worker processes): what a record is, as plain strings."""

    def __init__(self, classes):
        self.classes = classes

    def map(self, record):
        label, digest = record_identity(record, self.classes)
        return {"key": record["__key__"], "label": label, "sha": digest}


@pytest.mark.parametrize("fixture", ["wds", "lmdb_dataset"])
def test_map_dataset_over_the_source_gives_every_image_file_once(tree, fixture, request):
    path = request.getfixturevalue(fixture)
    source = spg.DataSource(path)
    classes = shardpack.open(path).classes
    assert len(source) == sum(tree_files(tree).values()) == 60
    ds = grain.MapDataset.source(source).shuffle(seed=3).map(lambda r: record_identity(r, classes))
    assert collections.Counter(list(ds)) == tree_files(tree)
    # Deterministic: the same seed, the same order; and the records are shardpack.open's.
    assert list(ds) == list(ds)
    assert source[5] == shardpack.open(path)[5]


def test_a_views_source_gives_the_samples_the_view_chose(wds, tmp_path):
    base = shardpack.open(wds)
    chosen = [base[i]["__key__"] for i in range(1, len(base), 4)]  # the reference, by key
    (tmp_path / "keys.txt").write_text("\n".join(chosen) + "\n")
    subprocess.run([os.environ["SHARDPACK_CLI"], "subset", str(wds), str(tmp_path / "view"), "--keys",
                    str(tmp_path / "keys.txt")], check=True, stdout=subprocess.DEVNULL)
    records = list(grain.MapDataset.source(spg.DataSource(tmp_path / "view")).shuffle(seed=1))
    assert sorted(r["__key__"] for r in records) == sorted(chosen)
    by_key = {base[i]["__key__"]: base[i] for i in range(len(base))}
    assert all(r == by_key[r["__key__"]] for r in records)


def test_the_source_reads_the_same_records_from_many_threads(wds):
    from concurrent.futures import ThreadPoolExecutor

    source = pickle.loads(pickle.dumps(spg.DataSource(wds)))  # not yet open: the threads race to open it
    order = [i % 60 for i in range(7, 7 + 240)]
    with ThreadPoolExecutor(8) as pool:
        records = list(pool.map(source.__getitem__, order))
    reference = shardpack.open(wds)
    assert all(r == reference[i] for r, i in zip(records, order))


def test_raw_pixels_and_negative_and_out_of_range_indices(raw):
    source = spg.DataSource(raw)
    record = source[len(source) - 1]
    assert record["npy"].shape == (32, 32, 3) and record["npy"].dtype == np.uint8
    assert source[-1]["__key__"] == record["__key__"]
    with pytest.raises(IndexError, match=f"sample 60 is out of range for a dataset of 60 samples"):
        source[60]


@pytest.mark.parametrize("workers", [0, 2])
def test_grain_dataloader_with_workers_gives_every_sample_once(tree, wds, workers):
    # Grain 0.2.18's worker processes read absl flags, which a program run by absl.app has parsed;
    # elsewhere (pytest, a notebook) they must be marked parsed first (docs/jax.md).
    from absl import flags

    flags.FLAGS.mark_as_parsed()
    source = spg.DataSource(wds)
    classes = shardpack.open(wds).classes
    sampler = grain.samplers.IndexSampler(len(source), shard_options=grain.sharding.NoSharding(), shuffle=True,
                                          num_epochs=1, seed=7)
    loader = grain.DataLoader(data_source=source, sampler=sampler, operations=[Identify(classes)],
                              worker_count=workers)
    records = list(loader)
    assert collections.Counter((r["label"], r["sha"]) for r in records) == tree_files(tree)
    assert len({r["key"] for r in records}) == 60


def test_the_source_pickles_without_its_handle_and_keeps_its_repr(wds):
    source = spg.DataSource(wds)
    data = pickle.dumps(source)
    assert len(data) < 400  # the location and the size, no open dataset
    copy = pickle.loads(data)
    assert repr(copy) == repr(source) == f"shardpack.grain.DataSource({str(wds)!r}, samples=60)"
    assert copy[17] == source[17]


def grain_loader(wds, shard_index=0, shard_count=1, workers=0):
    source = spg.DataSource(wds)
    sampler = grain.samplers.IndexSampler(len(source), shard_options=grain.sharding.ShardOptions(
        shard_index, shard_count), shuffle=True, num_epochs=2, seed=11)
    return grain.DataLoader(data_source=source, sampler=sampler, worker_count=workers,
                            operations=[Identify(shardpack.open(wds).classes), grain.transforms.Batch(6)])


def native_loader(wds, process_index=0, process_count=1, output="numpy"):
    # "eval": no random crop, so that a batch's bytes identify its images whatever thread decoded them.
    return spg.Loader(wds, batch_size=6, size=24, transform="eval", seed=5, threads=2, keys=True, output=output,
                      process_index=process_index, process_count=process_count, num_epochs=2)


def batch_digest(batch):
    if "sha" in batch:  # Grain's batches of Identify's records
        return [list(map(str, batch["key"])), list(map(str, batch["sha"]))]
    return [batch["__key__"], sha(np.asarray(batch["image"]).tobytes()), np.asarray(batch["label"]).tolist()]


def run_child(*args):
    r = subprocess.run([sys.executable, str(HERE), *map(str, args)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_grain_dataloader_resumes_mid_epoch_in_a_new_process(wds):
    whole = [batch_digest(b) for b in grain_loader(wds)]
    assert len(whole) == 20  # 2 epochs of 60 in batches of 6
    it = iter(grain_loader(wds))
    first = [batch_digest(next(it)) for _ in range(13)]  # into the second epoch
    assert first == whole[:13]
    state = it.get_state()
    rest = run_child("grain-resume", wds, state.decode())
    assert rest == whole[13:]


def test_native_iterator_resumes_through_orbax_in_a_new_process(wds, tmp_path):
    whole = [batch_digest(b) for b in native_loader(wds)]
    assert len(whole) == 20 and all(len(keys) == 6 for keys, _, _ in whole)
    assert sorted(k for keys, _, _ in whole[:10] for k in keys) == sorted(shardpack.open(wds)[i]["__key__"]
                                                                          for i in range(60))
    import orbax.checkpoint as ocp

    it = iter(native_loader(wds))
    first = [batch_digest(next(it)) for _ in range(7)]
    assert first == whole[:7]
    with ocp.CheckpointManager(tmp_path / "ckpt", item_names=("data",)) as manager:
        manager.save(7, args=ocp.args.Composite(data=grain.checkpoint.CheckpointSave(it)))
        manager.wait_until_finished()
    saved = json.loads((tmp_path / "ckpt" / "7" / "data" / "process_0-of-1.json").read_text())
    assert saved["loader"]["epoch"] == 0 and saved["loader"]["batch"] == 7
    assert run_child("native-resume", wds, tmp_path / "ckpt") == whole[7:]
    # And with get_state() alone, at an epoch's end: the next batch is the second epoch's first.
    it = iter(native_loader(wds))
    for _ in range(10):
        next(it)
    state = json.loads(json.dumps(it.get_state()))
    again = iter(native_loader(wds))
    again.set_state(state)
    assert batch_digest(next(again)) == whole[10]


def test_two_processes_read_disjoint_halves(wds):
    everything = sorted(shardpack.open(wds)[i]["__key__"] for i in range(60))
    native = [[k for b in native_loader(wds, p, 2) for k in b["__key__"]][:30] for p in (0, 1)]
    grained = [[k for b in grain_loader(wds, p, 2) for k in b["key"]][:30] for p in (0, 1)]
    for halves in (native, grained):
        assert len(halves[0]) == len(halves[1]) == 30
        assert not set(halves[0]) & set(halves[1])
        assert sorted(halves[0] + halves[1]) == everything


def test_a_state_of_two_processes_resumes_on_one_elastically(wds):
    # Two processes take 3 batches of 6 each (36 samples of epoch 0); one process goes on from
    # process 0's state and reads exactly the 24 samples neither took.
    iterators = [iter(native_loader(wds, p, 2)) for p in (0, 1)]
    before = [k for it in iterators for _ in range(3) for k in next(it)["__key__"]]
    state = json.loads(json.dumps(iterators[0].get_state()))
    alone = iter(native_loader(wds, 0, 1))
    alone.set_state(state)
    after = []
    while len(before) + len(after) < 60:
        after += next(alone)["__key__"]
    assert len(before) == 36 and len(after) == 24
    assert sorted(before + after) == sorted(shardpack.open(wds)[i]["__key__"] for i in range(60))


def test_native_batches_are_the_loaders_buffers_without_a_copy(wds):
    loader = native_loader(wds, output="jax")
    assert len(loader) == 10
    it = iter(loader)
    assert len(loader) == 10 and len(iter(loader).buffer_addresses()) == 4  # a second iterator, its own loader
    reference = iter(native_loader(wds, output="numpy"))
    addresses = set(it.buffer_addresses())
    for _ in range(10):  # a whole epoch, the arrays dropped as a training loop drops them
        batch, expected = next(it), next(reference)
        assert isinstance(batch["image"], jax.Array) and batch["image"].dtype == jax.numpy.uint8
        assert batch["image"].shape == (6, 24, 24, 3)  # NHWC
        assert batch["image"].unsafe_buffer_pointer() in addresses
        assert batch["label"].dtype == jax.numpy.int32
        np.testing.assert_array_equal(np.asarray(batch["image"]), expected["image"])
        np.testing.assert_array_equal(np.asarray(batch["label"]), expected["label"])
    nchw = next(iter(spg.Loader(wds, batch_size=8, size=24, transform="eval", shuffle=False, layout="NCHW",
                                process_index=0, process_count=1)))
    nhwc = next(iter(spg.Loader(wds, batch_size=8, size=24, transform="eval", shuffle=False, process_index=0,
                                process_count=1)))
    np.testing.assert_array_equal(np.asarray(nchw["image"]), np.asarray(nhwc["image"]).transpose(0, 3, 1, 2))


def test_mixtures_and_buckets_come_through_as_jax_arrays(wds, lmdb_dataset):
    # Two sources at 0.5 each over an epoch of 60 + 60 samples: 60 from each, by hand.
    # (The batches are looked at and let go, as a training loop does: the loader reuses their buffers.)
    mixed = [(b["source"].dtype, np.asarray(b["source"]).copy())
             for b in spg.Loader(sources=[(wds, 0.5), (lmdb_dataset, 0.5)], batch_size=6, size=24, num_epochs=1,
                                 process_index=0, process_count=1)]
    assert len(mixed) == 20 and all(dtype == jax.numpy.int32 for dtype, _ in mixed)
    assert np.bincount(np.concatenate([sources for _, sources in mixed])).tolist() == [60, 60]
    # Buckets: each batch has one bucket's shape (width x height 32x24 or 24x32), NHWC.
    shapes = [b["image"].shape for b in spg.Loader(wds, batch_size=4, buckets=[(32, 24), (24, 32)], num_epochs=1,
                                                   process_index=0, process_count=1)]
    assert {shape[1:] for shape in shapes} <= {(24, 32, 3), (32, 24, 3)} and sum(s[0] for s in shapes) == 60


def test_process_defaults_are_jaxs_and_torch_habits_get_jax_words(wds):
    loader = spg.Loader(wds, batch_size=16, size=24)
    assert loader._arguments["rank"] == jax.process_index() == 0
    assert loader._arguments["world_size"] == jax.process_count() == 1
    with pytest.raises(ValueError, match=r"world_size= is shardpack.Loader's \(PyTorch's\) option: here use "
                                         r"process_count="):
        spg.Loader(wds, batch_size=16, world_size=2)
    with pytest.raises(ValueError, match="process_index=2 must lie in 0..process_count-1"):
        spg.Loader(wds, batch_size=16, process_index=2, process_count=2)
    with pytest.raises(ValueError, match="set_state takes what get_state"):
        iter(loader).set_state({"epoch": 0})


def test_shardpack_alone_imports_neither_grain_nor_jax_and_without_grain_says_what_to_install():
    code = ("import sys, shardpack; assert 'grain' not in sys.modules and 'jax' not in sys.modules; "
            "sys.modules['grain'] = None\n"
            "try:\n import shardpack.grain\nexcept ImportError as e:\n print(e)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "shardpack.grain needs Grain: pip install grain (and jax, for batches as jax.Array)"


def child(mode, path, arg):
    if mode == "grain-resume":
        it = iter(grain_loader(pathlib.Path(path)))
        it.set_state(arg.encode())
        return [batch_digest(b) for b in it]
    import orbax.checkpoint as ocp

    it = iter(native_loader(pathlib.Path(path)))
    with ocp.CheckpointManager(arg, item_names=("data",)) as manager:
        restored = manager.restore(manager.latest_step(),
                                   args=ocp.args.Composite(data=grain.checkpoint.CheckpointRestore(it)))
    return [batch_digest(b) for b in restored["data"]]


if __name__ == "__main__":
    print(json.dumps(child(*sys.argv[1:4])))
