"""Every example in README.md and docs/ runs, as written, so that the docs cannot drift from the tool
(issue 40). The examples are extracted from the Markdown itself: each fenced block of code (`sh`,
`python`, `cpp`) carries a marker on the line above it that says where it runs:

    <!-- doc-test: WORLD -->               run here, in a fresh copy of the named world (below)
    <!-- doc-test: lines WORLD -->         each line its own command (a reference list of commands)
    <!-- doc-test: scripts/NAME.sh -->     extracted and run by that script (it reads this marker)
    <!-- doc-test: not run: REASON -->     needs a GPU, a network, a cluster or minutes: the reason

A block without a marker fails the first test here. Other blocks (`text`: outputs, formats,
diagrams) are not code.

A world is a folder made once per session with real images packed by the real command line; a block
runs in a copy of it (its working directory), with the docs' placeholder paths pointed into it:
`/data/...`, `/scratch/...` and `/local/...` become folders of the world, `~` its `home/`, and in
command lists SRC, IN and OUT an image tree and a packed dataset. Python blocks run in a fresh
interpreter after a prelude that stands in for the reader's own objects (a `model`, `epochs`, the
`my_samples()` generator, ...) and, on a machine without a GPU, keeps tensors sent to "cuda" on the
CPU; the prelude counts the batches the block's loaders yield, and a block that iterates a loader
must see at least one."""

import io
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import tool

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import doc_blocks  # noqa: E402

DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
CODE = ("sh", "python", "cpp")
WORLDS = ("trees", "data", "cli", "lmdb", "raw", "raw-zstd")


def blocks():
    """(doc, line, language, marker or None, code) for every fenced block of the docs."""
    return [(doc.relative_to(ROOT).as_posix(), *block) for doc in DOCS
            for block in doc_blocks.blocks(doc.read_text(encoding="utf-8"))]


def runnable():
    return [pytest.param(b, id=f"{b[0]}:{b[1]}") for b in blocks()
            if b[2] in CODE and b[3] is not None and b[3].split()[-1] in WORLDS]


def test_every_block_of_code_says_where_it_runs():
    problems = []
    for doc, line, language, marker, _ in blocks():
        if language not in CODE + ("text",):
            problems.append(f"{doc}:{line}: a fenced block needs a language ({', '.join(CODE + ('text',))})")
        elif language == "text":
            if marker is not None:
                problems.append(f"{doc}:{line}: a text block is not run: drop its doc-test marker")
        elif marker is None:
            problems.append(f"{doc}:{line}: {language} block without a <!-- doc-test: ... --> marker")
        elif marker.startswith("not run: "):
            if len(marker) < len("not run: ") + 12:
                problems.append(f"{doc}:{line}: say why it is not run")
        elif marker.startswith("scripts/"):
            script = ROOT / marker
            if not script.exists() or f"doc-test: {marker}" not in script.read_text():
                problems.append(f"{doc}:{line}: {marker} does not extract this block")
        elif marker.split()[-1] not in WORLDS or marker.split()[:-1] not in ([], ["lines"]):
            problems.append(f"{doc}:{line}: unknown marker {marker!r} (worlds: {', '.join(WORLDS)})")
    assert problems == []


# --- the worlds ---

def jpeg(rgb, size=(64, 48)):
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", size, rgb).save(out, format="JPEG")
    return out.getvalue()


def mask_png(size):
    from PIL import Image

    out = io.BytesIO()
    Image.new("L", size, 3).save(out, format="PNG")
    return out.getvalue()


def tree_with_fields(root, per_class=20):
    """Two classes of JPEGs, each with a caption, a JSON annotation and a greyscale mask beside it
    (docs/formats/source-layout.md), except every fourth image, which has none."""
    for c, name in enumerate(("cat", "dog")):
        folder = root / name
        folder.mkdir(parents=True)
        for i in range(per_class):
            size = (64 + 4 * i, 48 + 2 * c)
            (folder / f"{i:04d}.jpg").write_bytes(jpeg((40 * c, 5 * i, 100), size))
            if i % 4 != 3:
                (folder / f"{i:04d}.txt").write_text(f"a {name} number {i}")
                (folder / f"{i:04d}.json").write_text(f'{{"boxes": [[0, 0, {i + 1}, {i + 1}]]}}')
                (folder / f"{i:04d}.seg.png").write_bytes(mask_png(size))
    return root


def mds_folder(tree, out):
    """The tree's images as an MDS dataset, written by MosaicML Streaming's own MDSWriter."""
    from PIL import Image

    import streaming_mds

    MDSWriter, _ = streaming_mds.writer_and_reader()
    classes = sorted(p.name for p in tree.iterdir() if p.is_dir())
    with MDSWriter(out=str(out), columns={"image": "jpeg", "label": "int"}, size_limit=1 << 20) as w:
        for label, name in enumerate(classes):
            for path in sorted((tree / name).iterdir()):
                with Image.open(path) as image:
                    w.write({"image": image, "label": label})


def hf_parquet_folder(tree, out):
    """The tree's images as a Hugging Face dataset in the Hub's layout, written by `datasets` itself."""
    import datasets

    classes = sorted(p.name for p in tree.iterdir() if p.is_dir())
    paths = [(path, label) for label, name in enumerate(classes) for path in sorted((tree / name).iterdir())]
    features = datasets.Features({"image": datasets.Image(), "label": datasets.ClassLabel(names=classes)})
    ds = datasets.Dataset.from_dict({"image": [{"bytes": p.read_bytes(), "path": None} for p, _ in paths],
                                     "label": [label for _, label in paths]}, features=features)
    (out / "data").mkdir(parents=True)
    for i in range(2):
        ds.shard(2, i, contiguous=True).to_parquet(out / "data" / f"train-{i:05d}-of-00002.parquet")


def run_cli(*args):
    subprocess.run([tool("SHARDPACK_CLI"), *map(str, args), "--quiet", "--no-sync"], check=True,
                   stdout=subprocess.DEVNULL)


@pytest.fixture(scope="session")
def worlds(tmp_path_factory):
    base = tmp_path_factory.mktemp("doc-worlds")
    images = base / "images"  # 300 small JPEGs in 10 classes: a batch of 256 fills
    subprocess.run([tool("SHARDPACK_MAKE_IMAGE_TREE"), str(images), "--classes", "10", "--images", "300", "--small",
                    "--png-every", "0"], check=True, stdout=subprocess.DEVNULL)
    other = base / "other"  # another dataset, for mixtures
    subprocess.run([tool("SHARDPACK_MAKE_IMAGE_TREE"), str(other), "--classes", "10", "--images", "120", "--small",
                    "--png-every", "0", "--seed", "2"], check=True, stdout=subprocess.DEVNULL)
    fields = tree_with_fields(base / "fields")
    made = {}

    trees = made["trees"] = base / "trees"  # image folders alone, for the examples that pack them
    for name in ("data/imagenet/train", "data/train", "home/imagenet/train"):
        shutil.copytree(images, trees / name)
    data = made["data"] = base / "data"  # the folders and the datasets packed from them
    shutil.copytree(trees, data)
    run_cli("pack", images, data / "OUT", "--samples-per-shard", "100")
    run_cli("pack", images, data / "data" / "imagenet-wds", "--samples-per-shard", "100")
    run_cli("pack", images, data / "data" / "web-wds", "--samples-per-shard", "100")
    run_cli("pack", other, data / "data" / "curated-lmdb", "--format", "lmdb")
    run_cli("pack", fields, data / "data" / "captions-wds")
    run_cli("pack", fields, data / "data" / "ade20k-wds")
    hf_parquet_folder(images, data / "data" / "hf-parquet")
    (data / "scratch").mkdir()
    (data / "local").mkdir()

    cli = made["cli"] = base / "cli"
    shutil.copytree(images, cli / "SRC")
    for name in ("OUT", "IN", "web"):
        run_cli("pack", images, cli / name, "--samples-per-shard", "100")
    run_cli("pack", other, cli / "curated")
    mds_folder(images, cli / "mds-folder")
    hf_parquet_folder(images, cli / "hf-parquet-folder")

    lmdb_world = made["lmdb"] = base / "lmdb"
    run_cli("pack", fields, lmdb_world / "out", "--format", "lmdb")

    raw = made["raw"] = base / "raw"
    run_cli("pack", fields, raw / "out", "--format", "raw", "--resize", "256", "--crop", "224")
    run_cli("pack", fields, raw / "keep", "--format", "raw", "--keep-size")

    zstd = made["raw-zstd"] = base / "raw-zstd"
    run_cli("pack", fields, zstd / "out", "--format", "raw", "--crop", "224", "--compress", "zstd")
    return made


# --- running a block ---

PRELUDE = '''
import atexit, io, sys
import torch
import shardpack

# The reader's own objects, which the examples leave to them.
epochs = 1
model = lambda images: images.float().mean(dim=(2, 3))
criterion = lambda output, target: output.mean() + target.float().mean()
tokenizer = lambda captions: [c.split() if c is not None else [] for c in captions]
CLASSES = ["cat", "dog"]


def _jpeg(i):
    from PIL import Image
    out = io.BytesIO()
    Image.new("RGB", (40 + i, 30), (10 * i % 256, 80, 160)).save(out, format="JPEG")
    return out.getvalue()


jpeg_bytes = _jpeg(0)


def my_samples(shard=None, of=None):
    """Eight samples: (jpeg_bytes, class name, caption), or (image, label) for part `shard` of `of`."""
    for i in range(8):
        if shard is None:
            yield _jpeg(i), CLASSES[i % 2], f"sample {i}"
        elif i % of == shard:
            yield _jpeg(i), CLASSES[i % 2]


# No GPU here: what the examples send to "cuda" stays on the CPU.
if not torch.cuda.is_available():
    def _device(value):
        return "cpu" if isinstance(value, (str, torch.device)) and str(value).startswith("cuda") else value

    _to = torch.Tensor.to
    torch.Tensor.to = lambda self, *a, **k: _to(self, *map(_device, a), **{n: _device(v) for n, v in k.items()})
    torch.Tensor.cuda = lambda self, *a, **k: self

# Batches the block's loaders yield, reported when it ends.
_batches = [0]
_iter = shardpack.Loader.__iter__


def _counting_iter(self):
    for batch in _iter(self):
        _batches[0] += 1
        yield batch


shardpack.Loader.__iter__ = _counting_iter
atexit.register(lambda: print(f"doc-test: {_batches[0]} batches", file=sys.stderr))
'''


def point_into(code, world, language):
    """The docs' placeholder folders, pointed into the world."""
    quote = "[\"']" if language == "python" else "(?:^|(?<=[\\s=]))"
    code = re.sub(f"({quote})/(data|scratch|local)/", lambda m: f"{m.group(1)}{world}/{m.group(2)}/", code,
                  flags=re.M)
    return code


def run_block(code, language, world, timeout=240):
    env = dict(os.environ, HOME=str(world / "home"), PATH=f"{pathlib.Path(tool('SHARDPACK_CLI')).parent}:{os.environ['PATH']}")
    if language == "python":
        argv = [sys.executable, "-c", PRELUDE + "\n" + code]
    else:
        argv = ["bash", "-euo", "pipefail", "-c", code]
    return subprocess.run(argv, cwd=world, env=env, capture_output=True, text=True, timeout=timeout)


def command_lines(code):
    """A command list's commands, one per line (continued lines joined), comments and blanks left out."""
    commands, current = [], ""
    for line in code.splitlines():
        current += line
        if current.endswith("\\"):
            current = current[:-1]
            continue
        command = re.sub(r"\s+#.*$", "", current).strip()
        if command and not command.startswith("#"):
            commands.append(command)
        current = ""
    return commands


@pytest.mark.parametrize("block", runnable())
def test_the_example_runs(block, worlds, tmp_path):
    doc, line, language, marker, code = block
    world_name = marker.split()[-1]
    world = tmp_path / "world"
    shutil.copytree(worlds[world_name], world, symlinks=True)
    if marker.startswith("lines "):
        commands = command_lines(code)
        assert commands, f"{doc}:{line}: no commands"
        for command in commands:
            # Each command on its own copy: one that packs into OUT finds it free, the others packed.
            fresh = tmp_path / f"cmd{commands.index(command)}"
            shutil.copytree(worlds[world_name], fresh, symlinks=True)
            if re.match(r"shardpack (pack|convert|slurm-script) ", command):
                shutil.rmtree(fresh / "OUT")
            r = run_block(point_into(command, fresh, "sh"), "sh", fresh)
            assert r.returncode == 0, f"{doc}:{line}: {command}\n{r.stdout}\n{r.stderr}"
        return
    r = run_block(point_into(code, world, language), language, world)
    assert r.returncode == 0, f"{doc}:{line}:\n{r.stdout}\n{r.stderr}"
    if language == "python" and re.search(r"^\s*for .* in .*(loader|seg|mixed)\b", code, re.M):
        assert re.search(r"doc-test: [1-9]\d* batches", r.stderr), f"{doc}:{line}: no batch was read\n{r.stderr}"
