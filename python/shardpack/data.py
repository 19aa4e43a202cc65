"""shardpack.IterableDataset: a packed dataset inside an ordinary torch DataLoader with workers."""

import torch
import torch.utils.data

from . import _paths
from . import _shardpack
from ._distributed import default_rank_world


class IterableDataset(torch.utils.data.IterableDataset):
    """Yields (image, label) per sample, image a uint8 tensor of `size` of shape (3, H, W) as
    torchvision's ToTensor gives (layout="HWC": (H, W, 3)), for a DataLoader to batch. Each DataLoader worker reads its own share of the epoch (with the rank's share under
    torch.distributed): all workers together see every sample once. The reader is opened inside
    the worker, after the fork, so no file handle (LMDB's included) crosses processes.

    For throughput prefer shardpack.Loader, which batches in C++ without copies; this class is for
    pipelines built around DataLoader. torchdata's StatefulDataLoader checkpoints it (state_dict and
    load_state_dict, kept per worker): a resumed run yields exactly the samples of an uninterrupted
    one, and skips the ones before without reading them."""

    def __init__(self, path, size=224, transform="train", shuffle=True, seed=0, threads=1, chunk=32,
                 rank=None, world_size=None, return_keys=False, layout="CHW", **loader_options):
        super().__init__()
        if layout not in ("CHW", "HWC"):
            raise ValueError(f"layout={layout!r}: an IterableDataset yields one sample at a time: layout takes 'CHW' "
                             "(3, H, W, as torchvision's ToTensor gives) or 'HWC'")
        self.layout = layout
        self.path, self.size, self.transform = _paths.location(path), size, transform
        self.shuffle, self.seed, self.threads, self.chunk = shuffle, seed, threads, chunk
        self.rank, self.world_size, self.return_keys = rank, world_size, return_keys
        self.loader_options = loader_options
        self.epoch = 0
        # Where this worker's iteration of the epoch is: the loader's batch being yielded from, and how
        # many of its samples were; load_state_dict's position, where the next iteration starts.
        self._position = (0, 0)
        self._resume_at = (0, 0)

    def set_epoch(self, epoch):
        self.epoch = int(epoch)

    def __len__(self):
        """The samples an epoch yields on this rank, all workers together (DataLoader's len(), a
        progress bar's total)."""
        from .loader import Loader

        rank, world_size = default_rank_world(self.rank, self.world_size)
        # Counted once per rank (a loader opens the dataset): DataLoader and progress bars ask often.
        if getattr(self, "_length", (None, None))[0] != (rank, world_size):
            one_by_one = Loader(self.path, batch_size=1, shuffle=False, size=self.size, threads=1, rank=rank,
                                world_size=world_size, **self.loader_options)
            self._length = ((rank, world_size), len(one_by_one))
        return self._length[1]

    def state_dict(self):
        """Where this worker's iteration is: the epoch, the batch of the loader underneath it was
        reading, and how many of that batch's samples it yielded (torchdata's Stateful protocol;
        StatefulDataLoader asks each worker's copy)."""
        return {"epoch": self.epoch, "batch": self._position[0], "in_batch": self._position[1]}

    def load_state_dict(self, state):
        """Makes the next iteration continue the epoch of `state` where state_dict() was taken."""
        if not isinstance(state, dict) or any(k not in state for k in ("epoch", "batch", "in_batch")):
            raise ValueError(f"state={state!r}: load_state_dict takes what state_dict() returned "
                             "({'epoch': ..., 'batch': ..., 'in_batch': ...})")
        self.epoch = int(state["epoch"])
        self._resume_at = (int(state["batch"]), int(state["in_batch"]))

    def __iter__(self):
        from .loader import Loader

        info = torch.utils.data.get_worker_info()
        worker, num_workers = (info.id, info.num_workers) if info is not None else (0, 1)
        rank, world_size = default_rank_world(self.rank, self.world_size)
        loader = Loader(self.path, batch_size=self.chunk, shuffle=self.shuffle, seed=self.seed,
                        transform=self.transform, size=self.size, threads=self.threads, rank=rank,
                        world_size=world_size, worker=worker, num_workers=num_workers, **self.loader_options)
        loader.set_epoch(self.epoch)
        # Resumed: the loader starts at the batch it was reading (those before are not read again),
        # and that batch's samples already yielded are passed over.
        (first, skip), self._resume_at = self._resume_at, (0, 0)
        if first:
            state = loader.state_dict()
            state["batch"] = first
            loader.load_state_dict(state)
        self._position = (first, skip)
        for lease in loader.batches():
            images, labels, keys = lease.images(), lease.labels(), lease.keys()
            for j in range(lease.count):
                if lease.index == first and j < skip:
                    continue
                self._position = (lease.index, j + 1)
                # One copy either way: out of the batch buffer, which the next batch reuses.
                image = torch.from_numpy(images[j].transpose(2, 0, 1).copy() if self.layout == "CHW" else
                                         images[j].copy())
                if self.return_keys:
                    yield image, int(labels[j]), keys[j]
                else:
                    yield image, int(labels[j])
            lease.release()
