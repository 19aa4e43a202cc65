"""The driver of scripts/bench-peers.sh: shardpack beside the loaders and writers users would pick
instead, on one image tree, in one run, the contenders alternating round by round.

  bench_peers.py run TREE WORK --shardpack CLI [--rounds R] [--batch B] [--threads T] [--quick] [--only NAME]...
      writers, then loaders, R rounds each (every contender once a round, in the same order), each
      contender in a process of its own; every run printed, then medians and ranges; the table also
      in WORK/peers.md and the figures in WORK/peers.json. --quick: one round, and each loader
      stops after its first batch (a smoke test: proves each contender runs, judges no speed).
  bench_peers.py write NAME TREE OUT --shardpack CLI        one writer, its JSON result printed
  bench_peers.py load NAME WORK --batch B --threads T [--quick] [--tree TREE]
                                                            one loader, its JSON result printed

The work is the same for every loader: the tree's images, random-resized-crop 224 (scale 0.08-1,
ratio 3/4-4/3) + horizontal flip, uint8 (N, 3, 224, 224) batches of B with their labels, one epoch
after a warm-up of a few batches (worker processes, JIT compilation, page cache); images/s is what
reached this loop. Each loader is given the machine's cores its own way (threads or worker
processes, T of them) at its documented best settings; every first batch is checked for shape,
dtype and labels, so that no contender is timed doing less work.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python", "tests"))
from bench_mds import tree_items  # noqa: E402  ((path, label) of every image, classes in sorted order)

SIZE = 224
WARMUP_BATCHES = 2
WRITERS = ["shardpack pack", "webdataset ShardWriter", "Streaming MDSWriter", "litdata.optimize",
           "datasets to_parquet", "FFCV DatasetWriter"]
LOADERS = ["shardpack Loader (wds)", "shardpack Loader (raw)", "torch DataLoader (folder, PIL)",
           "webdataset WebLoader", "Streaming StreamingDataset", "LitData StreamingDataLoader",
           "datasets (Parquet, with_transform)", "DALI (CPU)", "SPDL", "FFCV",
           "Grain DataLoader (shardpack.grain.DataSource, PIL)", "shardpack.grain.Loader (jax.Array)"]
# Where each writer's output goes under WORK, and which loader reads it.
OUTPUT = {"shardpack pack": "wds", "webdataset ShardWriter": "webdataset", "Streaming MDSWriter": "mds",
          "litdata.optimize": "litdata", "datasets to_parquet": "parquet", "FFCV DatasetWriter": "ffcv"}
# What each loader reads: a folder under WORK, or (None) the image tree itself.
INPUT = {"shardpack Loader (wds)": "wds", "shardpack Loader (raw)": "raw", "torch DataLoader (folder, PIL)": None,
         "webdataset WebLoader": "webdataset", "Streaming StreamingDataset": "mds",
         "LitData StreamingDataLoader": "litdata", "datasets (Parquet, with_transform)": "parquet",
         "DALI (CPU)": None, "SPDL": None, "FFCV": "ffcv", "Grain DataLoader (shardpack.grain.DataSource, PIL)": "wds",
         "shardpack.grain.Loader (jax.Array)": "wds"}


def version(module):
    try:
        from importlib.metadata import version as v
        return v(module)
    except Exception:  # noqa: BLE001 (a peer that is not installed has no version)
        return None


# ----------------------------------------------------------------------------------------------
# Writers: the tree's JPEG bytes as they are (FFCV re-encodes: it stores no file's bytes).


def write_shardpack(tree, out, cli):
    subprocess.run([cli, "pack", tree, out, "--format", "wds", "--quiet", "--no-sync"], check=True,
                   stdout=subprocess.DEVNULL)


def write_webdataset(tree, out, cli):
    import webdataset

    os.makedirs(out)
    with webdataset.ShardWriter(os.path.join(out, "shard-%06d.tar"), maxcount=1000, verbose=0) as sink:
        for n, (path, label) in enumerate(tree_items(tree)):
            with open(path, "rb") as f:
                sink.write({"__key__": f"{n:09d}", "jpg": f.read(), "cls": str(label)})


def write_mds(tree, out, cli):
    from PIL import Image

    import streaming_mds

    MDSWriter, _ = streaming_mds.writer_and_reader()
    with MDSWriter(out=out, columns={"image": "jpeg", "label": "int"}) as w:
        for path, label in tree_items(tree):
            with Image.open(path) as image:  # MDSWriter keeps a JPEG file's own bytes
                w.write({"image": image, "label": label})


def litdata_item(entry):
    from PIL import Image

    path, label = entry
    return {"image": Image.open(path), "label": label}  # LitData keeps a JPEG file's own bytes


def write_litdata(tree, out, cli):
    import litdata

    litdata.optimize(fn=litdata_item, inputs=tree_items(tree), output_dir=out, chunk_bytes="64MB",
                     num_workers=os.cpu_count())


def write_parquet(tree, out, cli):
    import datasets

    items = tree_items(tree)
    images = []
    for path, _ in items:
        with open(path, "rb") as f:
            images.append({"bytes": f.read(), "path": os.path.basename(path)})
    ds = datasets.Dataset.from_dict({"image": images, "label": [label for _, label in items]})
    ds = ds.cast_column("image", datasets.Image())
    os.makedirs(out)
    ds.to_parquet(os.path.join(out, "train.parquet"))


def write_ffcv(tree, out, cli):
    import numpy as np
    from ffcv.fields import IntField, RGBImageField
    from ffcv.writer import DatasetWriter
    from PIL import Image

    items = tree_items(tree)

    class Folder:
        def __len__(self):
            return len(items)

        def __getitem__(self, i):
            path, label = items[i]
            return np.asarray(Image.open(path).convert("RGB")), label

    os.makedirs(out)
    # JPEG at FFCV's default quality (90), the images' own sizes; FFCV's writer processes, one a core.
    DatasetWriter(os.path.join(out, "train.beton"), {"image": RGBImageField(write_mode="jpg"), "label": IntField()},
                  num_workers=os.cpu_count()).from_indexed_dataset(Folder())


WRITE = {"shardpack pack": write_shardpack, "webdataset ShardWriter": write_webdataset,
         "Streaming MDSWriter": write_mds, "litdata.optimize": write_litdata, "datasets to_parquet": write_parquet,
         "FFCV DatasetWriter": write_ffcv}


def du(path):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


# What each writer imports, imported before it is timed (a one-off cost, not the writer's speed).
WRITER_MODULES = {"webdataset ShardWriter": ["webdataset"], "Streaming MDSWriter": ["streaming_mds", "PIL.Image"],
                  "litdata.optimize": ["litdata", "PIL.Image"], "datasets to_parquet": ["datasets"],
                  "FFCV DatasetWriter": ["ffcv.writer", "ffcv.fields", "PIL.Image"]}


def run_writer(name, tree, out, cli):
    import importlib

    for module in WRITER_MODULES.get(name, []):
        importlib.import_module(module)
    if name == "Streaming MDSWriter":
        importlib.import_module("streaming_mds").writer_and_reader()
    images = len(tree_items(tree))
    start = time.perf_counter()
    WRITE[name](tree, out, cli)
    seconds = time.perf_counter() - start
    # And until its bytes are on disk: the write-back that `--no-sync` and the peers leave to the
    # kernel is paid by someone; here by the writer that made it (nothing else is dirty: run() syncs
    # before each writer).
    os.sync()
    durable = time.perf_counter() - start
    return {"images": images, "seconds": seconds, "images_per_s": images / seconds,
            "durable_seconds": durable, "durable_images_per_s": images / durable, "bytes_out": du(out)}


# ----------------------------------------------------------------------------------------------
# Loaders: each yields (images, labels) batches; images uint8 (N, 3, 224, 224).


def pil_transform():
    """The Python loaders' transform (bench_torch_baseline.train_transform: torchvision's, or its PIL
    equivalent where torchvision does not import beside this torch)."""
    import bench_torch_baseline

    return bench_torch_baseline.train_transform(SIZE)


def load_shardpack(work, batch, threads, raw=False):
    import shardpack

    loader = shardpack.Loader(os.path.join(work, "raw" if raw else "wds"), batch_size=batch, size=SIZE,
                              threads=threads, shuffle=True)
    return lambda: iter(loader)


def load_folder(work, batch, threads, tree):
    import torch

    import bench_torch_baseline

    ds = bench_torch_baseline.folder_dataset(tree, SIZE)
    loader = torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=True, num_workers=threads,
                                         persistent_workers=True, prefetch_factor=2)
    return lambda: iter(loader)


def load_webdataset(work, batch, threads):
    import webdataset as wds

    shards = sorted(os.path.join(work, "webdataset", f) for f in os.listdir(os.path.join(work, "webdataset")))
    transform = pil_transform()
    ds = (wds.WebDataset(shards, shardshuffle=len(shards), nodesplitter=wds.split_by_node)
          .shuffle(1000).decode("pil").to_tuple("jpg", "cls").map_tuple(transform, int)
          .batched(batch, partial=True))
    loader = wds.WebLoader(ds, batch_size=None, num_workers=threads, persistent_workers=True)
    return lambda: iter(loader)


def load_streaming(work, batch, threads):
    import torch

    import streaming_mds

    streaming_mds.writer_and_reader()  # the package's modules, without its __init__ (see there)
    from streaming.base.dataset import StreamingDataset
    from streaming.base.util import clean_stale_shared_memory

    clean_stale_shared_memory()
    transform = pil_transform()

    class Dataset(StreamingDataset):
        def __getitem__(self, i):
            s = super().__getitem__(i)
            return transform(s["image"].convert("RGB")), s["label"]

    ds = Dataset(local=os.path.join(work, "mds"), shuffle=True, batch_size=batch)
    loader = torch.utils.data.DataLoader(ds, batch_size=batch, num_workers=threads, persistent_workers=True)
    return lambda: iter(loader)


def load_litdata(work, batch, threads):
    import io

    import litdata
    from litdata.streaming.serializers import BytesSerializer
    from PIL import Image

    transform = pil_transform()

    # LitData's own JPEG deserializer decodes with torchvision (not here: requirements.txt says why);
    # its bytes are decoded with PIL instead, as the other Python loaders do.
    class Dataset(litdata.StreamingDataset):
        def __getitem__(self, i):
            s = super().__getitem__(i)
            return transform(Image.open(io.BytesIO(s["image"])).convert("RGB")), s["label"]

    ds = Dataset(os.path.join(work, "litdata"), shuffle=True, serializers={"jpeg": BytesSerializer()})
    loader = litdata.StreamingDataLoader(ds, batch_size=batch, num_workers=threads, persistent_workers=True)
    return lambda: iter(loader)


def load_parquet(work, batch, threads):
    import datasets
    import torch

    transform = pil_transform()

    def apply(b):
        return {"image": [transform(image.convert("RGB")) for image in b["image"]], "label": b["label"]}

    ds = datasets.Dataset.from_parquet(os.path.join(work, "parquet", "train.parquet")).with_transform(apply)

    def collate(rows):
        return torch.stack([r["image"] for r in rows]), torch.tensor([r["label"] for r in rows])

    loader = torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=True, num_workers=threads,
                                         persistent_workers=True, collate_fn=collate)
    return lambda: iter(loader)


def load_dali(work, batch, threads, tree):
    import nvidia.dali.fn as fn
    import nvidia.dali.types as types
    from nvidia.dali import pipeline_def
    from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    @pipeline_def(batch_size=batch, num_threads=threads, device_id=None)
    def pipeline():
        jpegs, labels = fn.readers.file(file_root=tree, random_shuffle=True, name="Reader")
        images = fn.decoders.image_random_crop(jpegs, device="cpu", output_type=types.RGB,
                                               random_area=[0.08, 1.0], random_aspect_ratio=[3 / 4, 4 / 3])
        images = fn.resize(images, resize_x=SIZE, resize_y=SIZE)
        images = fn.crop_mirror_normalize(images, dtype=types.UINT8, output_layout="CHW",
                                          mirror=fn.random.coin_flip())
        return images, labels

    pipe = pipeline()
    pipe.build()
    loader = DALIGenericIterator(pipe, ["images", "labels"], reader_name="Reader",
                                 last_batch_policy=LastBatchPolicy.PARTIAL, auto_reset=True)

    def epoch():
        for out in loader:
            yield out[0]["images"], out[0]["labels"].view(-1)

    return epoch


def load_spdl(work, batch, threads, tree):
    import math
    import random

    import numpy as np
    import spdl.io
    import torch
    from spdl.pipeline import PipelineBuilder

    items = tree_items(tree)

    def load(item):  # FFmpeg's crop, scale and hflip filters, the box drawn as RandomResizedCrop does
        path, label = item
        packets = spdl.io.demux_image(path)
        width, height = packets.codec.width, packets.codec.height
        area = width * height
        w, h, x, y = width, height, 0, 0
        for _ in range(10):
            target = area * random.uniform(0.08, 1.0)
            aspect = math.exp(random.uniform(math.log(3 / 4), math.log(4 / 3)))
            cw, ch = int(round(math.sqrt(target * aspect))), int(round(math.sqrt(target / aspect)))
            if 0 < cw <= width and 0 < ch <= height:
                w, h, x, y = cw, ch, random.randint(0, width - cw), random.randint(0, height - ch)
                break
        flip = ",hflip" if random.random() < 0.5 else ""
        frames = spdl.io.decode_packets(
            packets, filter_desc=f"crop={w}:{h}:{x}:{y},scale={SIZE}:{SIZE},format=rgb24{flip}")
        return np.asarray(spdl.io.convert_frames(frames)), label

    def collate(rows):
        images = torch.from_numpy(np.stack([r[0] for r in rows])).permute(0, 3, 1, 2)
        return images, torch.tensor([r[1] for r in rows])

    def epoch():
        order = items[:]
        random.shuffle(order)
        pipeline = (PipelineBuilder().add_source(order).pipe(load, concurrency=threads)
                    .aggregate(batch, drop_last=False).pipe(collate).add_sink(3).build(num_threads=threads))
        with pipeline.auto_stop():
            yield from pipeline

    return epoch


def load_ffcv(work, batch, threads):
    from ffcv.fields.decoders import IntDecoder, RandomResizedCropRGBImageDecoder
    from ffcv.loader import Loader, OrderOption
    from ffcv.transforms import RandomHorizontalFlip, Squeeze, ToTensor, ToTorchImage

    loader = Loader(os.path.join(work, "ffcv", "train.beton"), batch_size=batch, num_workers=threads,
                    order=OrderOption.RANDOM, os_cache=True,
                    pipelines={"image": [RandomResizedCropRGBImageDecoder((SIZE, SIZE)), RandomHorizontalFlip(),
                                         ToTensor(), ToTorchImage(channels_last=True)],
                               "label": [IntDecoder(), ToTensor(), Squeeze()]})
    return lambda: iter(loader)


def load_grain(work, batch, threads):
    """Grain's own pipeline as a JAX user writes it over shardpack.grain.DataSource: its DataLoader,
    `threads` worker processes, PIL decoding and the transform in a Map, grain's Batch."""
    import io
    import math

    import grain
    import numpy as np
    from absl import flags
    from PIL import Image

    import shardpack.grain

    flags.FLAGS.mark_as_parsed()  # Grain's worker processes read absl flags (docs/jax.md)
    transform = pil_transform()

    class Decode(grain.transforms.Map):
        def map(self, record):
            image = transform(Image.open(io.BytesIO(record["jpg"])).convert("RGB"))
            return {"image": image.numpy(), "label": np.int32(record["cls"])}

    source = shardpack.grain.DataSource(os.path.join(work, "wds"))
    sampler = grain.samplers.IndexSampler(len(source), shard_options=grain.sharding.NoSharding(), shuffle=True,
                                          seed=0)  # num_epochs None: epoch after epoch, as Grain is used
    loader = grain.DataLoader(data_source=source, sampler=sampler, worker_count=threads,
                              operations=[Decode(), grain.transforms.Batch(batch)])
    return stream_epochs(iter(loader), math.ceil(len(source) / batch), lambda b: (b["image"], b["label"]))


def load_shardpack_jax(work, batch, threads):
    """shardpack's native loader for JAX: batches as jax.Array (N, H, W, 3) over its buffers; seen
    as (N, 3, H, W) for the check, without a copy."""
    import numpy as np

    import shardpack.grain

    loader = shardpack.grain.Loader(os.path.join(work, "wds"), batch_size=batch, size=SIZE, threads=threads)
    return stream_epochs(iter(loader), len(loader),
                         lambda b: (np.asarray(b["image"]).transpose(0, 3, 1, 2), np.asarray(b["label"])))


def stream_epochs(iterator, batches, unpack):
    """An epoch's worth of batches at a time from an iterator that runs epoch after epoch (Grain's way)."""
    def epoch():
        for _ in range(batches):
            yield unpack(next(iterator))

    return epoch


def make_loader(name, work, batch, threads, tree):
    """The contender's epoch function: called once an epoch, it yields (images, labels) batches."""
    makers = {
        "shardpack Loader (wds)": lambda: load_shardpack(work, batch, threads),
        "shardpack Loader (raw)": lambda: load_shardpack(work, batch, threads, raw=True),
        "torch DataLoader (folder, PIL)": lambda: load_folder(work, batch, threads, tree),
        "webdataset WebLoader": lambda: load_webdataset(work, batch, threads),
        "Streaming StreamingDataset": lambda: load_streaming(work, batch, threads),
        "LitData StreamingDataLoader": lambda: load_litdata(work, batch, threads),
        "datasets (Parquet, with_transform)": lambda: load_parquet(work, batch, threads),
        "DALI (CPU)": lambda: load_dali(work, batch, threads, tree),
        "SPDL": lambda: load_spdl(work, batch, threads, tree),
        "FFCV": lambda: load_ffcv(work, batch, threads),
        "Grain DataLoader (shardpack.grain.DataSource, PIL)": lambda: load_grain(work, batch, threads),
        "shardpack.grain.Loader (jax.Array)": lambda: load_shardpack_jax(work, batch, threads),
    }
    if name not in makers:
        raise SystemExit(f"no loader named {name!r}: one of {LOADERS}")
    return makers[name]()


def check_batch(name, images, labels, batch):
    """The same work for everyone: uint8 (N, 3, 224, 224) with N labels."""
    import torch

    images = torch.as_tensor(images)
    n = images.shape[0]
    if tuple(images.shape[1:]) != (3, SIZE, SIZE) or images.dtype != torch.uint8 or not 0 < n <= batch:
        raise SystemExit(f"{name}: a batch of {tuple(images.shape)} {images.dtype}, not uint8 (N<={batch}, 3, {SIZE}, "
                         f"{SIZE})")
    if len(labels) != n:
        raise SystemExit(f"{name}: {len(labels)} labels for {n} images")
    return n


def run_loader(name, work, batch, threads, tree, quick):
    import torch

    torch.set_num_threads(1)  # the loader's own threads and workers do the work
    opened = time.perf_counter()
    epoch = make_loader(name, work, batch, threads, tree)
    # Warm-up: worker processes started, pipelines built, JIT compiled, the files in the page cache.
    warm = 0
    for images, labels in epoch():
        check_batch(name, images, labels, batch)
        warm += 1
        if quick or warm == WARMUP_BATCHES:
            break
    first_batch = time.perf_counter() - opened
    if quick:
        return {"images": 0, "seconds": 0, "images_per_s": 0, "first_batch_seconds": first_batch}
    start = time.perf_counter()
    images = 0
    for batch_images, labels in epoch():
        images += check_batch(name, batch_images, labels, batch)
    seconds = time.perf_counter() - start
    return {"images": images, "seconds": seconds, "images_per_s": images / seconds,
            "first_batch_seconds": first_batch}


# ----------------------------------------------------------------------------------------------
# The run: contenders alternating, each in a process of its own.


def child(args, command):
    """One contender in a fresh process: its JSON result, or the reason it could not run."""
    p = subprocess.run([sys.executable, os.path.abspath(__file__)] + command, capture_output=True, text=True,
                       timeout=args.timeout)
    if p.returncode != 0:
        lines = [line for line in (p.stderr + p.stdout).strip().splitlines() if line.strip()]
        return {"error": lines[-1] if lines else f"exit status {p.returncode}"}
    return json.loads(p.stdout.strip().splitlines()[-1])


def read_through(path):
    """Reads every file under `path` once (not timed), so that the writer or loader timed next
    finds all of its input in the page cache, as the table says. This machine's host takes cached
    pages back while they sit unread: a 437 MB shard read whole was 83% cached 78 s later and 68%
    after 150 s (fincore, the machine idle), and a contender meeting the rest on disk is timed
    waiting for it (in a full run without this, the shardpack loader read 2-4% slower than in a
    run of it alone, and the raw loader, 786 MB, swung between 3,753 and 15,283 images/s)."""
    for root, _, files in os.walk(path):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                while f.read(1 << 20):
                    pass


def doctor_decode(cli, tree, threads):
    """`shardpack doctor`'s decode row for the tree: images/s of its crop-aware decode on `threads` threads at once."""
    p = subprocess.run([cli, "doctor", tree, "--json", "--threads", str(threads)], check=True, capture_output=True,
                       text=True)
    return next(layer for layer in json.loads(p.stdout)["layers"] if layer["name"] == "decode")


def spread(values):
    return (statistics.median(values), min(values), max(values)) if values else (None, None, None)


def table(results, names, rate_key, extra):
    rows = []
    for name in names:
        runs = results[name]
        ok = [r[rate_key] for r in runs if "error" not in r]
        if not ok:
            rows.append((name, None, None, None, runs[0].get("error", "did not run") if runs else "did not run", None))
            continue
        med, low, high = spread(ok)
        rows.append((name, med, low, high, None, extra(runs)))
    return rows


def run(args):
    import shardpack  # noqa: F401 (the driver's own check that the module is the build's)

    tree = os.path.abspath(args.tree)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    if not os.path.isdir(os.path.join(work, "raw")):
        subprocess.run([args.shardpack, "pack", tree, os.path.join(work, "raw"), "--format", "raw", "--resize", "256",
                        "--crop", "256", "--quiet", "--no-sync"], check=True, stdout=subprocess.DEVNULL)
    rounds = 1 if args.quick else args.rounds
    writers = [n for n in WRITERS if not args.only or n in args.only]
    loaders = [n for n in LOADERS if not args.only or n in args.only]
    unknown = set(args.only) - set(WRITERS) - set(LOADERS)
    if unknown:
        raise SystemExit(f"--only {sorted(unknown)}: no such contender; one of {WRITERS + LOADERS}")
    writes = {name: [] for name in writers}
    loads = {name: [] for name in loaders}
    for r in range(rounds):
        for name in writers:
            out = os.path.join(work, OUTPUT[name])
            subprocess.run(["rm", "-rf", out], check=True)
            # Every writer starts with nothing dirty in the page cache: otherwise the one before it
            # (450 MB each) is written back during its time, and the first of a round pays for the last.
            os.sync()
            read_through(tree)  # (every writer reads the tree from the page cache, as loaders read their input)
            got = child(args, ["write", name, tree, out, "--shardpack", args.shardpack])
            writes[name].append(got)
            print(f"round {r + 1}, write, {name}: " + (got.get("error") or
                  f"{got['images_per_s']:.0f} images/s ({got['durable_images_per_s']:.0f} until on disk), "
                  f"{got['bytes_out'] / 1e6:.1f} MB"), flush=True)
    os.sync()  # (the writers' output written back before the decode is timed, not during it)
    capacity = []  # doctor's crop-aware decode capacity of the tree, measured in each round beside the loaders
    for r in range(rounds):
        if not args.quick and loaders:
            capacity.append(doctor_decode(args.shardpack, tree, args.threads))
            print(f"round {r + 1}, doctor: crop-aware decode capacity {capacity[-1]['images_per_s']:.0f} images/s "
                  f"({capacity[-1]['detail']})", flush=True)
        for name in loaders:
            command = ["load", name, work, "--tree", tree, "--batch", str(args.batch), "--threads", str(args.threads)]
            read_through(tree if INPUT[name] is None else os.path.join(work, INPUT[name]))
            got = child(args, command + (["--quick"] if args.quick else []))
            loads[name].append(got)
            print(f"round {r + 1}, load, {name}: " + (got.get("error") or
                  (f"first batch in {got['first_batch_seconds']:.1f} s" if args.quick else
                   f"{got['images_per_s']:.0f} images/s ({got['images']} images in {got['seconds']:.2f} s)")),
                  flush=True)
    versions = {m: version(m) for m in ("torch", "webdataset", "mosaicml-streaming", "litdata", "datasets", "pyarrow",
                                        "nvidia-dali-cuda120", "spdl_io", "ffcv", "grain", "jax", "pillow",
                                        "numpy")}
    json.dump({"tree": tree, "images": len(tree_items(tree)), "rounds": rounds, "batch": args.batch,
               "threads": args.threads, "versions": versions, "writers": writes, "loaders": loads,
               "decode_capacity": capacity},
              open(os.path.join(work, "peers.json"), "w"), indent=1)
    failed = [n for n, runs in list(writes.items()) + list(loads.items())
              if any("error" in r for r in runs) and n not in args.may_fail]
    if args.quick:
        print("quick: every contender ran" if not failed else f"quick: failed: {failed}")
        return 1 if failed else 0
    lines = [f"| writer ({len(tree_items(tree))} images) | images/s: median (range) | until on disk (`sync` after) | "
             f"MB out |", "|---|---|---|---|"]
    peer_writers = [n for n in writers if n != WRITERS[0]]
    best = {key: max((row[1] for row in table(writes, peer_writers, key, lambda r: 0) if row[1]), default=0)
            for key in ("images_per_s", "durable_images_per_s")}
    durable = {row[0]: row for row in table(writes, writers, "durable_images_per_s", lambda r: 0)}
    for name, med, low, high, error, mb in table(writes, writers, "images_per_s",
                                                 lambda runs: statistics.median(r["bytes_out"] for r in runs
                                                                                if "error" not in r) / 1e6):
        d = durable[name]
        lines.append(f"| {name} | {error} | | |" if error else f"| {name} | {med:,.0f} ({low:,.0f}-{high:,.0f}) | "
                     f"{d[1]:,.0f} ({d[2]:,.0f}-{d[3]:,.0f}) | {mb:,.1f} |")
    if loaders:
        lines += ["", f"| loader (batches of {args.batch}, {args.threads} threads or workers) | "
                  f"images/s: median (range) | first batch, s |", "|---|---|---|"]
    rows = table(loads, loaders, "images_per_s",
                 lambda runs: statistics.median(r["first_batch_seconds"] for r in runs if "error" not in r))
    for name, med, low, high, error, first in rows:
        lines.append(f"| {name} | {error} | |" if error else f"| {name} | {med:,.0f} ({low:,.0f}-{high:,.0f}) | "
                     f"{first:.1f} |")
    peers = [row for row in rows if not row[0].startswith("shardpack") and row[1]]
    ours = dict((row[0], row[1]) for row in rows if row[0].startswith("shardpack") and row[1])
    pack = {key: table(writes, WRITERS[:1], key, lambda r: 0)[0][1] if WRITERS[0] in writes else None
            for key in ("images_per_s", "durable_images_per_s")}
    if peers:
        fastest = max(peers, key=lambda row: row[1])
        lines += ["", f"shardpack Loader (wds) / fastest peer ({fastest[0]}): "
                  f"{ours.get('shardpack Loader (wds)', 0) / fastest[1]:.2f}x"]
    for key, what in (("images_per_s", ""), ("durable_images_per_s", ", until on disk")):
        if best[key] and pack[key]:
            lines.append(f"shardpack pack / fastest peer writer{what}: {pack[key] / best[key]:.2f}x")
    grain_rate = dict((row[0], row[1]) for row in rows).get("Grain DataLoader (shardpack.grain.DataSource, PIL)")
    if grain_rate and ours.get("shardpack.grain.Loader (jax.Array)"):
        lines.append(f"shardpack.grain.Loader / Grain DataLoader over shardpack.grain.DataSource: "
                     f"{ours['shardpack.grain.Loader (jax.Array)'] / grain_rate:.2f}x")
    ratios = [run["images_per_s"] / c["images_per_s"] for run, c in zip(loads.get("shardpack Loader (wds)", []),
                                                                         capacity) if "error" not in run]
    capacities = ", ".join(f"{c['images_per_s']:,.0f}" for c in capacity)
    if ratios:
        lines.append(f"shardpack Loader (wds) / `shardpack doctor`'s crop-aware decode capacity on {args.threads} "
                     f"threads at once, "
                     f"each round's: median {statistics.median(ratios):.3f} "
                     f"({', '.join(f'{r:.3f}' for r in ratios)}; capacity {capacities} images/s)")
    lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items() if v))
    text = "\n".join(lines)
    open(os.path.join(work, "peers.md"), "w").write(text + "\n")
    print(text)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("tree")
    r.add_argument("work")
    r.add_argument("--shardpack", required=True)
    r.add_argument("--rounds", type=int, default=3)
    r.add_argument("--batch", type=int, default=256)
    r.add_argument("--threads", type=int, default=os.cpu_count())
    r.add_argument("--quick", action="store_true")
    r.add_argument("--timeout", type=float, default=1800)
    r.add_argument("--only", action="append", default=[],
                   help="run only this contender (again for more); a loader reads what its writer wrote, so name "
                        "that writer too (the shardpack loaders and Grain's read \"shardpack pack\"'s output)")
    r.add_argument("--may-fail", action="append", default=[],
                   help="a contender whose failure is reported but does not fail the run")
    w = sub.add_parser("write")
    w.add_argument("name")
    w.add_argument("tree")
    w.add_argument("out")
    w.add_argument("--shardpack", required=True)
    lo = sub.add_parser("load")
    lo.add_argument("name")
    lo.add_argument("work")
    lo.add_argument("--tree", required=True)
    lo.add_argument("--batch", type=int, default=256)
    lo.add_argument("--threads", type=int, default=os.cpu_count())
    lo.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.command == "run":
        return run(args)
    if args.command == "write":
        print(json.dumps(run_writer(args.name, args.tree, args.out, args.shardpack)))
        return 0
    print(json.dumps(run_loader(args.name, args.work, args.batch, args.threads, args.tree, args.quick)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
