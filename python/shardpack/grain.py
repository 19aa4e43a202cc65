"""shardpack.grain: shardpack datasets for JAX, two ways (docs/jax.md).

    import grain, shardpack.grain

    # 1. Grain's own pipeline over a shardpack dataset: Grain samples, decodes (your map) and batches.
    source = shardpack.grain.DataSource("/data/imagenet-wds")      # source[i] -> {"__key__", "jpg", "cls"}
    ds = grain.MapDataset.source(source).shuffle(seed=0).map(decode).batch(256)

    # 2. shardpack's native loader: C++ decode, crop and batching, batches as jax.Array without a copy.
    loader = shardpack.grain.Loader("/data/imagenet-wds", batch_size=256, size=224)
    it = iter(loader)                    # a grain.DatasetIterator: get_state() / set_state(), Orbax
    batch = next(it)                     # {"image": (256, 224, 224, 3) uint8, "label": (256,) int32}

Importing this module needs Grain (`pip install grain`); the rest of shardpack never imports it,
and jax is imported only when a batch is made as a jax.Array.
"""

import numbers
import threading

try:
    import grain as _grain
except ImportError as error:  # the message says what to install, in pip's words
    raise ImportError("shardpack.grain needs Grain: pip install grain (and jax, for batches as jax.Array)") from error

from . import _options as _opt
from . import _paths
from .dataset import Dataset
from .loader import Loader as _ShardpackLoader

__all__ = ["DataSource", "Loader", "LoaderIterator"]

# What get_state() writes; set_state() refuses a state of another version instead of misreading it.
_STATE_VERSION = 1


class DataSource:
    """A Grain random-access data source over any shardpack dataset (every format, views, shard
    lists, URLs): source[i] is sample i as shardpack.open(path)[i] gives it, a dict with "__key__",
    "cls", the image bytes under their extension ("jpg", ...; raw datasets: pixels under "npy") and
    the sample's fields. Thread-safe (reads run in C++ without the GIL), deterministic, picklable:
    the open dataset is not pickled but opened again, once, in the process that unpickles it (a
    Grain worker). Its repr names the dataset and its size, which is what Grain's DataLoader
    compares when it restores a checkpoint."""

    def __init__(self, path):
        self._location = _paths.location(path)
        self._lock = threading.Lock()
        self._dataset = Dataset(self._location)
        self._length = len(self._dataset)

    def __len__(self):
        return self._length

    def __getitem__(self, record_key):
        return self._open()[record_key]

    def __repr__(self):
        return f"shardpack.grain.DataSource({self._location!r}, samples={self._length})"

    def __getstate__(self):
        # Only where the dataset is: file handles and mappings do not cross processes.
        return {"location": self._location, "length": self._length}

    def __setstate__(self, state):
        self._location, self._length = state["location"], state["length"]
        self._lock = threading.Lock()
        self._dataset = None

    def _open(self):
        dataset = self._dataset
        if dataset is None:
            with self._lock:  # Grain reads on several threads: the first opens, the others wait for it
                if self._dataset is None:
                    opened = Dataset(self._location)
                    if len(opened) != self._length:
                        raise RuntimeError(f"{self._location} has {len(opened)} samples here but had "
                                           f"{self._length} where this source was made: the dataset changed")
                    self._dataset = opened
                dataset = self._dataset
        return dataset


class Loader:
    """shardpack's native loader for JAX: batches decoded, cropped and assembled in C++ (its
    threads, crops, buckets, mixtures, fields; every option of shardpack.Loader, docs/python.md),
    delivered as dicts {"image", "label"[, "source", "mask", field names]} ("sizes" and "offsets"
    too under a token budget, as shardpack.Loader yields them).

    path or sources=: as shardpack.Loader. batch_size: images per batch on this process.
    output: "jax" (default): "image" is a jax.Array on the host's CPU device over the loader's own
        buffer, made through DLPack without a copy (the buffer is reused once the array is freed);
        move it with jax.device_put or jax.make_array_from_process_local_data as usual. "numpy":
        numpy arrays over the same buffer.
    layout: "NHWC" (default, as JAX convolutions take images) or "NCHW" (transposed in C++).
    process_index, process_count: which share of every epoch this process reads; default
        jax.process_index() and jax.process_count() (imported only then). The shares are
        shardpack's ranks: equal batch counts, every sample once an epoch over all processes, and a
        state resumes on another process count (elastic, as shardpack.Loader's load_state_dict).
    num_epochs: epochs to iterate, None (default) for ever, as grain's IndexSampler; each epoch in a
        new order (shuffle, seed).
    keys: also give each batch's sample keys, a list of str under "__key__" (as webdataset names them).
    Labels are int32 (JAX's default integer), -1 for an unlabelled sample."""

    def __init__(self, path=None, *, batch_size, output="jax", layout="NHWC", process_index=None, process_count=None,
                 num_epochs=None, keys=False, **loader_options):
        if output not in ("jax", "numpy"):
            raise ValueError(f"output={output!r}: output takes 'jax' (jax.Array batches) or 'numpy'")
        if layout not in ("NHWC", "NCHW"):
            raise ValueError(f"layout={layout!r}: layout takes 'NHWC' (as JAX convolutions take images) or 'NCHW'")
        for torch_option in ("rank", "world_size", "pin_memory", "device"):
            if torch_option in loader_options:
                instead = {"rank": "process_index=", "world_size": "process_count=",
                           "pin_memory": "jax.device_put", "device": "jax.device_put"}[torch_option]
                raise ValueError(f"{torch_option}= is shardpack.Loader's (PyTorch's) option: here use {instead}")
        if num_epochs is not None:
            num_epochs = _opt.integer("num_epochs", num_epochs, 1)
        if process_index is None or process_count is None:
            import jax

            process_index = jax.process_index() if process_index is None else process_index
            process_count = jax.process_count() if process_count is None else process_count
        for name, value in (("process_index", process_index), ("process_count", process_count)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"{name} takes an int, not {value!r}")
        if not 0 <= process_index < process_count:
            raise ValueError(f"process_index={process_index} must lie in 0..process_count-1 "
                             f"(process_count={process_count})")
        self._arguments = dict(path=path, batch_size=batch_size, layout=layout, rank=int(process_index),
                               world_size=int(process_count), **loader_options)
        self.output, self.num_epochs, self.keys = output, num_epochs, _opt.boolean("keys", keys)
        # One loader opened now: options are checked here, not at the first batch; the first iterator
        # takes it, and len() asks it.
        self._opened = self._open()
        self._taken = False

    def __len__(self):
        """Batches per epoch on this process (of the epoch under way, where that varies: buckets over a
        mixture)."""
        return len(self._opened)

    def __iter__(self):
        """A new iterator from the first epoch's start (set_state() moves it)."""
        loader = self._open() if self._taken else self._opened
        self._taken = True
        return LoaderIterator(loader, self.output, self.num_epochs, self.keys)

    def _open(self):
        return _ShardpackLoader(**self._arguments)


class LoaderIterator(_grain.DatasetIterator):
    """Loader's iterator: a grain.DatasetIterator, so Grain's Orbax handler saves and restores it
    (grain.checkpoint.CheckpointSave / CheckpointRestore), and get_state() is a JSON-ready dict:
    resuming from it yields exactly the batches an uninterrupted run yields from there."""

    def __init__(self, loader, output="jax", num_epochs=None, keys=False):
        super().__init__()
        self._loader, self._output, self._num_epochs, self._keys = loader, output, num_epochs, keys
        self._epoch = 0
        self._batches = None  # the current epoch's batch generator; None between epochs
        self._jnp = None

    def __next__(self):
        while True:
            if self._batches is None:
                if self._num_epochs is not None and self._epoch >= self._num_epochs:
                    raise StopIteration
                self._loader.set_epoch(self._epoch)  # (keeps a position set_state() loaded)
                self._batches = self._loader.batches()
            lease = next(self._batches, None)
            if lease is not None:
                return self._batch(lease)
            self._batches = None
            self._epoch += 1

    def get_state(self):
        """{"version", "loader": shardpack.Loader.state_dict()}: JSON types only."""
        # (After an epoch's last batch this is that epoch at its end, from which the next one starts.)
        return {"version": _STATE_VERSION, "loader": self._loader.state_dict()}

    def set_state(self, state):
        """Continues from get_state()'s state (this process's or, elastic, another process count's)."""
        if not isinstance(state, dict) or state.get("version") != _STATE_VERSION or "loader" not in state:
            raise ValueError(f"set_state takes what get_state() returned ({{'version': {_STATE_VERSION}, 'loader': "
                             f"...}}), not {str(state)[:200]}")
        self._loader.load_state_dict(state["loader"])
        self._epoch = int(state["loader"]["epoch"])
        self._batches = None

    def _batch(self, lease):
        parts = self._loader._batch_parts(lease)
        fields = parts.pop("fields", {})
        # Integers as int32, JAX's default (labels, sources, sizes, offsets); masks stay uint8.
        batch = {"image": lease.images(), **{name: v.astype("int32") if v.dtype.kind == "i" else v
                                             for name, v in parts.items()}}
        if self._output == "jax":
            if self._jnp is None:
                import jax.numpy as jnp

                self._jnp = jnp
            # DLPack: the jax.Array is the loader's buffer (64-byte aligned, as XLA requires to take
            # it without a copy) and keeps the batch's lease until it is freed.
            batch = {name: self._jnp.from_dlpack(value) for name, value in batch.items()}
        batch.update(fields)
        if self._keys:
            batch["__key__"] = list(lease.keys())
        return batch

    def buffer_addresses(self):
        """Addresses of the loader's batch buffers: a batch's "image" starts at one of them."""
        return self._loader.buffer_addresses()

    def __repr__(self):
        return f"shardpack.grain.LoaderIterator(epoch={self._epoch}, {self._loader._config['path']!r})"
