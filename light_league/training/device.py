"""Where learners update: ``learner.device`` resolved, checked, and tensors brought back to the CPU.

Learners update on their device (``cpu``, ``cuda``, ``cuda:N``); everything that leaves a learner
is on the CPU: the weights it publishes (numpy, once per version, which rollout workers load and
act with on the CPU), its ``state_dict`` (saved in checkpoints and, on Ray, sent to the driver).
Checkpoints are read with ``map_location="cpu"`` and moved to the learner's device when loaded,
so a run written on a GPU machine resumes on a CPU-only one and the reverse.

``auto`` is resolved once, by the driver: ``cuda`` when there is a CUDA device to use (local
backend: this machine; Ray: any node of the cluster), else ``cpu``. Learners that do not use
torch (``exact_br``) or whose constructor takes no ``device`` (see
:func:`light_league.algorithms.registry.takes_device`) always run on the CPU.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from light_league.errors import ConfigError

if TYPE_CHECKING:
    from light_league.config import ExperimentConfig

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


def learner_gpus(num_gpus: float | None, num_learners: int) -> float:
    """GPUs each learner on a GPU asks Ray for: ``learner.num_gpus``, or one GPU shared by all."""
    if num_gpus is not None:
        return float(num_gpus)
    return 1.0 / max(num_learners, 1)


def learner_placement(config: ExperimentConfig, gpus: float, *, num_learners: int) -> tuple[str, float]:
    """``(device, gpus)`` of every learner of a run: the resolved ``learner.device`` and, on Ray,
    the GPUs each asks for (0 on the CPU or with the local backend). ``gpus``: the GPUs the
    run's executor has (``Executor.gpus()``: this machine's CUDA devices, or the Ray cluster's)."""
    kind = config.learner.kind
    if kind == "exact_br":
        supports = False
    else:
        from light_league.algorithms.registry import learner_class, takes_device

        supports = takes_device(learner_class(kind))
    requested = config.learner.device
    on_ray = config.execution.backend == "ray"
    if on_ray and supports and requested.startswith("cuda:"):
        raise ConfigError(
            f"learner.device={requested}: on Ray a learner sees only the GPU Ray gives it; "
            "set learner.device=cuda (or auto) and learner.num_gpus for its share"
        )
    where = "the Ray cluster" if on_ray else "this machine"
    device = resolve_device(requested, supports_device=supports, gpus=gpus, where=where)
    on_gpu = device.startswith("cuda")
    return device, learner_gpus(config.learner.num_gpus, num_learners) if on_ray and on_gpu else 0.0
