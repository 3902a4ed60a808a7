"""PolicyServer: versioned policy weights, published by learners and pulled by rollout workers.

Each entry is a :class:`PolicyEntry` (kind, JSON meta, numpy weights, version). Learners publish
new versions; ``freeze`` copies a learner's current weights into a new frozen id (a copy, never a
reference to live weights) and writes it to disk. Frozen entries beyond ``max_in_memory`` are
dropped from memory and reloaded from disk on demand, so memory does not grow with the league.
Workers ``pull`` only entries whose version is newer than the one they hold.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from light_league.errors import ConfigError


@dataclass
class PolicyEntry:
    policy_id: str
    kind: str  #: "mappo", "tabular", "fixed", ...
    meta: dict[str, Any]
    weights: dict[str, np.ndarray] = field(default_factory=dict)
    version: int = 0
    frozen: bool = False

    @property
    def policy_meta(self) -> dict[str, Any]:
        """``meta`` with the entry's ``kind``: what rebuilds the policy (``registry.build_policy``)."""
        return {**self.meta, "kind": self.kind}


class PolicyServer:
    def __init__(self, *, storage_dir: str | None = None, max_in_memory: int = 64) -> None:
        self._entries: dict[str, PolicyEntry] = {}
        self._resident: OrderedDict[str, None] = OrderedDict()  # frozen ids held in memory, LRU
        self._storage = Path(storage_dir) if storage_dir else None
        self._max_in_memory = max_in_memory

    # ------------------------------------------------------------------ writes
    def publish(self, policy_id: str, kind: str, meta: dict[str, Any], weights: dict[str, np.ndarray]) -> int:
        """Store a new version of a live policy; returns its version number."""
        old = self._entries.get(policy_id)
        if old is not None and old.frozen:
            raise ValueError(f"policy {policy_id!r} is frozen and cannot be republished")
        version = (old.version + 1) if old is not None else 1
        self._entries[policy_id] = PolicyEntry(
            policy_id, kind, dict(meta), {k: np.array(v, copy=True) for k, v in weights.items()}, version
        )
        return version

    def add_fixed(
        self, policy_id: str, kind: str, meta: dict[str, Any], weights: dict[str, np.ndarray] | None = None
    ) -> None:
        """Register a frozen entry that was never trained (baseline, loaded snapshot)."""
        entry = PolicyEntry(policy_id, kind, dict(meta), dict(weights or {}), 1, frozen=True)
        self._entries[policy_id] = entry
        self._touch(policy_id)

    def freeze(
        self,
        source_id: str,
        new_id: str,
        weights: dict[str, np.ndarray] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> PolicyEntry:
        """Copy ``source_id``'s current weights into the frozen ``new_id`` (and onto disk). With
        ``weights``, freeze those instead: under the source's kind and meta (a learner's snapshot
        average), or, with ``meta`` too, as that policy (``meta["kind"]``; a learner whose
        snapshots are another policy than the one it plays, the regret learner's average
        strategy)."""
        src = self._get(source_id)
        kind = src.kind
        frozen_meta = {**src.meta, "frozen_from": source_id, "source_version": src.version}
        if meta is not None:
            if weights is None:
                raise ValueError(f"a snapshot of {source_id!r} given as a policy meta needs its weights")
            kind = str(meta["kind"])
            frozen_meta = {
                **{k: v for k, v in meta.items() if k != "kind"},
                "frozen_from": source_id,
                "source_version": src.version,
            }
        elif weights is not None:
            differ = sorted(set(src.weights) ^ set(weights))
            if differ:
                raise ValueError(
                    f"snapshot weights for {source_id!r} do not match its published ones: {differ} differ"
                )
            frozen_meta["averaged"] = True
        entry = PolicyEntry(
            new_id,
            kind,
            frozen_meta,
            {k: np.array(v, copy=True) for k, v in (src.weights if weights is None else weights).items()},
            1,
            frozen=True,
        )
        self._entries[new_id] = entry
        if self._storage is not None and entry.kind != "fixed":
            self.save(new_id, self._storage / new_id)
        self._touch(new_id)
        return entry

    def newest_frozen(self, source_id: str) -> PolicyEntry | None:
        """The frozen entry made last from ``source_id``'s snapshots (None: there is none)."""
        made = [
            (int(e.meta.get("source_version", 0)), pid)
            for pid, e in self._entries.items()
            if e.frozen and e.meta.get("frozen_from") == source_id
        ]
        return self._get(max(made)[1]) if made else None

    def save(self, policy_id: str, path: Path) -> None:
        from light_league.data_buffer.policy_files import save_policy

        entry = self._get(policy_id)
        save_policy(path, entry.weights, {**entry.meta, "kind": entry.kind, "policy_id": policy_id})

    def load_frozen(self, policy_id: str, path: Path) -> None:
        """Register a frozen snapshot from disk (resume)."""
        from light_league.data_buffer.policy_files import load_policy_files

        weights, meta = load_policy_files(path)  # its meta has a kind (checked there)
        self._entries[policy_id] = PolicyEntry(policy_id, str(meta["kind"]), meta, weights, 1, True)
        self._touch(policy_id)

    def register_frozen(self, policy_id: str, path: Path) -> None:
        """Register a frozen snapshot from disk by its meta alone (resume, an archived member): its
        weights are read (and checked) from ``storage_dir`` when first pulled."""
        from light_league.data_buffer.policy_files import load_policy_meta

        if self._storage is None or Path(path) != self._storage / policy_id:
            self.load_frozen(policy_id, path)  # no storage to read it from later: read it now
            return
        meta, _ = load_policy_meta(path)
        self._entries[policy_id] = PolicyEntry(policy_id, str(meta["kind"]), meta, {}, 1, True)

    # ------------------------------------------------------------------ reads
    def pull(self, have: dict[str, int]) -> dict[str, PolicyEntry]:
        """Entries whose version is newer than ``have[id]`` (0 = not held)."""
        out = {}
        for pid, version in have.items():
            entry = self._get(pid)
            if entry.version > version:
                out[pid] = entry
        return out

    def versions(self) -> dict[str, int]:
        return {pid: e.version for pid, e in self._entries.items()}

    def get(self, policy_id: str) -> PolicyEntry:
        return self._get(policy_id)

    def ids(self) -> list[str]:
        return list(self._entries)

    def remove(self, policy_id: str) -> None:
        self._entries.pop(policy_id, None)
        self._resident.pop(policy_id, None)

    # ------------------------------------------------------------------ memory
    def _get(self, policy_id: str) -> PolicyEntry:
        entry = self._entries.get(policy_id)
        if entry is None:
            from light_league.errors import did_you_mean

            raise ConfigError(f"unknown policy {policy_id!r}{did_you_mean(policy_id, self._entries)}")
        if entry.frozen and not entry.weights and entry.kind != "fixed" and self._storage is not None:
            from light_league.data_buffer.policy_files import load_policy_files

            entry.weights, _ = load_policy_files(self._storage / policy_id)
        if entry.frozen:
            self._touch(policy_id)
        return entry

    def _touch(self, policy_id: str) -> None:
        self._resident[policy_id] = None
        self._resident.move_to_end(policy_id)
        if self._storage is None:
            return
        while len(self._resident) > self._max_in_memory:
            old, _ = self._resident.popitem(last=False)
            entry = self._entries.get(old)
            if entry is not None and entry.kind != "fixed" and (self._storage / f"{old}.pt").exists():
                # a weightless copy: entries already handed out (earlier in the same pull) keep theirs
                self._entries[old] = replace(entry, weights={})
