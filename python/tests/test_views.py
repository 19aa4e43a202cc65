"""Views (docs/views.md) read from Python: shardpack.open and shardpack.Loader give exactly the base's
samples that the view selected, and `python -m shardpack` makes them as the CLI does."""

import subprocess
import sys

import shardpack
from conftest import tool


def make_view(*args):
    subprocess.run([tool("SHARDPACK_CLI"), *map(str, args)], check=True, stdout=subprocess.DEVNULL)


def test_open_and_loader_read_a_views_samples(wds, tmp_path):
    base = shardpack.open(wds)
    # The reference: every third sample of the base, by key, listed in a keys file.
    chosen = [base[i]["__key__"] for i in range(0, len(base), 3)]
    (tmp_path / "keys.txt").write_text("\n".join(chosen) + "\n")
    make_view("subset", wds, tmp_path / "third", "--keys", tmp_path / "keys.txt")
    view = shardpack.open(tmp_path / "third")
    assert len(view) == len(chosen) == 20
    by_key = {base[i]["__key__"]: base[i] for i in range(len(base))}
    for i, key in enumerate(chosen):
        sample = view[i]
        assert sample["__key__"] == key
        assert sample == by_key[key]
    assert view.classes == base.classes

    loader = shardpack.Loader(tmp_path / "third", batch_size=8, size=16, seed=1)
    seen = []
    for batch in loader.batches():
        seen += [str(k) for k in batch.keys()]
    assert sorted(seen) == sorted(chosen)


def test_python_m_shardpack_splits(wds, tmp_path):
    r = subprocess.run([sys.executable, "-m", "shardpack", "split", str(wds), str(tmp_path / "a"), str(tmp_path / "b"),
                        "--fraction", "0.25", "--seed", "4", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    a, b = shardpack.open(tmp_path / "a"), shardpack.open(tmp_path / "b")
    keys_a = [a[i]["__key__"] for i in range(len(a))]
    keys_b = [b[i]["__key__"] for i in range(len(b))]
    assert not set(keys_a) & set(keys_b)
    base = shardpack.open(wds)
    assert sorted(keys_a + keys_b) == sorted(base[i]["__key__"] for i in range(len(base)))
