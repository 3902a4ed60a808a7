"""Crash-safe persistence.

``atomic_write_*`` follow the full recipe: write a temp file in the target's directory,
flush, fsync, ``os.replace`` onto the target, fsync the directory. A reader therefore sees
either the old file or the new one, never a mix.

``JsonlLog`` is an append-only JSON-lines log. A record is committed only once its trailing
newline is on disk; on open, a torn last line (the process died mid-write) is cut off and
everything before it is kept.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from light_league.errors import CorruptFileError

log = logging.getLogger(__name__)

_UMASK = os.umask(0)
os.umask(_UMASK)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically and durably."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file ordinary permissions
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        if os.path.exists(tmp_name):
            os.unlink(tmp_name)
        raise
    _fsync_dir(target.parent)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2) -> None:
    atomic_write_text(path, json.dumps(obj, indent=indent, sort_keys=False) + "\n")


def read_json(path: str | os.PathLike[str], *, what: str = "file", fix: str = "") -> Any:
    """Load JSON, turning a missing or unparsable file into a one-line ``CorruptFileError``."""
    p = Path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorruptFileError(f"{what} {p} does not exist{'; ' + fix if fix else ''}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        hint = f"; {fix}" if fix else ""
        raise CorruptFileError(f"{what} {p} is corrupt ({exc.__class__.__name__}: {exc}){hint}") from None


class JsonlLog:
    """Append-only JSON-lines file that survives a torn last line.

    ``append`` writes one record per ``write`` call in ``O_APPEND`` mode; ``sync`` fsyncs.
    ``truncate_to(n_records)`` drops every record after the first ``n_records`` (used on resume).
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync_every: int = 0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fsync_every = fsync_every
        self._since_sync = 0
        self.dropped_bytes = self._repair()

    def _repair(self) -> int:
        """Cut the file back to its last newline; return the number of bytes dropped."""
        if not self.path.exists():
            self.path.touch()
            return 0
        size = self.path.stat().st_size
        if size == 0:
            return 0
        with open(self.path, "rb+") as handle:
            # Scan back for the last newline in chunks.
            pos = size
            chunk = 65536
            keep = 0
            while pos > 0:
                start = max(0, pos - chunk)
                handle.seek(start)
                data = handle.read(pos - start)
                idx = data.rfind(b"\n")
                if idx >= 0:
                    keep = start + idx + 1
                    break
                pos = start
            if keep < size:
                handle.truncate(keep)
                handle.flush()
                os.fsync(handle.fileno())
                log.warning("%s: dropped %d bytes of a torn last record", self.path, size - keep)
            return size - keep

    def append(self, record: dict[str, Any]) -> None:
        self.append_many([record])

    def append_many(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, data)
            self._since_sync += len(records)
            if self._fsync_every and self._since_sync >= self._fsync_every:
                os.fsync(fd)
                self._since_sync = 0
        finally:
            os.close(fd)

    def sync(self) -> None:
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self._since_sync = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        with open(self.path, encoding="utf-8") as handle:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    raise CorruptFileError(
                        f"{self.path} line {lineno} is not valid JSON; remove or fix that line"
                    ) from None

    def truncate_to(self, n_records: int) -> None:
        """Keep only the first ``n_records`` records (atomic rewrite)."""
        kept = []
        for i, rec in enumerate(self):
            if i >= n_records:
                break
            kept.append(rec)
        atomic_write_text(self.path, "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in kept))
