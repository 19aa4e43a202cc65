"""shardpack.Loader: the drop-in replacement for a DataLoader over a packed dataset."""

import json
import math
import numbers
import warnings

from . import _options as _opt
from . import _paths
from . import _shardpack
from ._distributed import default_rank_world

_TRANSFORMS = ("train", "eval")


def decode_fields(names, columns):
    """{name: [value or None per sample]}: text fields as str, JSON fields parsed, others bytes."""
    decoded = {}
    for name, values in zip(names, columns):
        kind = name.rsplit(".", 1)[-1].lower()
        if kind == "txt":
            decoded[name] = [None if v is None else v.decode("utf-8") for v in values]
        elif kind == "json":
            decoded[name] = [None if v is None else json.loads(v) for v in values]
        else:
            decoded[name] = list(values)
    return decoded


def mixture_sources(sources):
    """The sources of a mixture as dicts {location, weight, samples, passes}, from a list whose items
    are a location, a (location, weight) pair, or a dict with "location" and one of "weight",
    "samples", "passes". Raises ValueError naming the source for what is not a number."""
    if isinstance(sources, (str, bytes)) or not sources:
        raise ValueError("sources takes a list of datasets, e.g. [('web', 0.7), ('curated', 0.3)]")
    out = []
    for i, item in enumerate(sources):
        if isinstance(item, dict):
            entry = dict(item)
        elif isinstance(item, (tuple, list)):
            if len(item) != 2:
                raise ValueError(f"source {i + 1}: give (location, weight), not {item!r}")
            entry = dict(location=item[0], weight=item[1])
        else:
            entry = dict(location=item)
        unknown = set(entry) - {"location", "weight", "samples", "passes"}
        if unknown or "location" not in entry:
            raise ValueError(f"source {i + 1}: a source has a location and a weight, samples or passes, "
                             f"not {sorted(unknown) or 'no location'}")
        location = str(entry["location"])
        name = f"source {i + 1} ({location})"
        values = {}
        for key, default in (("weight", 1.0), ("samples", 0), ("passes", 0.0)):
            value = entry.get(key, default)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ValueError(f"{name}: the {key} must be a number, got {value!r}")
            values[key] = value
        if isinstance(values["samples"], float) and not values["samples"].is_integer():
            raise ValueError(f"{name}: samples must be a whole number, got {values['samples']!r}")
        if values["samples"] < 0:
            raise ValueError(f"{name}: samples must be at least 0, got {values['samples']!r}")
        if math.isnan(float(values["weight"])):
            raise ValueError(f"{name}: the weight is not a number")
        out.append(dict(location=location, weight=float(values["weight"]), samples=int(values["samples"]),
                        passes=float(values["passes"])))
    return out


def bucket_spec(buckets):
    """buckets as the C++ loader takes them: a preset, list or rule string as given, or a sequence of
    (width, height) pairs written as "WxH,WxH"."""
    if isinstance(buckets, str):
        return buckets
    if isinstance(buckets, bytes) or not hasattr(buckets, "__iter__"):
        raise TypeError(f"buckets takes a preset such as 'sdxl', a rule such as 'area=1024x1024,step=64,min=512,"
                        f"max=2048', or a list of (width, height) pairs, not {type(buckets).__name__}")
    parts = []
    for item in buckets:
        if isinstance(item, (str, bytes)) or not hasattr(item, "__len__") or len(item) != 2:
            raise TypeError(f"buckets: each bucket is a (width, height) pair of ints, not {item!r}")
        width, height = (_opt.integer("buckets", v) for v in item)
        parts.append(f"{width}x{height}")
    return ",".join(parts)


def _worker_share(worker, num_workers):
    """(worker, num_workers): which share of the rank's batches this loader reads. Given together,
    as documented; neither given: torch's DataLoader worker info when this runs inside a DataLoader
    worker, else the whole share. num_workers alone is the DataLoader habit of asking for more
    loading processes, which here would read a 1/num_workers part of the data: refused."""
    if worker is None and num_workers is None:
        import sys

        torch = sys.modules.get("torch")
        info = torch.utils.data.get_worker_info() if torch is not None and hasattr(torch, "utils") else None
        return (info.id, info.num_workers) if info is not None else (0, 1)
    if worker is None or num_workers is None:
        given = f"num_workers={num_workers}" if worker is None else f"worker={worker}"
        raise ValueError(f"{given} without {'worker' if worker is None else 'num_workers'}: shardpack.Loader is not a "
                         "DataLoader and starts no worker processes; it decodes on threads=N threads (default: "
                         "every core), so for more loading parallelism use threads=. worker= and num_workers= "
                         "split the data among processes you start yourself, each reading 1/num_workers of it: "
                         "give both (shardpack.IterableDataset does this inside a DataLoader)")
    if isinstance(worker, bool) or isinstance(num_workers, bool) or not isinstance(worker, numbers.Integral) \
            or not isinstance(num_workers, numbers.Integral):
        raise TypeError(f"worker and num_workers take ints, not {worker!r} and {num_workers!r}")
    if num_workers < 1 or not 0 <= worker < num_workers:
        raise ValueError(f"worker={worker} must lie in 0..num_workers-1 (num_workers={num_workers})")
    return int(worker), int(num_workers)


def _check_state(state):
    """A state comes from outside (a checkpoint file): its counters must be what state_dict() writes,
    whole numbers from 0 to 2**64 - 1, or it is refused here, naming the key, before any of it is used."""
    if not isinstance(state, dict):
        raise TypeError(f"load_state_dict takes the dict that state_dict() returned, not {type(state).__name__}")
    for key in ("epoch", "batch", "samples_done", "epoch_samples_done", "epoch_batches_done"):
        if key not in state:
            if key in ("epoch", "batch"):
                raise ValueError(f"state_dict has no {key!r}: give load_state_dict what state_dict() returned")
            continue
        value = state[key]
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 0 <= value < 2**64:
            raise ValueError(f"state_dict has {key}={value!r}: it must be a whole number of at least 0, as "
                             "state_dict() writes it")


class Loader:
    """Batches of decoded, cropped images as torch tensors, from a packed dataset or a mixture.

    path: a dataset folder (any format) or its manifest.json, or WebDataset shards: a spec such as
        "train-{000000..000127}.tar", a list of shard files, or a glob ("out/*.tar"); or a folder or
        spec at a URL (http://, https://, s3://; docs/remote.md).
    batch_size: images per batch (the last of an epoch may be smaller, unless drop_last).
    shuffle, seed: shuffle each epoch (set_epoch) in an order that is a pure function of seed and
        epoch: every rank computes the same one, and resume continues it exactly. shuffle=False
        reads the dataset in its order.
    drop_last: leave out the last, smaller batch of each rank's epoch (every rank still gets the
        same number of batches either way).
    size: the output size, an int (square) or (height, width); default 224. Not with buckets or a
        token budget (refused: they size each batch themselves).
    fast_decode: decode training JPEGs with libjpeg-turbo's fast IDCT and upsampling (faster per
        image, values within a level or two of the accurate decode; docs/performance.md). False:
        the accurate decode. "eval" always decodes accurately.
    prefetch: batches prepared ahead of the one being consumed.
    sources: instead of path, several datasets mixed in every epoch (docs/mixing.md): a list of
        locations, (location, weight) pairs, or dicts {"location": ..., and "weight", "samples" (per
        epoch) or "passes" (per epoch)}. epoch_size (default: the sum of the sources' sizes) is
        shared by weight; per_source_batches=True makes each batch from one source;
        shared_classes=True maps every source's labels into one table by class name. Iterating
        then yields (images, labels, sources, ...) with sources the int64 source index per sample.
    cache_dir, cache_limit, prefetch_shards, downloads: for a URL. cache_dir (default
        $SHARDPACK_CACHE) is where whole shards are kept, checked, shared by the processes of a node;
        cache_limit (bytes, 0 = no bound) bounds it. Without a cache folder, shards are streamed
        into memory with shuffle_buffer > 0 or shuffle=False, and the global shuffle reads each
        sample by HTTP range requests (docs/remote.md). prefetch_shards (0 = twice
        `downloads`) shards are downloaded ahead in the epoch's order, `downloads` at once. With
        buckets or a token budget, cache_dir also keeps the node's table of each sample's group,
        made by the first process and mapped by the others, a URL or not (docs/buckets.md, "Cost").
    transform: "train" (random-resized-crop to `size` with `scale` and `ratio`, then a horizontal
        flip with probability `flip`) or "eval" (resize the shorter side to `resize`, default
        size * 256 / 224, then centre-crop `size`). Raw shards already of the output size are
        passed through untouched in "eval".
    layout: "channels_last" (default): images of shape (N, 3, H, W), as a model's first Conv2d takes
        them, in torch.channels_last memory format: the loader's buffer itself, no copy. "NHWC":
        the same bytes as (N, H, W, 3). "NCHW": (N, 3, H, W) planes, transposed by the C++ loader.
        Images are uint8 (device="cuda" converts and normalises; its layouts are as before).
    rank, world_size: default to torch.distributed's when it is initialised, else 0 and 1. Every
        rank gets the same number of batches; together the ranks see every sample once an epoch.
    threads: decode threads (default 0: every core). This, not num_workers, is how the loader
        loads in parallel: it is not a DataLoader and starts no worker processes.
    worker, num_workers: split the rank's batches among processes you start yourself, this one
        reading share `worker` of `num_workers`; give both or neither. Neither: torch's DataLoader
        worker info when the loader is made inside a DataLoader worker, else the whole share.
        num_workers alone (the DataLoader habit) is refused with a message, since it would read
        only 1/num_workers of the data.
    skip_corrupt: a sample whose bytes are damaged or do not decode is left out of its batch
        (which is then smaller by one; the same samples on resume), named once in a warning, and
        counted in stats()["corrupt"]. False: the first such sample raises.
    shuffle_buffer: 0 for a global shuffle; N for a streaming shuffle (shards in random order
        through a buffer of N samples) when random reads are slow.
    pin_memory: batch buffers in page-locked memory (torch's pinned allocator), ready for
        .to("cuda", non_blocking=True). Without CUDA it warns and uses ordinary memory.
    device: "cpu" (default), or "cuda" (or "cuda:N"): batches arrive as CUDA tensors through
        shardpack's CUDA feed (pinned buffers, asynchronous copies on their own stream, double or
        triple buffering with `depth`), normalised on the GPU to `dtype` ("float32", "float16",
        "bfloat16"; NCHW, (x - mean) / std with mean and std on the 0-255 scale) or left "uint8".
        torch's current stream waits for each batch; a buffer is reused once its tensor is freed.

    fields: names of a sample's other files to deliver with each image, e.g. ("txt",) for captions
        or ("txt", "json"); docs/formats/source-layout.md. Iterating then yields (images, labels,
        fields) where fields maps each name to a list aligned with the images: "txt" (and "*.txt")
        as str, "json" (and "*.json") as the parsed object, others as bytes, None where a sample
        has no such field. require_fields: a missing field stops the epoch with an error naming the
        sample instead. CPU only for now.
    mask: a field holding each sample's label mask, e.g. "seg.png" (one 8-bit channel of class ids,
        of the image's size): decoded and given exactly the image's crop and flip, resampled by
        nearest neighbour so every value stays a class id. Iterating then yields (images, labels,
        masks[, fields]) with masks a (N, H, W) uint8 tensor. A sample without a usable mask counts
        as corrupt (skip_corrupt). CPU only for now.
    buckets: aspect-ratio buckets (docs/buckets.md): "sdxl" (the SDXL paper's 41 resolutions), a
        rule "area=1024x1024,step=64,min=512,max=2048[,max-ratio=4]", or a list of (width, height)
        pairs. Every batch then holds images of one bucket, each resized to cover the bucket
        nearest its aspect ratio (as shown, EXIF orientation applied) and cropped to it (random
        offset and flip in "train", centred in "eval"); batches have that bucket's shape, and
        batch.bucket (batches()) tells which. `size` is not used. Needs a local dataset packed by
        shardpack (the image sizes in its sample tables). CPU only for now.
    bucket_no_upscale: as kohya-ss's option of that name: each image goes to the nearest in aspect
        ratio of the buckets it covers (both sides at least the bucket's), so that it is only ever
        shrunk; an image smaller than every bucket is left out (a warning says how many;
        loader.bucket_left_out counts them). Default False: the nearest bucket, enlarging if need be.
    bucket_min_side: leave out images whose shorter side is under this many pixels (too small to
        train at these sizes); counted and warned as above. Default 0: none.
    bucket_tail: what becomes of each bucket's last batch of an epoch when it holds fewer than
        batch_size images: "partial" (handed out smaller; every sample once an epoch), "drop" (left
        out; every batch full: drop_last's counterpart) or "pad" (filled up with the bucket's first
        images of the epoch again). Ranks get equal batch counts: with "drop" a last round that
        would leave a rank without a batch is left out, otherwise completed with the epoch's first
        batches again, as DistributedSampler pads.
    patch, max_side, tokens_per_batch: native resolution under a token budget (docs/buckets.md).
        Each image, as shown, is resized (never enlarged) so that its longer side is at most
        max_side, each side rounded down to a multiple of `patch` (what is left over, less than a
        patch a side, is cut); a batch holds the images whose patches, (h / patch) x (w / patch)
        each, sum to at most tokens_per_batch, packed first-fit in the epoch's order. Iterating then
        yields (patches, labels, sizes, offsets): patches a (tokens, patch, patch, 3) uint8 tensor,
        each image's patches row by row (patches.flatten(1) is what a linear patch embedding takes,
        without a copy), sizes (N, 2) int64 heights and widths, offsets (N + 1,) int64 where each
        image's patches start; then, as with any batch, the sources (a mixture) and the fields
        asked for. batch_size and size are not used. CPU only for now.

    Iterating yields (images, labels): images share memory with the C++ batch buffer (no copy);
    labels are int64. A buffer is reused only once nothing refers to its tensor any more, so
    keeping a batch is safe (keeping more than `prefetch` + 1 of them raises an error instead of
    waiting forever: copy what you keep). Call set_epoch(e) before each epoch for a fresh order,
    as with DistributedSampler.
    """

    def __init__(self, path=None, batch_size=32, shuffle=True, seed=0, transform="train", size=None, resize=None,
                 threads=0, rank=None, world_size=None, drop_last=False, pin_memory=False, layout="channels_last",
                 prefetch=2, skip_corrupt=True, shuffle_buffer=0, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3),
                 flip=0.5, fast_decode=True, worker=None, num_workers=None, device="cpu", dtype="float32",
                 mean=(0.485 * 255, 0.456 * 255, 0.406 * 255), std=(0.229 * 255, 0.224 * 255, 0.225 * 255),
                 depth=3, cache_dir=None, cache_limit=0, prefetch_shards=0, downloads=4, fields=(),
                 require_fields=False, mask=None, sources=None, epoch_size=0, per_source_batches=False,
                 shared_classes=False, buckets=None, bucket_tail="partial", patch=None, max_side=None,
                 tokens_per_batch=None, bucket_no_upscale=False, bucket_min_side=0):
        if transform not in _TRANSFORMS:
            raise ValueError(f"transform must be one of {_TRANSFORMS}, not {transform!r}")
        if layout not in ("channels_last", "NHWC", "NCHW"):
            raise ValueError(f"layout must be 'channels_last' (N, 3, H, W without a copy), 'NHWC' or 'NCHW', "
                             f"not {layout!r}")
        self._channels_last = layout == "channels_last" and not str(device).startswith("cuda")
        if size is not None and (buckets is not None or patch is not None):
            made = "buckets: each batch has its bucket's size (batch.width, batch.height; bucket_sizes)" \
                if buckets is not None else "a token budget: each image keeps its aspect ratio, up to max_side"
            raise ValueError(f"size={size!r} is not used with {made}; leave size out")
        size = 224 if size is None else size
        if isinstance(size, (str, bytes)) or not (isinstance(size, numbers.Integral) or hasattr(size, "__len__")):
            raise TypeError(f"size={size!r}: size takes an int or a (height, width) pair of ints, "
                            f"not {type(size).__name__}")
        height, width = ((_opt.integer("size", size, 1),) * 2 if isinstance(size, numbers.Integral)
                         else _opt.pair("size", size, lambda n, v: _opt.integer(n, v, 1)))
        rank, world_size = default_rank_world(rank, world_size)
        worker, num_workers = _worker_share(worker, num_workers)
        allocate = None
        if pin_memory:
            import torch

            if torch.cuda.is_available():
                def allocate(nbytes):
                    return torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
            else:
                warnings.warn("pin_memory=True but CUDA is not available: batches use ordinary memory",
                              stacklevel=2)
        mixture = None
        if sources is not None:
            if path is not None:
                raise ValueError("give either path or sources, not both")
            mixture = dict(sources=mixture_sources(sources), epoch_size=int(epoch_size),
                           per_source_batches=bool(per_source_batches), shared_classes=bool(shared_classes))
            path = ""
        elif path is None:
            raise ValueError("give a dataset path, or sources=[...] to mix several")
        else:
            path = _paths.location(path)
        self._mixture = mixture
        batch_size, shuffle = _opt.integer("batch_size", batch_size, 1), _opt.boolean("shuffle", shuffle)
        seed, drop_last = _opt.integer("seed", seed), _opt.boolean("drop_last", drop_last)
        shuffle_buffer = _opt.integer("shuffle_buffer", shuffle_buffer)
        self._config = dict(path=str(path), batch_size=batch_size, shuffle=shuffle, seed=seed,
                            world_size=world_size, rank=rank, drop_last=drop_last,
                            shuffle_buffer=shuffle_buffer, worker=worker, num_workers=num_workers)
        if buckets is not None:
            self._config.update(buckets=bucket_spec(buckets), bucket_tail=str(bucket_tail))
            if bucket_no_upscale or bucket_min_side:
                self._config.update(bucket_no_upscale=_opt.boolean("bucket_no_upscale", bucket_no_upscale),
                                    bucket_min_side=_opt.integer("bucket_min_side", bucket_min_side, 0))
        elif bucket_no_upscale or bucket_min_side:
            raise ValueError("bucket_no_upscale and bucket_min_side choose among buckets: give buckets too "
                             "(e.g. buckets=\"sdxl\")")
        elif bucket_tail != "partial":
            raise ValueError(f"bucket_tail={bucket_tail!r} without buckets: it says what becomes of each bucket's last "
                             "batch; give buckets= too, or drop_last= for batches without buckets")
        self._patched = patch is not None
        if patch is not None or max_side is not None or tokens_per_batch is not None:
            if patch is None or max_side is None or tokens_per_batch is None:
                missing = [n for n, v in (("patch", patch), ("max_side", max_side),
                                          ("tokens_per_batch", tokens_per_batch)) if v is None]
                raise ValueError(f"a token budget takes patch, max_side and tokens_per_batch together: give "
                                 f"{' and '.join(missing)} too")
            self._config.update(patch=_opt.integer("patch", patch, 1), max_side=_opt.integer("max_side", max_side, 1),
                                tokens_per_batch=_opt.integer("tokens_per_batch", tokens_per_batch, 1))
        resize = _opt.optional_integer("resize", resize, 1) if resize else None
        common = dict(
            batch_size=batch_size, shuffle=shuffle, seed=seed,
            shuffle_buffer=shuffle_buffer, drop_last=drop_last, rank=rank, world_size=world_size,
            worker=worker, num_workers=num_workers, height=height, width=width,
            eval=transform == "eval", eval_resize=resize if resize else max(height, width) * 256 // 224,
            scale=_opt.pair("scale", scale, _opt.number), ratio=_opt.pair("ratio", ratio, _opt.number),
            flip=_opt.number("flip", flip), nchw=layout == "NCHW", threads=_opt.integer("threads", threads),
            prefetch=_opt.integer("prefetch", prefetch), skip_corrupt=_opt.boolean("skip_corrupt", skip_corrupt),
            fast_decode=_opt.boolean("fast_decode", fast_decode),
            remote=dict(cache_dir=None if cache_dir is None else str(cache_dir),
                        cache_limit=_opt.size("cache_limit", cache_limit),
                        prefetch_shards=_opt.integer("prefetch_shards", prefetch_shards),
                        downloads=_opt.integer("downloads", downloads, 1)))
        device = str(device)
        self._cuda = device.startswith("cuda")
        if isinstance(fields, str):
            raise TypeError(f"fields takes a sequence of names, e.g. ({fields!r},), not a string")
        self._fields = tuple(str(f) for f in fields)
        self._mask = None if mask is None else str(mask)
        if (self._fields or self._mask) and self._cuda:
            raise ValueError("fields and masks are delivered by the CPU loader only for now: use device='cpu' and "
                             "move the tensors with .to('cuda', non_blocking=True) (pin_memory=True)")
        if self._cuda and (buckets is not None or self._patched):
            raise ValueError("buckets and token budgets are read by the CPU loader only for now (their batches "
                             "differ in shape): use "
                             "device='cpu' with pin_memory=True and move the tensors with .to('cuda', non_blocking=True)")
        if self._cuda and mixture is not None:
            raise ValueError("mixtures are read by the CPU loader only for now: use device='cpu' with pin_memory=True "
                             "and move the tensors with .to('cuda', non_blocking=True)")
        if self._cuda:
            if not _shardpack.has_cuda:
                raise RuntimeError("this shardpack was built without CUDA (no CUDA toolkit at build time)")
            if dtype not in ("uint8", "float32", "float16", "bfloat16"):
                raise ValueError(f"dtype must be uint8, float32, float16 or bfloat16, not {dtype!r}")
            index = int(device.split(":")[1]) if ":" in device else 0
            self._impl = _shardpack.CudaFeed(str(path), **common, device=index, depth=int(depth), dtype=dtype,
                                             mean=[float(v) for v in mean], std=[float(v) for v in std])
        elif device == "cpu":
            bucketing = {} if buckets is None else dict(buckets=self._config["buckets"],
                                                        bucket_tail=self._config["bucket_tail"])
            bucketing.update({k: self._config[k] for k in ("bucket_no_upscale", "bucket_min_side")
                              if k in self._config})
            if self._patched:
                bucketing.update({k: self._config[k] for k in ("patch", "max_side", "tokens_per_batch")})
            self._impl = _shardpack.Loader(str(path), **common, allocate=allocate, mixture=mixture,
                                           fields=list(self._fields),
                                           require_fields=bool(require_fields), mask=self._mask or "", **bucketing)
            for message in self._impl.warnings():
                warnings.warn(message, stacklevel=2)
        else:
            raise ValueError(f"device must be 'cpu' or 'cuda[:N]', not {device!r}")
        self._epoch = 0
        self._start_batch = 0   # where the next iteration starts (load_state_dict)
        self._samples_done = 0  # elastic resume: the epoch's samples an earlier run took
        self._done = 0          # batches handed out in the current epoch, counting from its start
        self._resume_pending = False  # a state was loaded and no iteration has started since
        # While a loaded state is pending: its share of the epoch done (epoch_samples_done, or with
        # groups epoch_batches_done), which the C++ loader learns only when the epoch starts.
        self._pending_epoch_done = None

    @property
    def sample_groups_origin(self):
        """With buckets or a token budget, where each sample's group came from: "read" (this process
        read the sample tables), "made" (read, and kept in cache_dir as the node's table), "mapped"
        (the node's table another process made); None without either (docs/buckets.md, "Cost")."""
        origin = "" if self._cuda else self._impl.sample_groups_origin()
        return origin or None

    def __len__(self):
        """Batches of the epoch set_epoch() named (with buckets over a mixture, each epoch's count)."""
        if self._cuda:
            return self._impl.batches_per_epoch()
        return self._impl.batches_in_epoch(self._epoch)

    def set_epoch(self, epoch):
        """Orders the next iteration as epoch `epoch`, from its start. Called with the epoch of a
        state just loaded, before iterating (a training loop's `for epoch in range(start, epochs):
        loader.set_epoch(epoch)` after resuming), it keeps the resumed position instead."""
        if self._resume_pending and int(epoch) == self._epoch:
            return
        self._resume_pending = False
        self._epoch = int(epoch)
        self._start_batch = 0
        self._samples_done = 0
        self._done = 0

    def __iter__(self):
        import torch

        for lease in self.batches():
            # CUDA: DLPack, on torch's current stream, which waits for the batch's copy.
            images = torch.from_dlpack(lease) if self._cuda else torch.from_numpy(lease.images())
            if self._channels_last and not self._patched:  # (N, H, W, 3) seen as (N, 3, H, W): no copy
                images = images.permute(0, 3, 1, 2)
            parts = self._batch_parts(lease)
            yield (images,) + tuple(v if name == "fields" else torch.from_numpy(v) for name, v in parts.items())

    def _batch_parts(self, lease):
        """What a batch carries after its images, in the order iteration yields it: "label"; under a
        token budget "sizes" and "offsets" ((tokens, patch, patch, 3) images: each image's size and
        first patch); "source" (a mixture); "mask"; "fields" (decoded), whatever made the batch (size,
        buckets or a budget). numpy arrays over the lease; shardpack.grain's batches use it too."""
        parts = {"label": lease.labels()}
        if self._patched:
            parts.update(sizes=lease.sizes(), offsets=lease.token_offsets())
        if self._mixture is not None:
            parts["source"] = lease.sources()
        if self._mask:
            parts["mask"] = lease.masks()
        if self._fields:
            parts["fields"] = decode_fields(self._fields, lease.fields())
        return parts

    def batches(self):
        """Like iterating, but yields the batch objects themselves: on the CPU, images(), labels(),
        keys() and indices() as numpy arrays (images() without a copy); with device="cuda", a
        DLPack-capable batch and its labels() and indices()."""
        epoch, first, samples_done = self._epoch, self._start_batch, self._samples_done
        self._start_batch = 0
        self._resume_pending = False
        if self._cuda:
            self._impl.start_epoch(epoch, first)
        else:
            self._impl.start_epoch(epoch, first, samples_done)
        self._done = first
        while True:
            lease = self._impl.acquire()
            for line in self._impl.take_skip_reports():
                warnings.warn(f"{self._config['path'] or 'the mixture'}: {line}", stacklevel=3)
            if lease is None:
                return
            # (A batch whose every sample was skipped is not handed out: count from the batch's index.)
            self._done = lease.index + 1 if hasattr(lease, "index") else self._done + 1
            yield lease

    def state_dict(self):
        """Where this loader is: resuming from it gives exactly the batches an uninterrupted run
        would have produced from here on. `epoch_samples_done` (the samples of the epoch that every
        rank's batches so far took) lets a run with other ranks or another batch size continue."""
        state = dict(self._config, epoch=self._epoch, batch=self._done, samples_done=self._samples_done,
                     order=_shardpack.ORDER_VERSION)
        if not self._cuda:
            state["dataset"] = self._impl.dataset_fingerprint()
            state["generation"] = self._impl.dataset_generation()
        if self._mixture is not None:
            state["mixture"] = self._mixture
        if not self._cuda:
            # Until the epoch starts, a loaded state's own figure: the C++ loader does not know it yet.
            pending = self._pending_epoch_done if self._resume_pending else None
            state[self._epoch_done_key()] = self._impl.samples_consumed(self._done) if pending is None else pending
        return state

    def load_state_dict(self, state):
        """Resume from state_dict(). With the same options: exactly the batches an uninterrupted
        run gives. Elastic (another world_size, rank or batch_size; states taken at the same step on
        every rank, one worker per rank): the rest of the epoch is shared by the new ranks, and every
        sample of the epoch is seen exactly once over both runs. Keeping batch_size x world_size
        keeps the steps left too; changing it keeps exactly-once but changes the steps left."""
        _check_state(state)
        fixed = ("seed", "shuffle", "drop_last", "shuffle_buffer", "buckets", "bucket_tail", "patch", "max_side",
                 "tokens_per_batch", "bucket_no_upscale", "bucket_min_side")
        for key in fixed:
            if state.get(key) != self._config.get(key):
                raise ValueError(f"state_dict has {key}={state.get(key)!r} but this loader has "
                                 f"{self._config.get(key)!r}: resume with the same {', '.join(fixed)}")
        self._check_mixture(state)
        self._check_order(state)
        if "dataset" in state and not self._cuda and state["dataset"] != self._impl.dataset_fingerprint():
            generation = self._impl.dataset_generation()
            if state.get("generation", 0) < generation:
                raise ValueError(f"state_dict is from {self._config['path']!r} before `shardpack append` added to it "
                                 f"(generation {state.get('generation', 0)}, now {generation}): a state resumes "
                                 "the samples it was taken over; start an epoch on the grown dataset (load_state_dict "
                                 "is for the dataset as it was)")
            raise ValueError(f"state_dict is from another dataset ({state.get('path') or 'a mixture'!r}, whose shards' "
                             f"checksums differ from those of {self._config['path'] or 'this mixture'!r}): resume "
                             "on the dataset the state was taken from")
        same = all(state.get(k) == self._config[k] for k in ("batch_size", "world_size", "rank", "num_workers",
                                                                 "worker"))
        self._epoch = int(state["epoch"])
        self._resume_pending = True
        done_key = self._epoch_done_key()
        self._pending_epoch_done = int(state[done_key]) if done_key in state else None
        if same:
            self._start_batch = int(state["batch"])
            self._samples_done = int(state.get("samples_done", 0))
            self._done = self._start_batch
            return
        if self._grouped():
            if state["batch_size"] != self._config["batch_size"] and not self._patched:
                raise ValueError(f"state_dict has batch_size={state['batch_size']!r} but this loader has "
                                 f"{self._config['batch_size']!r}: with buckets the batches themselves depend on the "
                                 "batch size, so resume on other ranks with the same batch_size")
            if state.get("num_workers", 1) != 1 or self._config["num_workers"] != 1:
                raise ValueError("resuming on other ranks needs one worker per rank (num_workers=1) in both runs")
            self._start_batch = 0
            self._samples_done = int(state.get("epoch_batches_done", 0))
            self._done = 0
            return
        if self._cuda or "epoch_samples_done" not in state:
            raise ValueError("resuming on other ranks or another batch size needs a state_dict of the CPU loader "
                             "(with epoch_samples_done)")
        if state.get("num_workers", 1) != 1 or self._config["num_workers"] != 1:
            raise ValueError("resuming on other ranks or another batch size needs one worker per rank "
                             "(num_workers=1) in both runs")
        self._start_batch = 0
        self._samples_done = int(state["epoch_samples_done"])
        self._done = 0

    def _epoch_done_key(self):
        """The state's share of the epoch done: with buckets or a budget the epoch is shared out by
        global batches, not by samples of the order."""
        return "epoch_batches_done" if self._grouped() else "epoch_samples_done"

    def _grouped(self):
        """Batches grouped by bucket or packed to a token budget: an epoch shared out by global batches."""
        return "buckets" in self._config or self._patched

    def _check_order(self, state):
        """A state taken mid-epoch under another order of the epoch (sampler.h's kOrderVersion; a state
        without "order" is of version 1) would resume into other samples: refused. The global shuffle
        and a mixture's per-source batches changed in version 2; the others did not."""
        version = state.get("order", 1)
        if version == _shardpack.ORDER_VERSION:
            return
        changed = state.get("shuffle") and (state.get("shuffle_buffer") == 0 or
                                            (state.get("mixture") or {}).get("per_source_batches", False))
        started = any(int(state.get(key, 0)) != 0 for key in ("batch", "samples_done", "epoch_samples_done"))
        if changed and started:
            raise ValueError(f"state_dict is from batch {state['batch']} of epoch {state['epoch']} under the epoch "
                             f"order of version {version!r} (shardpack before 2026-12), and this shardpack orders "
                             f"an epoch by version {_shardpack.ORDER_VERSION} (the global shuffle as a keyed "
                             "permutation computed per position, so that a dataset of any size needs no array of "
                             "its samples): the same batch now holds other samples. Resume from a state taken at "
                             "an epoch's start, or start this epoch again with set_epoch("
                             f"{state['epoch']})")

    def _check_mixture(self, state):
        """A state from other sources is refused; other weights, samples or passes only at an epoch's
        start, where they take effect (docs/mixing.md)."""
        theirs, ours = state.get("mixture"), self._mixture
        if (theirs is None) != (ours is None):
            raise ValueError("state_dict is from a loader " + ("over one dataset" if theirs is None else "over a mixture") +
                             ": resume with the same kind of loader")
        if ours is None:
            return
        locations = [s["location"] for s in theirs["sources"]]
        if locations != [s["location"] for s in ours["sources"]]:
            raise ValueError(f"state_dict is from other sources {locations}: resume with the same sources, "
                             "in the same order")
        if theirs != ours and (int(state["batch"]) != 0 or int(state.get("samples_done", 0)) != 0):
            raise ValueError(f"state_dict is from batch {state['batch']} of epoch {state['epoch']} with other weights "
                             "(or samples, passes, epoch_size, per_source_batches, shared_classes): keep them until "
                             "the epoch ends, and change them from a state taken at an epoch's start")

    def stats(self):
        """What the loader measured this epoch: images/s, bytes/s, per-stage seconds, and how long
        the consumer waited for batches (consumer_wait_share near 0: the loader keeps up)."""
        return self._impl.stats()

    @property
    def bucket_sizes(self):
        """With buckets: each bucket as (width, height), in the loader's order (batch.bucket indexes it;
        a preset or rule given as a string comes back as its list); else []."""
        return [] if self._cuda else list(self._impl.bucket_sizes())

    @property
    def bucket_left_out(self):
        """With bucket_no_upscale or bucket_min_side: how many samples are in no bucket and left out
        of every epoch (a warning at open says so too); else 0."""
        return 0 if self._cuda else self._impl.bucket_left_out()

    def buffer_addresses(self):
        """Addresses of the C++ batch buffers (to check that tensors share them); CPU only."""
        return list(self._impl.buffers())

