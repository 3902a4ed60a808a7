"""Policy files: ``<path>.pt`` holds tensors only, ``<path>.json`` the policy meta.

``save_policy`` writes the tensors first and the JSON last, each atomically (temp file, fsync,
rename), so a readable ``.json`` always has its ``.pt`` beside it; the JSON keeps the SHA-256 of
the ``.pt`` file (``weights_sha256``). ``load_policy_files`` checks that checksum (a file saved
before it existed has none: the checks below hold it), reads the tensors with
``torch.load(..., weights_only=True)`` and checks every number is finite: a file that holds
anything but a flat ``{name: tensor}`` dict (a pickled object, a numpy array, a module), bytes
that changed since it was saved, or a NaN or infinite weight is refused with a one-line
:class:`~light_league.errors.CorruptFileError` naming the file (and the member). Rebuilding a
policy object from the files (the meta's ``kind`` picks its class) is
:func:`light_league.algorithms.mappo.serialization.load_policy`'s job, one layer up.
"""

from __future__ import annotations

import hashlib
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
    data = buf.getvalue()
    atomic_write_bytes(pt_path, data)
    atomic_write_json(json_path, {**meta, CHECKSUM_KEY: hashlib.sha256(data).hexdigest()})


#: the meta entry that holds the SHA-256 of the ``.pt`` file (hex), written by ``save_policy``
CHECKSUM_KEY = "weights_sha256"


def load_weights(pt_path: str | os.PathLike[str], *, sha256: str | None = None) -> dict[str, np.ndarray]:
    """Read a tensors-only ``.pt`` file into numpy arrays; anything else is a ``CorruptFileError``.
    ``sha256``: the file's checksum, checked before anything is read from it (None: no check)."""
    p = Path(pt_path)
    fix = "re-save it with save_policy"
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise CorruptFileError(f"policy weights {p} do not exist; save the policy first") from None
    except OSError as exc:
        raise CorruptFileError(f"policy weights {p} cannot be read ({exc.strerror}); {fix}") from None
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise CorruptFileError(
            f"policy weights {p} are damaged: their SHA-256 is not the one saved beside them in "
            f"{p.with_suffix('.json').name}; restore the file from a backup"
        )
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise CorruptFileError(f"policy weights {p} are corrupt (not a torch zip archive); {fix}")
    try:
        obj = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
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


def load_policy_meta(path: str | os.PathLike[str]) -> tuple[dict[str, Any], str | None]:
    """A saved policy's meta (checked: it has a ``kind``) without its checksum, and the checksum;
    the weights file is not read (an archived member registered on resume, its weights read when
    first pulled)."""
    _, json_path = policy_paths(path)
    meta = read_json(json_path, what="policy meta", fix="save the policy with save_policy")
    if not isinstance(meta, dict) or "kind" not in meta:
        raise CorruptFileError(f"policy meta {json_path} has no 'kind' entry; re-save it with save_policy")
    checksum = meta.pop(CHECKSUM_KEY, None)
    if checksum is not None and not isinstance(checksum, str):
        raise CorruptFileError(
            f"policy meta {json_path}: {CHECKSUM_KEY} is not a string; restore it from a backup"
        )
    return meta, checksum


def load_policy_files(path: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``(weights, meta)`` of a saved policy, both checked: the weights against the checksum the
    meta keeps, and every number finite. The meta comes back without its checksum."""
    pt_path, _ = policy_paths(path)
    meta, checksum = load_policy_meta(path)
    weights = load_weights(pt_path, sha256=checksum)
    for name, value in weights.items():
        if np.issubdtype(value.dtype, np.inexact) and not np.isfinite(value).all():
            member = meta.get("policy_id", pt_path.stem)
            raise CorruptFileError(
                f"policy weights {pt_path} of member {member} hold NaN or infinite numbers (in {name!r}); "
                "nothing is built from them: restore the file from a backup"
            )
    return weights, meta
