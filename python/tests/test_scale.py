"""A dataset of 100,000 shards opens in seconds (issue 39): made from one real shard of 20 samples
by hard links (tests/support/make_scaled_dataset), 2,000,000 samples. Opening reads the manifest and
nothing per sample; a sample is read from its own shard's files when asked for. The reference for
every sample is the base shard itself, read by Python's tarfile."""
import random
import subprocess
import tarfile
import time

import pytest

import shardpack

from conftest import tool

SHARDS, PER_SHARD = 100_000, 20


@pytest.fixture(scope="module")
def scaled(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale")
    subprocess.run([tool("SHARDPACK_MAKE_IMAGE_TREE"), str(root / "src"), "--classes", "2", "--images",
                    str(PER_SHARD), "--small", "--png-every", "0"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([tool("SHARDPACK_CLI"), "pack", str(root / "src"), str(root / "one"), "--quiet", "--no-sync"],
                   check=True, stdout=subprocess.DEVNULL)
    start = time.monotonic()
    subprocess.run([tool("SHARDPACK_MAKE_SCALED_DATASET"), str(root / "one"), str(root / "big"), "--shards",
                    str(SHARDS)], check=True)
    print(f"made {SHARDS} shards in {time.monotonic() - start:.1f} s")
    with tarfile.open(root / "one" / "shard-000000.tar") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    samples = [(name[:-4], members[name], int(members[name[:-4] + ".cls"]))
               for name in sorted(members) if name.endswith(".jpg")]
    assert len(samples) == PER_SHARD
    return root / "big", samples


def test_a_dataset_of_100000_shards_opens_and_reads_any_sample(scaled):
    big, samples = scaled
    start = time.monotonic()
    ds = shardpack.open(str(big))
    opened = time.monotonic() - start
    assert len(ds) == SHARDS * PER_SHARD
    rng = random.Random(3)
    for i in [0, len(ds) - 1] + [rng.randrange(len(ds)) for _ in range(200)]:
        sample = ds[i]
        key, jpg, label = samples[i % PER_SHARD]
        assert (sample["__key__"], sample["jpg"], sample["cls"]) == (key, jpg, label), i
    print(f"opened in {opened:.2f} s, 202 random samples in {time.monotonic() - start - opened:.2f} s")


@pytest.mark.parametrize("shuffle_buffer", [0, 1000])
def test_the_loader_gives_a_first_batch_of_100000_shards(scaled, shuffle_buffer):
    big, _ = scaled
    start = time.monotonic()
    loader = shardpack.Loader(str(big), batch_size=64, size=16, threads=2, seed=7, shuffle_buffer=shuffle_buffer)
    lease = next(iter(loader.batches()))
    indices = lease.indices().tolist()
    assert len(indices) == 64 and len(set(indices)) == 64 and all(0 <= i < SHARDS * PER_SHARD for i in indices)
    assert len(loader) == SHARDS * PER_SHARD // 64
    print(f"shuffle_buffer={shuffle_buffer}: first batch in {time.monotonic() - start:.2f} s")
