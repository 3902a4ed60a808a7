"""Policy files: ``<path>.pt`` holds tensors only, ``<path>.json`` the policy meta.

``save_policy`` writes the tensors first and the JSON last, each atomically (temp file, fsync,
rename), so a readable ``.json`` always has its ``.pt`` beside it. ``load_policy`` reads the
tensors with ``torch.load(..., weights_only=True)``: a file that holds anything but a flat
``{name: tensor}`` dict (a pickled object, a numpy array, a module) is refused with a one-line
:class:`~light_league.errors.CorruptFileError` naming the file. Rebuilding a policy object from
the files (the meta's ``kind`` picks its class) is
:func:`light_league.algorithms.mappo.serialization.load_policy`'s job, one layer up.
"""

from __future__ import annotations

import io
import os
import pickle
import re
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from light_league.errors import CorruptFileError
from light_league.utils.atomic import atomic_write_bytes, atomic_write_json, read_json

_SUFFIXES = (".pt", ".json")


def policy_paths(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """``(<path>.pt, <path>.json)``; a ``path`` already ending in ``.pt`` or ``.json`` loses that suffix."""
    base = Path(path)
    if base.suffix in _SUFFIXES:
        base = base.with_suffix("")
    return base.with_name(base.name + ".pt"), base.with_name(base.name + ".json")


def save_policy(
    path: str | os.PathLike[str], weights: Mapping[str, np.ndarray], meta: Mapping[str, Any]
) -> None:
    """Write ``weights`` (numpy arrays or tensors) and the JSON-able ``meta`` next to each other."""
    if "kind" not in meta:
        raise ValueError(
            f"policy meta needs a 'kind' entry, got keys {sorted(meta)}; use learner.policy_meta()"
        )
    pt_path, json_path = policy_paths(path)
    tensors = {str(k): torch.as_tensor(np.array(v, copy=True)) for k, v in weights.items()}
    buf = io.BytesIO()
    torch.save(tensors, buf)
    atomic_write_bytes(pt_path, buf.getvalue())
    atomic_write_json(json_path, dict(meta))


def load_weights(pt_path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """Read a tensors-only ``.pt`` file into numpy arrays; anything else is a ``CorruptFileError``."""
    p = Path(pt_path)
    fix = "re-save it with save_policy"
    if p.exists() and not zipfile.is_zipfile(p):
        raise CorruptFileError(f"policy weights {p} are corrupt (not a torch zip archive); {fix}")
    try:
        obj = torch.load(p, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CorruptFileError(f"policy weights {p} do not exist; save the policy first") from None
    except pickle.UnpicklingError as exc:
        found = re.search(r"GLOBAL ([\w.]+)", str(exc))
        what = f" such as {found.group(1)}" if found else ""
        raise CorruptFileError(
            f"policy weights {p} hold pickled objects{what}, not plain tensors; refusing to load; {fix}"
        ) from None
    except (RuntimeError, EOFError, OSError, ValueError) as exc:
        raise CorruptFileError(f"policy weights {p} are corrupt ({exc.__class__.__name__}); {fix}") from None
    if not isinstance(obj, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in obj.items()
    ):
        raise CorruptFileError(
            f"policy weights {p} must hold a dict of name -> tensor, got {type(obj).__name__}; {fix}"
        )
    return {k: v.numpy() for k, v in obj.items()}


def load_policy_files(path: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``(weights, meta)`` of a saved policy, both checked."""
    pt_path, json_path = policy_paths(path)
    meta = read_json(json_path, what="policy meta", fix="save the policy with save_policy")
    if not isinstance(meta, dict) or "kind" not in meta:
        raise CorruptFileError(f"policy meta {json_path} has no 'kind' entry; re-save it with save_policy")
    return load_weights(pt_path), meta
