"""rank and world size as torch.distributed has them, when it is initialised."""


def default_rank_world(rank, world_size):
    from . import _options

    rank, world_size = _options.optional_integer("rank", rank), _options.optional_integer("world_size", world_size, 1)
    if rank is not None and world_size is not None:
        return int(rank), int(world_size)
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return (dist.get_rank() if rank is None else int(rank),
                    dist.get_world_size() if world_size is None else int(world_size))
    except ImportError:
        pass
    return (0 if rank is None else int(rank)), (1 if world_size is None else int(world_size))
