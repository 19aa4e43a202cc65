"""A PyTorch user's habits against shardpack.Loader (issue 38): each trap that used to lose or
corrupt data silently is now right, or a clear error in Python's words."""

import re
import shutil
import subprocess
import warnings

import pytest
import torch
import torch.nn.functional as F
import torch.utils.data

import shardpack
from conftest import tool


def labels_of(loader):
    return torch.cat([y for _, y in loader]).tolist()


def test_num_workers_alone_is_refused_and_threads_reads_everything(wds):
    # The DataLoader reflex: before, this read 1/8 of the epoch without a word.
    with pytest.raises(ValueError, match=r"^num_workers=8 without worker: shardpack.Loader is not a DataLoader and "
                                         r"starts no worker processes; it decodes on threads=N threads"):
        shardpack.Loader(wds, batch_size=4, size=16, num_workers=8)
    with pytest.raises(ValueError, match=r"^worker=1 without num_workers"):
        shardpack.Loader(wds, batch_size=4, size=16, worker=1)
    assert len(labels_of(shardpack.Loader(wds, batch_size=4, size=16, threads=8))) == 60
    # Both given: the documented split among processes one starts oneself.
    halves = [labels_of(shardpack.Loader(wds, batch_size=4, size=16, shuffle=False, worker=w, num_workers=2))
              for w in (0, 1)]
    assert sorted(halves[0] + halves[1]) == sorted(labels_of(shardpack.Loader(wds, batch_size=4, size=16)))
    assert [len(h) for h in halves] == [32, 28]  # 15 batches of 4: 8 and 7


class _LoaderInsideWorkers(torch.utils.data.IterableDataset):
    """A user's own IterableDataset around shardpack.Loader, given no worker arguments."""

    def __init__(self, path):
        self.path = path

    def __iter__(self):
        for _, labels in shardpack.Loader(self.path, batch_size=4, size=16, shuffle=False):
            yield from labels.tolist()


def test_inside_a_dataloader_the_share_comes_from_torchs_worker_info(wds):
    # Spawned workers: a worker forked from this process, whose earlier loaders left oneTBB's threads
    # behind, could inherit a lock one of them held (oneTBB is not fork-safe); the timeout turns a
    # stuck worker into an error.
    seen = list(torch.utils.data.DataLoader(_LoaderInsideWorkers(str(wds)), batch_size=None, num_workers=2,
                                            multiprocessing_context="spawn", timeout=120))
    # Each of the two workers read its own half: together every sample once, not every sample twice.
    assert len(seen) == 60
    assert sorted(seen) == sorted(labels_of(shardpack.Loader(wds, batch_size=4, size=16)))


def pack_with_one_corrupt_jpeg(tree, tmp_path):
    """The tree packed with its first JPEG's entropy-coded data damaged (the header stays valid)."""
    src = tmp_path / "src"
    shutil.copytree(tree / "src", src)
    victim = sorted(src.rglob("*.JPEG"))[0]
    data = bytearray(victim.read_bytes())
    scan = data.index(b"\xff\xda")
    data[scan + 20:scan + 60] = b"\xff" * 40
    victim.write_bytes(bytes(data))
    out = tmp_path / "wds"
    subprocess.run([tool("SHARDPACK_CLI"), "pack", str(src), str(out), "--quiet", "--no-sync", "--check", "header"],
                   check=True, stdout=subprocess.DEVNULL)
    return out


def test_a_corrupt_sample_is_left_out_named_once_and_counted(tree, tmp_path):
    out = pack_with_one_corrupt_jpeg(tree, tmp_path)
    loader = shardpack.Loader(out, batch_size=8, size=16, shuffle=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        batches = [(x.shape[0], y.clone()) for x, y in loader]
    labels = torch.cat([y for _, y in batches])
    assert len(labels) == 59 and int(labels.min()) >= 0  # no zeros labelled -1
    assert [n for n, _ in batches][:2] == [7, 8]  # the first batch is one short
    logits = torch.zeros(len(labels), 4)
    F.cross_entropy(logits, labels)  # raised IndexError: Target -1 is out of bounds
    skipped = [str(w.message) for w in caught if "skipped sample" in str(w.message)]
    assert len(skipped) == 1 and skipped[0].startswith(f"{out}: skipped sample ")
    assert "(index 0)" in skipped[0]
    assert loader.stats()["corrupt"] == 1 and loader.stats()["images"] == 59
    # The CLI's bench names it too, once over two epochs.
    r = subprocess.run([tool("SHARDPACK_CLI"), "bench", str(out), "--epochs", "2", "--batch", "8", "--crop", "16",
                        "--threads", "1"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("skipped sample")]
    assert len(lines) == 1 and "(index 0)" in lines[0], r.stderr
    assert "118 images" in r.stdout, r.stdout


def test_on_the_gpu_a_corrupt_sample_is_named_too(tree, tmp_path):
    """device="cuda" skips as the CPU loader does, and says so (it once dropped the sample silently)."""
    import shardpack._shardpack as native

    if not native.has_cuda or not native.cuda_device_available()[0] or not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    out = pack_with_one_corrupt_jpeg(tree, tmp_path)
    loader = shardpack.Loader(out, batch_size=8, size=16, shuffle=False, device="cuda", dtype="uint8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        labels = torch.cat([y.cpu() for _, y in loader])
    assert len(labels) == 59
    skipped = [str(w.message) for w in caught if "skipped sample" in str(w.message)]
    assert len(skipped) == 1 and skipped[0].startswith(f"{out}: skipped sample ") and "(index 0)" in skipped[0]
    assert loader.stats()["corrupt"] == 1
    r = subprocess.run([tool("SHARDPACK_CLI"), "bench", str(out), "--epochs", "2", "--batch", "8", "--crop", "16",
                        "--threads", "1", "--device", "cuda"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("skipped sample")]
    assert len(lines) == 1 and "(index 0)" in lines[0], r.stderr


def test_a_mask_no_sample_has_is_refused_at_open(wds):
    with pytest.raises(ValueError, match=r"has no mask field 'seg\.png' \(its samples' fields: none\), which the "
                                         r"loader's mask option asks of every sample$"):
        shardpack.Loader(wds, batch_size=4, size=16, mask="seg.png")


def test_a_state_from_another_dataset_is_refused(wds, lmdb_dataset, tmp_path):
    theirs = shardpack.Loader(lmdb_dataset, batch_size=4, size=16)
    it = iter(theirs)
    next(it)
    state = theirs.state_dict()
    with pytest.raises(ValueError, match=r"^state_dict is from another dataset"):
        shardpack.Loader(wds, batch_size=4, size=16).load_state_dict(state)
    # The same dataset at another path is the same dataset.
    copy = tmp_path / "copy"
    shutil.copytree(lmdb_dataset, copy)
    mine = shardpack.Loader(copy, batch_size=4, size=16)
    mine.load_state_dict(state)
    assert len(labels_of(mine)) == 60 - 4


def test_a_state_from_before_an_append_says_so(wds, tree, tmp_path):
    grown = tmp_path / "grown"
    shutil.copytree(wds, grown)
    before = shardpack.Loader(grown, batch_size=4, size=16)
    next(iter(before))
    state = before.state_dict()
    assert state["generation"] == 0
    subprocess.run([tool("SHARDPACK_CLI"), "append", str(grown), str(tree / "src"), "--quiet", "--no-sync",
                    "--samples-per-shard", "16"], check=True, stdout=subprocess.DEVNULL)
    after = shardpack.Loader(grown, batch_size=4, size=16)
    assert after.state_dict()["generation"] == 1 and len(after) == 2 * len(before)
    with pytest.raises(ValueError, match=rf"^state_dict is from {re.escape(repr(str(grown)))} before `shardpack "
                                         r"append` added to it \(generation 0, now 1\): a state resumes the samples "
                                         r"it was taken over; start an epoch on the grown dataset \(load_state_dict "
                                         r"is for the dataset as it was\)$"):
        after.load_state_dict(state)


def test_drop_last_with_a_batch_larger_than_the_dataset_warns(wds):
    with pytest.warns(UserWarning, match=r"60 samples make no whole batch of 64 with drop_last: every epoch is empty"):
        loader = shardpack.Loader(wds, batch_size=64, size=16, drop_last=True)
    assert len(loader) == 0


@pytest.mark.parametrize("source, epoch_size, message", [
    (dict(samples=2**40), 0, r"samples is 1099511627776, more than the 17179869184 samples an epoch may hold"),
    (dict(passes=1e30), 0, r"1e\+30 passes over its 60 samples make more than the 17179869184 samples"),
    (dict(weight=1.0), 2**62, r"^epoch_size is 4611686018427387904, more than the 17179869184 samples"),
    (dict(weight=1e308), 0, r"^the weights add up to more than a floating-point number holds"),
])
def test_a_mixture_no_memory_holds_is_refused_at_open(wds, lmdb_dataset, source, epoch_size, message):
    # Before: it opened, reported an absurd len(), and std::terminate ended the process on the first batch.
    sources = [dict(location=str(wds), **source), dict(location=str(lmdb_dataset), weight=1e308)]
    with pytest.raises(ValueError, match=message):
        shardpack.Loader(sources=sources, batch_size=4, size=16, epoch_size=epoch_size)


def test_a_weight_that_gives_no_sample_is_warned_of(wds, lmdb_dataset):
    with pytest.warns(UserWarning, match=r"source 2 \(.*\): its weight 1e-12 gives it 1.2e-10 of the epoch's 120"):
        loader = shardpack.Loader(sources=[(str(wds), 1.0), (str(lmdb_dataset), 1e-12)], batch_size=4, size=16)
    assert len(loader) == 30


@pytest.mark.parametrize("change", [
    dict(batch=-1), dict(epoch="3"), dict(batch=2**64), dict(samples_done=1.5), dict(epoch_samples_done=None),
    dict(batch=True), dict(seed="x"), dict(world_size=0), dict(batch_size=-4), dict(epoch_samples_done=10**6),
    dict(world_size=3, epoch_samples_done=10**6), dict(mixture={"sources": []}), dict(dataset=123),
    dict(batch=10**9),
])
def test_a_hostile_state_is_refused_or_gives_a_well_formed_epoch(wds, change):
    """What a checkpoint file holds is outside input: each state is refused with a message naming
    what is wrong, or gives an epoch of valid, distinct samples; never a crash or pybind's words."""
    loader = shardpack.Loader(wds, batch_size=4, size=16, shuffle=False)
    state = dict(loader.state_dict(), **change)
    try:
        loader.load_state_dict(state)
        indices = [i for lease in loader.batches() for i in lease.indices().tolist()]
    except (ValueError, TypeError) as e:
        assert "state_dict" in str(e) or "samples" in str(e), str(e)
        assert "incompatible function arguments" not in str(e)
    else:
        assert len(indices) == len(set(indices)) and all(0 <= i < 60 for i in indices), indices
    loader.set_epoch(0)
    assert len(labels_of(loader)) == 60  # the loader still reads whole epochs


def test_missing_keys_and_other_types_are_refused(wds):
    loader = shardpack.Loader(wds, batch_size=4, size=16)
    with pytest.raises(TypeError, match=r"^load_state_dict takes the dict that state_dict\(\) returned, not list$"):
        loader.load_state_dict([])
    with pytest.raises(ValueError, match=r"^state_dict has no 'epoch'"):
        loader.load_state_dict({"batch": 0})
