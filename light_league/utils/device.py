"""Device names and tensors: ``learner.device`` checked and resolved, tensors brought back to the CPU.

Learners update on their device (``cpu``, ``cuda``, ``cuda:N``); everything that leaves a learner
is on the CPU: the weights it publishes (numpy, once per version, which rollout workers load and
act with on the CPU), its ``state_dict`` (saved in checkpoints and, on Ray, sent to the driver).
Checkpoints are read with ``map_location="cpu"`` and moved to the learner's device when loaded,
so a run written on a GPU machine resumes on a CPU-only one and the reverse.

``auto`` is resolved once, by the driver: ``cuda`` when there is a CUDA device to use (local
backend: this machine; Ray: any node of the cluster), else ``cpu``. Learners that do not use
torch (``exact_br``) or whose constructor takes no ``device`` (see
:func:`light_league.algorithms.registry.takes_device`) always run on the CPU. Which device a run's
learners get is :func:`light_league.build.learner_placement`; this module is the
low-level part that learners, the config and the executors use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from light_league.errors import ConfigError

#: what ``learner.device`` accepts
DEVICE_PATTERN = re.compile(r"auto|cpu|cuda(:\d{1,3})?")
DEVICE_CHOICES = "auto, cpu, cuda or cuda:N"


def check_device_name(value: str) -> str:
    """``value`` if it is a valid ``learner.device``; else a one-line ValueError naming the fix."""
    if not DEVICE_PATTERN.fullmatch(value):
        raise ValueError(f"must be {DEVICE_CHOICES} (e.g. learner.device=cuda:0 or learner.device=cpu)")
    return value


def cuda_device_count() -> int:
    """CUDA devices torch can use on this machine (0 without CUDA or without a CUDA build)."""
    import torch

    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


def resolve_device(requested: str, *, supports_device: bool, gpus: float, where: str) -> str:
    """The device learners use for ``learner.device=requested``.

    ``gpus``: CUDA devices there are to use (this machine's count, or the Ray cluster's GPUs);
    ``where``: what they were counted on, for the error message.
    """
    check_device_name(requested)
    if not supports_device:
        if requested in ("auto", "cpu"):
            return "cpu"
        raise ConfigError(
            f"learner.device={requested}: this learner kind trains on the CPU only; set learner.device=cpu (or auto)"
        )
    if requested == "auto":
        return "cuda" if gpus > 0 else "cpu"
    if requested.startswith("cuda") and gpus <= 0:
        raise ConfigError(
            f"learner.device={requested} but {where} has no CUDA GPU; set learner.device=cpu (or auto)"
        )
    return requested


def check_device_here(device: str) -> None:
    """In the learner's process: ``device`` exists here (a one-line ConfigError otherwise)."""
    if not device.startswith("cuda"):
        return
    count = cuda_device_count()
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    if index >= count:
        have = f"{count} CUDA device(s)" if count else "no CUDA device (torch.cuda.is_available() is False)"
        raise ConfigError(
            f"learner.device={device} but this learner's machine has {have}; "
            f"set learner.device=cpu, auto or cuda:0..cuda:{max(count - 1, 0)}"
        )


def to_cpu(obj: Any) -> Any:
    """``obj`` with every tensor in it (in dicts, lists, tuples) on the CPU; other values as is."""
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.detach().cpu() if obj.device.type != "cpu" else obj
    if isinstance(obj, Mapping):
        return {k: to_cpu(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [to_cpu(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(to_cpu(v) for v in obj)
    return obj


def tensor_devices(obj: Any) -> set[str]:
    """The device types of every tensor in ``obj`` (``{"cpu"}`` for a CPU-only state)."""
    import torch

    if isinstance(obj, torch.Tensor):
        return {obj.device.type}
    if isinstance(obj, Mapping):
        return set().union(*(tensor_devices(v) for v in obj.values())) if obj else set()
    if isinstance(obj, (list, tuple)):
        return set().union(*(tensor_devices(v) for v in obj)) if obj else set()
    return set()
