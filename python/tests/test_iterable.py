"""shardpack.IterableDataset in a torch DataLoader with workers."""

import torch
import torch.utils.data

import shardpack


def test_dataloader_with_two_workers_covers_the_epoch_once(wds):
    ds = shardpack.IterableDataset(wds, size=16, seed=2, chunk=5, return_keys=True)
    loader = torch.utils.data.DataLoader(ds, batch_size=6, num_workers=2)
    keys, count = [], 0
    for images, labels, batch_keys in loader:
        assert images.dtype == torch.uint8 and images.shape[1:] == (3, 16, 16)
        keys.extend(batch_keys)
        count += images.shape[0]
    assert count == 60
    assert sorted(keys) == sorted(shardpack.open(wds)[i]["__key__"] for i in range(60))


def test_without_workers_it_is_the_whole_epoch(lmdb_dataset):
    ds = shardpack.IterableDataset(lmdb_dataset, size=16, chunk=8)
    labels = [label for _, label in ds]
    assert len(labels) == 60
