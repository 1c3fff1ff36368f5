"""Where the trainer runs: device, CPU threads, and the process group under ``torchrun``.

``torchrun --nproc_per_node N`` sets RANK/WORLD_SIZE/LOCAL_RANK; then every rank joins a process
group (gloo on CPU, nccl on CUDA) and takes ``cuda:<LOCAL_RANK>`` when it runs on GPUs.
"""
from __future__ import annotations

import gc
import os
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist

from . import allocator
from .errors import TrainerError

if TYPE_CHECKING:
    from .config_types import TrainerConfig


class Runtime:
    """Rank, world size and device of this process."""

    def __init__(self, device: torch.device, rank: int = 0, world: int = 1, local_rank: int = 0,
                 allocator: str = "default") -> None:
        self.device = device
        self.allocator = allocator
        self.rank = rank
        self.world = world
        self.local_rank = local_rank

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world > 1

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()

    def all_reduce_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.distributed:
            dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return tensor

    def describe(self) -> dict[str, Any]:
        return {"device": str(self.device), "world_size": self.world, "rank": self.rank,
                "torch": torch.__version__, "threads": torch.get_num_threads(), "allocator": self.allocator}


def choose_device(preference: str, local_rank: int = 0) -> torch.device:
    cuda = torch.cuda.is_available()
    if preference == "auto":
        return torch.device(f"cuda:{local_rank}") if cuda else torch.device("cpu")
    if preference == "cpu":
        return torch.device("cpu")
    if not cuda:
        raise TrainerError("DEVICE_UNAVAILABLE", f"device {preference!r} was asked for but CUDA is not available "
                           "here; use device auto or cpu.")
    if preference == "cuda":
        return torch.device(f"cuda:{local_rank}")
    index = int(preference.split(":")[1])
    if index >= torch.cuda.device_count():
        raise TrainerError("DEVICE_UNAVAILABLE", f"{preference} does not exist ({torch.cuda.device_count()} GPUs).")
    return torch.device(preference)


def start(cfg: TrainerConfig) -> Runtime:
    """Sets the allocator and threads, joins the process group under torchrun, and picks the device."""
    tuned = allocator.tune()
    if cfg.threads:
        torch.set_num_threads(int(cfg.threads))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = choose_device(cfg.device, local_rank)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if world > 1 and not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    return Runtime(device, rank, world, local_rank, allocator=tuned)


def stop(ok: bool = True) -> None:
    """Leaves the process group (torchrun can hang at exit when it is left open).

    Objects that hold the group (DDP's reducer) are collected first: left to the interpreter's
    exit, gloo's threads are torn down after the group and the process aborts ("terminate called
    without an active exception"), seen on loaded machines. After a clean run the ranks meet at a
    barrier so that none tears down while a peer still talks to it; after a failure they do not
    (a peer that never arrives would hold the others until the group's timeout)."""
    if dist.is_available() and dist.is_initialized():
        gc.collect()
        if ok:
            dist.barrier()
        dist.destroy_process_group()
