"""shardpack.Loader over a mixture of datasets, against a reference written here from the rules in
docs/mixing.md (include/shardpack/mixture.h, include/shardpack/sampler.h), not from the C++ code:
each source's quota per epoch, the source of every position (so per rank and per batch), every
sample of a source once per pass, thread count, mid-epoch and elastic resume, and the errors."""

import json
import math
import shutil
import subprocess
from collections import Counter

import numpy as np
import pytest

import shardpack
from conftest import pack, tool

# ---------------------------------------------------------------- the reference, from the docs


def ref_quotas(sizes, sources, epoch_size=0, per_source_batch=0):
    """Each source's samples per epoch: fixed ones (samples, passes) first, the rest by weight with
    largest-remainder rounding (ties to the earlier source)."""
    quotas, weighted = [0] * len(sizes), []
    for i, s in enumerate(sources):
        if s.get("samples"):
            quotas[i] = s["samples"]
        elif s.get("passes"):
            x = s["passes"] * sizes[i]
            quotas[i] = int(math.floor(x + 0.5))  # half away from zero (x >= 0)
        else:
            weighted.append(i)
    rest = epoch_size - sum(quotas) if epoch_size else sum(sizes[i] for i in weighted)
    total_weight = sum(sources[i].get("weight", 1.0) for i in weighted)
    exact = {i: rest * sources[i].get("weight", 1.0) / total_weight for i in weighted}
    for i in weighted:
        quotas[i] = math.floor(exact[i])
    missing = rest - sum(quotas[i] for i in weighted)
    for i in sorted(weighted, key=lambda i: -(exact[i] - math.floor(exact[i])))[:missing]:
        quotas[i] += 1
    if per_source_batch:
        b = per_source_batch
        quotas = [max(1, (q + b // 2) // b) * b for q in quotas]
    return quotas


def ref_pattern(quotas):
    """Position n (1-based) goes to the source whose next sample j is released (floor((j-1)E/q)+1
    <= n) with the earliest deadline ceil(jE/q); ties to the earlier source."""
    e = sum(quotas)
    taken, pattern = [0] * len(quotas), []
    for n in range(1, e + 1):
        best = None
        for i, q in enumerate(quotas):
            j = taken[i] + 1
            if j > q or (j - 1) * e // q + 1 > n:
                continue
            deadline = -(-j * e // q)
            if best is None or deadline < best[0]:
                best = (deadline, i)
        taken[best[1]] += 1
        pattern.append(best[1])
    return pattern


def ref_rank_ranges(n, batch, world, rank):
    """The positions [begin, end) of each of `rank`'s batches over n positions, without drop_last
    (sampler.h: full rounds, then the fewest tail rounds that give every batch a sample)."""
    per_round = batch * world
    batches = -(-n // per_round)
    tail = next(k for k in range(1, batches + 1) if n - (batches - k) * per_round >= k * world)
    full = batches - tail
    ranges = []
    for b in range(batches):
        if b < full:
            g = b * world + rank
            ranges.append((g * batch, (g + 1) * batch))
        else:
            start, slots = full * per_round, tail * world
            slot = (b - full) * world + rank
            base, extra = divmod(n - start, slots)
            begin = start + slot * base + min(slot, extra)
            ranges.append((begin, begin + base + (slot < extra)))
    return ranges


# ---------------------------------------------------------------- datasets


@pytest.fixture(scope="session")
def small(tree):
    """12 images of 3 classes in wds shards of 4: a source much smaller than the epoch."""
    src = tree / "small-src"
    if not src.exists():
        subprocess.run([tool("SHARDPACK_MAKE_IMAGE_TREE"), str(src), "--classes", "3", "--images", "12", "--small",
                        "--seed", "7"], check=True, stdout=subprocess.DEVNULL)
    out = tree / "small-wds"
    if not out.exists():
        subprocess.run([tool("SHARDPACK_CLI"), "pack", str(src), str(out), "--quiet", "--no-sync",
                        "--samples-per-shard", "4"], check=True, stdout=subprocess.DEVNULL)
    return out


SIZES = [60, 12]  # the lmdb dataset of the session's tree, and `small`
WEIGHTS = [{"weight": 0.7}, {"weight": 0.3}]


def mixed(lmdb_dataset, small, **options):
    options.setdefault("size", 16)
    options.setdefault("threads", 2)
    return shardpack.Loader(sources=[(lmdb_dataset, 0.7), (small, 0.3)], **options)


def run_epoch(loader, epoch, images=False):
    """[(indices, sources, labels[, image bytes])] of every batch of `epoch`."""
    loader.set_epoch(epoch)
    out = []
    for lease in loader.batches():
        row = (lease.indices().tolist(), lease.sources().tolist(), lease.labels().tolist())
        out.append(row + ((lease.images().tobytes(),) if images else ()))
    return out


# ---------------------------------------------------------------- tests


def test_quotas_pattern_and_rank_batches_equal_the_reference(lmdb_dataset, small):
    quotas = ref_quotas(SIZES, WEIGHTS)
    assert quotas == [50, 22]  # by hand: 72 x 0.7 = 50.4, 72 x 0.3 = 21.6; the larger remainder gets the last
    pattern = ref_pattern(quotas)
    batch = 8
    for k in range(1, len(pattern) // batch + 1):  # the promise, on the reference itself
        for i, q in enumerate(quotas):
            c = pattern[:k * batch].count(i)
            assert math.floor(k * batch * q / 72) <= c <= math.ceil(k * batch * q / 72)
    for world in (1, 2, 3):
        for rank in range(world):
            loader = mixed(lmdb_dataset, small, batch_size=batch, rank=rank, world_size=world)
            got = run_epoch(loader, 1)
            ranges = ref_rank_ranges(sum(quotas), batch, world, rank)
            assert len(got) == len(ranges) == len(loader)
            for (indices, sources, _), (begin, end) in zip(got, ranges):
                assert sources == pattern[begin:end]
                assert sources == [0 if i < SIZES[0] else 1 for i in indices]  # offsets: source after source
    whole = run_epoch(mixed(lmdb_dataset, small, batch_size=batch), 1)
    counts = Counter(s for _, sources, _ in whole for s in sources)
    assert counts == {0: 50, 1: 22}


@pytest.mark.parametrize("shuffle_buffer", [0, 8])
def test_every_sample_once_per_pass_and_the_small_source_repeats(lmdb_dataset, small, shuffle_buffer):
    loader = mixed(lmdb_dataset, small, batch_size=8, shuffle_buffer=shuffle_buffer)
    streams = {0: [], 1: []}
    for epoch in range(4):
        for indices, sources, _ in run_epoch(loader, epoch):
            for index, source in zip(indices, sources):
                streams[source].append(index - (0 if source == 0 else SIZES[0]))
    assert len(streams[0]) == 4 * 50 and len(streams[1]) == 4 * 22
    for source, stream in streams.items():
        n = SIZES[source]
        passes = [stream[k:k + n] for k in range(0, len(stream), n)]
        for p in passes[:-1]:
            assert sorted(p) == list(range(n)), f"source {source}: a pass is not a permutation"
        assert len(set(passes[-1])) == len(passes[-1])
        assert len(passes) >= (2 if source == 0 else 7)
    # The small source's passes are fresh permutations, not one order repeated.
    assert streams[1][:12] != streams[1][12:24]


def test_same_batches_with_one_and_two_threads(lmdb_dataset, small):
    one = run_epoch(mixed(lmdb_dataset, small, batch_size=8, threads=1), 2, images=True)
    two = run_epoch(mixed(lmdb_dataset, small, batch_size=8, threads=2), 2, images=True)
    assert one == two


def test_a_repeated_sample_gets_a_fresh_crop(lmdb_dataset, small):
    rows = run_epoch(mixed(lmdb_dataset, small, batch_size=8), 0, images=True)
    crops = {}
    for indices, _, _, images in rows:
        per = len(images) // len(indices)
        for k, index in enumerate(indices):
            crops.setdefault(index, []).append(images[k * per:(k + 1) * per])
    repeated = [c for i, c in crops.items() if i >= SIZES[0] and len(c) > 1]
    assert repeated and all(len(set(c)) == len(c) for c in repeated)


@pytest.mark.parametrize("shuffle_buffer", [0, 8])
def test_mid_epoch_resume_equals_an_uninterrupted_run(lmdb_dataset, small, shuffle_buffer):
    whole = run_epoch(mixed(lmdb_dataset, small, batch_size=8, shuffle_buffer=shuffle_buffer), 3, images=True)
    first = mixed(lmdb_dataset, small, batch_size=8, shuffle_buffer=shuffle_buffer)
    first.set_epoch(3)
    batches = first.batches()
    for _ in range(4):
        next(batches)
    state = json.loads(json.dumps(first.state_dict()))  # as a checkpoint stores it
    del batches
    second = mixed(lmdb_dataset, small, batch_size=8, shuffle_buffer=shuffle_buffer)
    second.load_state_dict(state)
    rest = [(lease.indices().tolist(), lease.sources().tolist(), lease.labels().tolist(), lease.images().tobytes())
            for lease in second.batches()]
    assert rest == whole[4:]


def test_elastic_resume_from_4_ranks_to_3_takes_every_sample_as_often(lmdb_dataset, small):
    batch = 4
    uninterrupted = Counter()
    for rank in range(4):
        for indices, _, _ in run_epoch(mixed(lmdb_dataset, small, batch_size=batch, rank=rank, world_size=4), 1):
            uninterrupted.update(indices)
    taken, states = Counter(), []
    for rank in range(4):
        loader = mixed(lmdb_dataset, small, batch_size=batch, rank=rank, world_size=4)
        loader.set_epoch(1)
        batches = loader.batches()
        for _ in range(2):
            taken.update(next(batches).indices().tolist())
        states.append(loader.state_dict())
    assert len({s["epoch_samples_done"] for s in states}) == 1
    assert states[0]["epoch_samples_done"] == 2 * 4 * batch
    for rank in range(3):
        loader = mixed(lmdb_dataset, small, batch_size=batch, rank=rank, world_size=3)
        loader.load_state_dict(states[0])
        for lease in loader.batches():
            taken.update(lease.indices().tolist())
    assert taken == uninterrupted
    assert sum(taken.values()) == 72


def test_per_source_batches_hold_one_source(lmdb_dataset, small):
    batch = 8
    loader = mixed(lmdb_dataset, small, batch_size=batch, per_source_batches=True, drop_last=True)
    quotas = ref_quotas(SIZES, WEIGHTS, per_source_batch=batch)
    assert quotas == [48, 24]
    rows = run_epoch(loader, 0)
    assert [len(set(sources)) for _, sources, _ in rows] == [1] * 9
    assert Counter(sources[0] for _, sources, _ in rows) == {0: 6, 1: 3}
    # The order of the sources' batches is drawn afresh each epoch.
    by_epoch = {tuple(r[1][0] for r in run_epoch(loader, e)) for e in range(6)}
    assert len(by_epoch) > 1


def test_fixed_samples_passes_and_epoch_size(lmdb_dataset, small):
    sources = [{"location": lmdb_dataset, "weight": 2.0}, {"location": small, "passes": 1.5}]
    loader = shardpack.Loader(sources=sources, batch_size=8, size=16, epoch_size=50)
    quotas = ref_quotas(SIZES, [{"weight": 2.0}, {"passes": 1.5}], epoch_size=50)
    assert quotas == [32, 18]  # 1.5 x 12 = 18 fixed; the weighted source has the other 32
    counts = Counter(s for _, sources_, _ in run_epoch(loader, 0) for s in sources_)
    assert counts == {0: 32, 1: 18}
    loader = shardpack.Loader(sources=[{"location": lmdb_dataset, "samples": 5}, small], batch_size=4, size=16)
    counts = Counter(s for _, sources_, _ in run_epoch(loader, 0) for s in sources_)
    assert counts == {0: 5, 1: 12}


def test_shared_classes_map_labels_by_name(lmdb_dataset, small):
    names = [json.loads((d / "manifest.json").read_text())["classes"] for d in (lmdb_dataset, small)]
    table = list(names[0]) + [c for c in names[1] if c not in names[0]]
    own = run_epoch(mixed(lmdb_dataset, small, batch_size=8, shuffle=False), 0)
    shared = run_epoch(mixed(lmdb_dataset, small, batch_size=8, shuffle=False, shared_classes=True), 0)
    checked = 0
    for (indices, sources, labels), (_, _, mapped) in zip(own, shared):
        for source, label, new in zip(sources, labels, mapped):
            assert new == table.index(names[source][label])
            checked += 1
    assert checked == 72


def test_state_from_other_sources_or_changed_weights_is_refused(lmdb_dataset, small, wds):
    loader = mixed(lmdb_dataset, small, batch_size=8)
    loader.set_epoch(0)
    batches = loader.batches()
    next(batches)
    state = loader.state_dict()
    other = shardpack.Loader(sources=[(lmdb_dataset, 0.7), (wds, 0.3)], batch_size=8, size=16)
    with pytest.raises(ValueError, match=r"state_dict is from other sources"):
        other.load_state_dict(state)
    reweighted = shardpack.Loader(sources=[(lmdb_dataset, 0.5), (small, 0.5)], batch_size=8, size=16)
    with pytest.raises(ValueError, match=r"state_dict is from batch 1 of epoch 0 with other weights"):
        reweighted.load_state_dict(state)
    loader.set_epoch(1)
    reweighted.load_state_dict(loader.state_dict())  # at an epoch's start: allowed
    with pytest.raises(ValueError, match=r"state_dict is from a loader over a mixture"):
        shardpack.Loader(wds, batch_size=8, size=16).load_state_dict(state)


@pytest.mark.parametrize("weight,message", [
    (0, "source 2 ({small}): the weight must be a positive number, got 0"),
    (-1, "source 2 ({small}): the weight must be a positive number, got -1"),
    ("heavy", "source 2 ({small}): the weight must be a number, got 'heavy'"),
    (float("nan"), "source 2 ({small}): the weight is not a number"),
])
def test_bad_weights_name_the_source(lmdb_dataset, small, weight, message):
    with pytest.raises(ValueError) as error:
        shardpack.Loader(sources=[(lmdb_dataset, 1), (small, weight)], size=16)
    assert str(error.value) == message.format(small=small)


def test_sources_that_fail_are_named(lmdb_dataset, small, tmp_path):
    missing = tmp_path / "missing"
    with pytest.raises(Exception, match=rf"source 2 \({missing}\): .*{missing}"):
        shardpack.Loader(sources=[(lmdb_dataset, 1), (missing, 1)], size=16)
    with pytest.raises(Exception, match=rf"source 2 \({small}\) is the same dataset as source 1 \({small}\)"):
        shardpack.Loader(sources=[(small, 1), (small, 1)], size=16)
    copy = tmp_path / "copy"
    shutil.copytree(small, copy)
    with pytest.raises(Exception, match=rf"source 2 \({copy}\) is the same dataset as source 1"):
        shardpack.Loader(sources=[(small, 1), (copy, 1)], size=16)
    with pytest.raises(Exception, match=rf"source 1 \({lmdb_dataset}\) has no mask field 'seg.png'"):
        shardpack.Loader(sources=[(lmdb_dataset, 1), (small, 1)], size=16, mask="seg.png")
    with pytest.raises(ValueError, match="mixtures are read by the CPU loader only"):
        shardpack.Loader(sources=[(lmdb_dataset, 1), (small, 1)], size=16, device="cuda")


def test_one_source_reads_as_that_dataset(wds):
    plain = run_epoch(shardpack.Loader(wds, batch_size=8, size=16, seed=5), 2)
    alone = run_epoch(shardpack.Loader(sources=[wds], batch_size=8, size=16, seed=5), 2)
    assert [r[0] for r in plain] == [r[0] for r in alone]
    assert np.array_equal(np.array([r[2] for r in plain], dtype=object), np.array([r[2] for r in alone], dtype=object))
