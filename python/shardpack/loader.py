"""shardpack.Loader: the drop-in replacement for a DataLoader over a packed dataset."""

import warnings

import numpy as np

from . import _shardpack
from ._distributed import default_rank_world

_TRANSFORMS = ("train", "eval")


class Loader:
    """Batches of decoded, cropped images as torch tensors, from a packed dataset.

    path: a dataset folder (any format), or WebDataset shards such as "train-{000000..000127}.tar".
    transform: "train" (random-resized-crop to `size` with `scale` and `ratio`, then a horizontal
        flip with probability `flip`) or "eval" (resize the shorter side to `resize`, default
        size * 256 / 224, then centre-crop `size`). Raw shards already of the output size are
        passed through untouched in "eval".
    layout: "NHWC" (default) or "NCHW"; images are uint8.
    rank, world_size: default to torch.distributed's when it is initialised, else 0 and 1. Every
        rank gets the same number of batches; together the ranks see every sample once an epoch.
    shuffle_buffer: 0 for a global shuffle; N for a streaming shuffle (shards in random order
        through a buffer of N samples) when random reads are slow.
    pin_memory: batch buffers in page-locked memory (torch's pinned allocator), ready for
        .to("cuda", non_blocking=True). Without CUDA it warns and uses ordinary memory.

    Iterating yields (images, labels): images share memory with the C++ batch buffer (no copy);
    labels are int64. A buffer is reused only once nothing refers to its tensor any more, so
    keeping a batch is safe (keeping more than `prefetch` + 1 of them raises an error instead of
    waiting forever: copy what you keep). Call set_epoch(e) before each epoch for a fresh order,
    as with DistributedSampler.
    """

    def __init__(self, path, batch_size=32, shuffle=True, seed=0, transform="train", size=224, resize=None,
                 threads=0, rank=None, world_size=None, drop_last=False, pin_memory=False, layout="NHWC",
                 prefetch=2, skip_corrupt=True, shuffle_buffer=0, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3),
                 flip=0.5, fast_decode=True, worker=0, num_workers=1):
        if transform not in _TRANSFORMS:
            raise ValueError(f"transform must be one of {_TRANSFORMS}, not {transform!r}")
        if layout not in ("NHWC", "NCHW"):
            raise ValueError(f"layout must be 'NHWC' or 'NCHW', not {layout!r}")
        height, width = (size, size) if isinstance(size, int) else (int(size[0]), int(size[1]))
        rank, world_size = default_rank_world(rank, world_size)
        allocate = None
        if pin_memory:
            import torch

            if torch.cuda.is_available():
                def allocate(nbytes):
                    return torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
            else:
                warnings.warn("pin_memory=True but CUDA is not available: batches use ordinary memory",
                              stacklevel=2)
        self._config = dict(path=str(path), batch_size=int(batch_size), shuffle=bool(shuffle), seed=int(seed),
                            world_size=world_size, rank=rank, drop_last=bool(drop_last),
                            shuffle_buffer=int(shuffle_buffer), worker=int(worker), num_workers=int(num_workers))
        self._impl = _shardpack.Loader(
            str(path), batch_size=int(batch_size), shuffle=bool(shuffle), seed=int(seed),
            shuffle_buffer=int(shuffle_buffer), drop_last=bool(drop_last), rank=rank, world_size=world_size,
            worker=int(worker), num_workers=int(num_workers), height=height, width=width,
            eval=transform == "eval", eval_resize=int(resize) if resize else max(height, width) * 256 // 224,
            scale=tuple(scale), ratio=tuple(ratio), flip=float(flip), nchw=layout == "NCHW", threads=int(threads),
            prefetch=int(prefetch), skip_corrupt=bool(skip_corrupt), fast_decode=bool(fast_decode),
            allocate=allocate)
        self._epoch = 0
        self._start_batch = 0   # where the next iteration starts (load_state_dict)
        self._done = 0          # batches handed out in the current epoch, counting from its start

    def __len__(self):
        return self._impl.batches_per_epoch()

    def set_epoch(self, epoch):
        self._epoch = int(epoch)
        self._start_batch = 0
        self._done = 0

    def __iter__(self):
        import torch

        epoch, first = self._epoch, self._start_batch
        self._start_batch = 0
        self._impl.start_epoch(epoch, first)
        self._done = first
        while True:
            lease = self._impl.acquire()
            if lease is None:
                return
            images = torch.from_numpy(lease.images())
            labels = torch.from_numpy(lease.labels())
            self._done += 1
            yield images, labels

    def batches(self):
        """Like iterating, but yields the batch leases themselves (images(), labels(), keys(),
        indices()) for code that wants numpy arrays or the sample keys."""
        epoch, first = self._epoch, self._start_batch
        self._start_batch = 0
        self._impl.start_epoch(epoch, first)
        self._done = first
        while True:
            lease = self._impl.acquire()
            if lease is None:
                return
            self._done += 1
            yield lease

    def state_dict(self):
        """Where this loader is: resuming from it gives exactly the batches an uninterrupted run
        would have produced from here on."""
        return dict(self._config, epoch=self._epoch, batch=self._done)

    def load_state_dict(self, state):
        for key in ("batch_size", "seed", "shuffle", "world_size", "rank", "drop_last", "shuffle_buffer",
                    "num_workers", "worker"):
            if state.get(key) != self._config[key]:
                raise ValueError(f"state_dict has {key}={state.get(key)!r} but this loader has "
                                 f"{self._config[key]!r}: resume with the same options")
        self._epoch = int(state["epoch"])
        self._start_batch = int(state["batch"])
        self._done = self._start_batch

    def stats(self):
        """What the loader measured this epoch: images/s, bytes/s, per-stage seconds, and how long
        the consumer waited for batches (consumer_wait_share near 0: the loader keeps up)."""
        return self._impl.stats()

    def buffer_addresses(self):
        """Addresses of the C++ batch buffers (to check that tensors share them)."""
        return list(self._impl.buffers())


def _as_numpy(array):
    return np.asarray(array)
