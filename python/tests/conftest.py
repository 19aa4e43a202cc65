"""Shared fixtures: a generated image tree packed by the real command line, once per session.

The paths of the tools come from ctest (python/CMakeLists.txt): SHARDPACK_CLI, SHARDPACK_MAKE_IMAGE_TREE,
SHARDPACK_DUMP_BATCHES, SHARDPACK_MAKE_SCALED_DATASET; PYTHONPATH points at the built package."""

import os
import pathlib
import subprocess
import sys

import pytest


def tool(name):
    path = os.environ.get(name)
    if not path:
        pytest.skip(f"{name} is not set: run these tests through ctest")
    return path


def run_cli(*args):
    """The command line on `args` (paths and numbers as text), its output captured."""
    return subprocess.run([tool("SHARDPACK_CLI"), *map(str, args)], capture_output=True, text=True)


def run_example(script, work, *flags, **env):
    """An example script run as a user runs it, with --work WORK and `flags`, `env` added to the
    environment; its completed process (stdout and stderr as text), which must have succeeded."""
    r = subprocess.run([sys.executable, str(script), "--work", str(work), *map(str, flags)], capture_output=True,
                       text=True, env=dict(os.environ, **env), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def tar_samples(folder):
    """The samples of a folder's .tar shards, as Python's tarfile reads them: {key: {extension: bytes}}."""
    import tarfile

    samples = {}
    for shard in sorted(pathlib.Path(folder).glob("*.tar")):
        with tarfile.open(shard) as tar:
            for m in tar.getmembers():
                key, ext = m.name.split(".", 1)
                samples.setdefault(key, {})[ext] = tar.extractfile(m).read()
    return samples


@pytest.fixture(scope="session")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("tree")
    subprocess.run([tool("SHARDPACK_MAKE_IMAGE_TREE"), str(root / "src"), "--classes", "4", "--images", "60",
                    "--small", "--png-every", "7"], check=True, stdout=subprocess.DEVNULL)
    return root


def pack(tree, name, *options):
    out = tree / name
    if not out.exists():
        subprocess.run([tool("SHARDPACK_CLI"), "pack", str(tree / "src"), str(out), "--quiet", "--no-sync",
                        "--samples-per-shard", "16", *options], check=True, stdout=subprocess.DEVNULL)
    return out


@pytest.fixture(scope="session")
def wds(tree):
    return pack(tree, "wds")


@pytest.fixture(scope="session")
def raw(tree):
    return pack(tree, "raw", "--format", "raw", "--crop", "32")


@pytest.fixture(scope="session")
def lmdb_dataset(tree):
    return pack(tree, "lmdb", "--format", "lmdb")
