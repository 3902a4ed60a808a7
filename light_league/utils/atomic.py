"""Crash-safe persistence.

``atomic_write_*`` follow the full recipe: write a temp file in the target's directory,
flush, fsync, ``os.replace`` onto the target, fsync the directory. A reader therefore sees
either the old file or the new one, never a mix.

``JsonlLog`` is an append-only JSON-lines log. A record is committed only once its trailing
newline is on disk; on open, a torn last line (the process died mid-write) is cut off and
everything before it is kept.

``interrupts_held`` holds Ctrl-C, SIGTERM and SIGHUP while a checkpoint is committed, and raises
the interrupt once the commit is whole.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import signal
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

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
    with _replacing(path, "wb") as handle:
        handle.write(data)


@contextlib.contextmanager
def _replacing(path: str | os.PathLike[str], mode: str) -> Iterator[IO[Any]]:
    """A handle on a temp file beside ``path`` that replaces ``path`` (flush, fsync, ``os.replace``,
    directory fsync) when the block ends; on an error the temp file is removed and ``path`` kept."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file ordinary permissions
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as handle:
            yield handle
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

    Opening reads and writes nothing. Reading skips a torn last line (no trailing newline: the
    writer died mid-record); the first ``append`` cuts it off before writing. ``append`` writes
    one record per ``write`` call in ``O_APPEND`` mode; ``sync`` fsyncs. ``truncate_to(n)``
    drops every record after the first ``n``; ``truncate_bytes(n)`` cuts the file at a byte
    offset (both used on resume).
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync_every: int = 0) -> None:
        self.path = Path(path)
        self._fsync_every = fsync_every
        self._since_sync = 0
        self._repaired = False
        self.dropped_bytes = 0

    def _repair(self) -> int:
        """Cut the file back to its last newline; return the number of bytes dropped."""
        self._repaired = True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():
            self.path.touch()
            return 0
        size = self.path.stat().st_size
        keep = committed_size(self.path)
        if keep < size:
            with open(self.path, "rb+") as handle:
                handle.truncate(keep)
                handle.flush()
                os.fsync(handle.fileno())
            log.warning("%s: dropped %d bytes of a torn last record", self.path, size - keep)
        self.dropped_bytes = size - keep
        return size - keep

    def append(self, record: dict[str, Any]) -> None:
        self.append_many([record])

    def append_many(self, records: list[dict[str, Any]]) -> None:
        if not records:
            return
        if not self._repaired:
            self._repair()
        data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _write_all(fd, data)
            self._since_sync += len(records)
            if self._fsync_every and self._since_sync >= self._fsync_every:
                os.fsync(fd)
                self._since_sync = 0
        finally:
            os.close(fd)

    def sync(self) -> None:
        if not self.path.exists():
            return
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        self._since_sync = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        """Committed records in order (a torn last line is skipped, blank lines too)."""
        if not self.path.exists():
            return
        with open(self.path, encoding="utf-8", errors="replace") as handle:
            for lineno, line in enumerate(handle, start=1):
                if not line.endswith("\n"):
                    return  # torn last line: not committed
                if not line.strip():
                    continue
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    raise CorruptFileError(
                        f"{self.path} line {lineno} is not valid JSON; remove or fix that line"
                    ) from None

    def truncate_to(self, n_records: int) -> None:
        """Keep only the first ``n_records`` records (atomic rewrite, streamed)."""
        write_jsonl_atomic(self.path, (rec for i, rec in enumerate(self) if i < n_records))
        self._repaired = True

    def truncate_bytes(self, size: int) -> None:
        """Cut the file to its first ``size`` bytes (a record boundary the caller checked)."""
        with open(self.path, "rb+") as handle:
            handle.truncate(size)
            handle.flush()
            os.fsync(handle.fileno())
        self._repaired = True


def _write_all(fd: int, data: bytes) -> None:
    """Append all of ``data`` to ``fd`` (opened ``O_APPEND``), or none of it.

    ``os.write`` may write only part (a full disk, a file size limit, a signal): the rest is
    written on. If a write fails, the file is cut back to its size before the call, so no torn
    line is left for a later record to follow, and the error is raised.
    """
    start = os.fstat(fd).st_size
    view = memoryview(data)
    try:
        while view:
            written = os.write(fd, view)
            if written <= 0:
                raise OSError(f"write returned {written} with {len(view)} bytes left")
            view = view[written:]
    except BaseException:
        os.ftruncate(fd, start)
        raise


def committed_size(path: Path) -> int:
    """Byte length of ``path`` up to and including its last newline (0 if it has none)."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        pos, chunk = size, 65536
        while pos > 0:
            start = max(0, pos - chunk)
            handle.seek(start)
            idx = handle.read(pos - start).rfind(b"\n")
            if idx >= 0:
                return start + idx + 1
            pos = start
    return 0


def write_jsonl_atomic(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Replace ``path`` with ``records`` as JSON lines, streamed (memory does not grow with the file)."""
    with _replacing(path, "w") as handle:
        for record in records:
            handle.write(json.dumps(record, separators=(",", ":")) + "\n")


#: names ``atomic_write_*`` give their temp files: ``.<target>.<8 random chars>.tmp``
TEMP_FILE = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")


def remove_temp_files(root: Path) -> list[Path]:
    """Delete the temp files interrupted atomic writes left under ``root``; return them.

    Call it only while holding the directory's writer lock (no write can be in flight).
    """
    removed = []
    for path in Path(root).rglob(".*.tmp"):
        if TEMP_FILE.match(path.name) and path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


#: the signals that stop a run (``cli._stop_on_signals``)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Run the block whole: a stop signal that arrives inside it is acted on when it ends.

    A checkpoint's commit writes files and removes the previous one; an interrupt raised in the
    middle of ``shutil.rmtree`` closed its directory handles twice and ended the run with
    ``OSError: [Errno 9]`` (exit 1) instead of the interrupted line. Inside the block each stop
    signal whose handler is a Python function is noted, not run; at the end the handlers are put
    back and the first one noted is called (raising ``KeyboardInterrupt`` for the run's own). Off
    the main thread (where Python runs no handler) the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[signal.Signals] = []
    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    held = [s for s, handler in previous.items() if callable(handler)]
    for s in held:
        signal.signal(s, lambda signum, frame: noted.append(signal.Signals(signum)))
    try:
        yield
    finally:
        for s in held:
            signal.signal(s, previous[s])
    if noted:
        handler = previous[noted[0]]
        assert callable(handler)
        handler(noted[0], None)
