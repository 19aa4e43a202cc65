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
    pipelines built around DataLoader."""

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

    def set_epoch(self, epoch):
        self.epoch = int(epoch)

    def __iter__(self):
        from .loader import Loader

        info = torch.utils.data.get_worker_info()
        worker, num_workers = (info.id, info.num_workers) if info is not None else (0, 1)
        rank, world_size = default_rank_world(self.rank, self.world_size)
        loader = Loader(self.path, batch_size=self.chunk, shuffle=self.shuffle, seed=self.seed,
                        transform=self.transform, size=self.size, threads=self.threads, rank=rank,
                        world_size=world_size, worker=worker, num_workers=num_workers, **self.loader_options)
        loader.set_epoch(self.epoch)
        for lease in loader.batches():
            images, labels, keys = lease.images(), lease.labels(), lease.keys()
            for j in range(lease.count):
                # One copy either way: out of the batch buffer, which the next batch reuses.
                image = torch.from_numpy(images[j].transpose(2, 0, 1).copy() if self.layout == "CHW" else
                                         images[j].copy())
                if self.return_keys:
                    yield image, int(labels[j]), keys[j]
                else:
                    yield image, int(labels[j])
            lease.release()
