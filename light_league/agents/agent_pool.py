"""The league's population: frozen snapshots and fixed baselines, persisted as a JSON manifest.

The manifest is rewritten atomically (temp file, fsync, rename) on every change, and the
previous good manifest is first copied, also atomically, to ``<manifest>.bak``. A process killed
at any point therefore leaves a valid manifest (the old or the new one), and a manifest damaged
by other means can be restored from the backup.

One process writes a given manifest; others may read it (and call :meth:`AgentPool.reload`).
"""

from __future__ import annotations

import builtins
import json
import logging
import os
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from light_league.errors import CorruptFileError, LeagueError, did_you_mean
from light_league.types import BUILT_IN_ROLES, AgentRecord, AgentType, learner_role
from light_league.utils.atomic import atomic_write_text

log = logging.getLogger(__name__)

__all__ = ["BUILT_IN_ROLES", "AgentPool", "AgentRecord", "AgentType", "UnknownAgentError", "learner_role"]

MANIFEST_FORMAT = 1


class UnknownAgentError(LeagueError, KeyError):
    """An agent id that is not in the pool."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class AgentPool:
    """Registry of league members backed by a JSON manifest.

    ``add`` gives each member an id (``<type>_<version:04d>``, e.g. ``main_agent_0003``, unless
    one is passed) and a version that counts the members ever added of its type, so ids are
    never reused, even after eviction or removal.

    **Eviction** (``max_size``, None for unbounded): when an ``add`` would make the pool larger
    than ``max_size``, the oldest member (by order of addition) that is neither a ``BASELINE`` nor
    the latest member of its type is dropped from the manifest (its snapshot file stays on
    disk). If every member is protected the ``add`` fails and nothing changes.
    """

    def __init__(self, pool_manifest: str | os.PathLike[str], max_size: int | None = None) -> None:
        if max_size is not None and max_size < 1:
            raise ValueError(f"max_size must be >= 1 or None (unbounded), got {max_size}")
        self.manifest_path = Path(pool_manifest)
        self.backup_path = self.manifest_path.with_name(self.manifest_path.name + ".bak")
        self.max_size = max_size
        self._records: dict[str, AgentRecord] = {}
        self._next_version: dict[str, int] = {}
        self._saved_text: str | None = None
        self.reload()

    # ------------------------------------------------------------------ queries
    def list(self, agent_type: AgentType | None = None) -> builtins.list[AgentRecord]:
        """Members in order of addition, optionally only those of ``agent_type``."""
        if agent_type is None:
            return list(self._records.values())
        kind = AgentType(agent_type)
        return [r for r in self._records.values() if r.agent_type == kind]

    def get(self, agent_id: str) -> AgentRecord:
        """The member ``agent_id``; ``UnknownAgentError`` (with did-you-mean) when absent."""
        try:
            return self._records[agent_id]
        except KeyError:
            raise self._unknown(agent_id) from None

    def latest(self, agent_type: AgentType) -> AgentRecord | None:
        """The most recently added member of ``agent_type``, or None when there is none."""
        members = self.list(agent_type)
        return members[-1] if members else None

    def ids(self) -> builtins.list[str]:
        return list(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, agent_id: object) -> bool:
        return agent_id in self._records

    # ------------------------------------------------------------------ changes
    def add(
        self,
        snapshot_path: str | os.PathLike[str],
        agent_type: AgentType,
        metadata: dict[str, Any] | None = None,
        *,
        agent_id: str | None = None,
        parent: str | None = None,
    ) -> AgentRecord:
        """Register a snapshot, save the manifest, and return its record.

        ``parent`` names the learner or member it descends from (not checked: it may be a live
        learner that is not in the pool). ``metadata`` must be JSON-serialisable.
        """
        kind = AgentType(agent_type)
        meta = dict(metadata or {})
        try:
            json.dumps(meta)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"metadata must be JSON-serialisable, got {meta!r} ({exc})") from None
        version = self._next_version.get(kind.value, 0)
        new_id = f"{kind.value}_{version:04d}" if agent_id is None else str(agent_id)
        if not _plain_id(new_id):
            raise ValueError(
                f"agent_id must be a plain non-empty name without '/', '\\' or '..' (ids name files), got {new_id!r}"
            )
        if new_id in self._records:
            raise ValueError(
                f"agent id {new_id!r} is already in the pool {self.manifest_path}; "
                "pass a new agent_id or leave it None for an automatic one"
            )
        evict = self._eviction_victim(kind) if self.max_size and len(self) >= self.max_size else None
        record = AgentRecord(new_id, version, kind, os.fspath(snapshot_path), time.time(), meta, parent)
        if evict is not None:
            del self._records[evict]
            log.info("pool %s is full (max_size=%d): evicted %s", self.manifest_path, self.max_size, evict)
        self._records[new_id] = record
        self._next_version[kind.value] = version + 1
        self._save()
        return record

    def remove(self, agent_id: str) -> AgentRecord:
        """Drop a member from the manifest (its snapshot file is left alone) and return it."""
        record = self.get(agent_id)
        del self._records[agent_id]
        self._save()
        return record

    def mark_archived(self, archived: Collection[str]) -> None:
        """Set the metadata flag ``archived`` of exactly the members in ``archived`` (the active set's
        archive, :mod:`light_league.agents.archive`); the manifest is saved when a flag changed."""
        changed = False
        for record in self._records.values():
            flag = record.agent_id in archived
            if bool(record.metadata.get("archived")) != flag:
                if flag:
                    record.metadata["archived"] = True
                else:
                    del record.metadata["archived"]
                changed = True
        if changed:
            self._save()

    def _eviction_victim(self, incoming: AgentType) -> str:
        """Oldest member that is not a baseline and not the latest of its type."""
        latest = {r.agent_type: r.agent_id for r in self._records.values()}
        # The incoming member becomes the latest of its type, freeing the current latest one.
        latest.pop(incoming, None)
        for record in self._records.values():
            if record.agent_type != AgentType.BASELINE and latest.get(record.agent_type) != record.agent_id:
                return record.agent_id
        raise ValueError(
            f"pool {self.manifest_path} is full (max_size={self.max_size}) and every member is a baseline "
            "or the latest of its type; raise max_size"
        )

    def _unknown(self, agent_id: str) -> UnknownAgentError:
        hint = did_you_mean(agent_id, self._records)
        return UnknownAgentError(
            f"agent {agent_id!r} is not in the pool {self.manifest_path} ({len(self)} members){hint}"
        )

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        """The manifest's content."""
        return {
            "format": MANIFEST_FORMAT,
            "next_version": dict(self._next_version),
            "agents": [r.to_dict() for r in self._records.values()],
        }

    def _save(self) -> None:
        text = self._text()
        if self._saved_text is not None:
            atomic_write_text(self.backup_path, self._saved_text)
        atomic_write_text(self.manifest_path, text)
        self._saved_text = text

    def _text(self) -> str:
        """The manifest as JSON, one member a line (json's C encoder runs only unindented: a pool of
        thousands is written in milliseconds)."""
        members = ",\n".join(f"  {json.dumps(r.to_dict())}" for r in self._records.values())
        head = f'{{"format": {MANIFEST_FORMAT}, "next_version": {json.dumps(self._next_version)}, "agents": ['
        return f"{head}\n{members}\n]}}\n" if members else f"{head}]}}\n"

    def reload(self) -> None:
        """Re-read the manifest (e.g. one written by another process); empty if it does not exist."""
        if not self.manifest_path.exists():
            self._records, self._next_version, self._saved_text = {}, {}, None
            return
        text = self.manifest_path.read_text(encoding="utf-8", errors="replace")
        try:
            data = json.loads(text)
            records = [AgentRecord.from_dict(d) for d in data["agents"]]
            next_version = {str(k): int(v) for k, v in data["next_version"].items()}
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CorruptFileError(
                f"pool manifest {self.manifest_path} is corrupt ({exc.__class__.__name__}: {exc}); "
                f"{self._restore_hint()}"
            ) from None
        bad = [r.agent_id for r in records if not _plain_id(r.agent_id)]
        if bad:
            raise CorruptFileError(
                f"pool manifest {self.manifest_path} is corrupt: agent id {bad[0]!r} is not a plain name "
                f"(ids name files: no '/', no '..'); {self._restore_hint()}"
            )
        self._records = {r.agent_id: r for r in records}
        self._next_version = next_version
        self._saved_text = text

    def _restore_hint(self) -> str:
        if self.backup_path.exists():
            return f"restore the previous good copy with: cp {self.backup_path} {self.manifest_path}"
        return f"no backup {self.backup_path} exists; rebuild the pool or restore the file from elsewhere"


def _plain_id(agent_id: str) -> bool:
    """An id that is safe as a file name: no path separator, NUL or ``..``, not empty."""
    return bool(agent_id) and not any(c in agent_id for c in "/\\\0") and ".." not in agent_id
