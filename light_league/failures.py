"""How a run's failure is said: one line on stderr, once, whichever thread sees it first, with
how to resume; the traceback in ``RUN_DIR/error.log`` (never written through a link there). A
background thread's exception (TensorBoard's writer on a full disk) is kept, not printed."""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import traceback
from pathlib import Path
from typing import Any

from light_league.tracking.console import error_line

EXIT_RUN_FAILED = 1


def start_run() -> Any:
    """A run starts: its failure is yet to be said, no thread has failed; background threads'
    exceptions come here (:func:`thread_failed`). Returns the hook it replaced, for the caller to
    put back."""
    global said
    said = threading.Lock()
    thread_failures.clear()
    previous, threading.excepthook = threading.excepthook, thread_failed
    return previous


#: ``(what, traceback)`` of each background thread that failed during this run (kept for error.log)
thread_failures: list[tuple[str, str]] = []


def thread_failed(args: threading.ExceptHookArgs) -> None:
    """A background thread's exception is not printed: TensorBoard's writer thread fails on a full
    disk, and the run's own next write fails on the same cause and says it in one line. Its
    traceback goes to the debug log and to ``error.log`` if the run fails."""
    text = "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback))
    name = args.thread.name if args.thread is not None else "a thread"
    message = one_line(args.exc_value) if args.exc_value is not None else ""
    thread_failures.append((f"{name}: {args.exc_type.__name__}: {message}", text))
    logging.getLogger(__name__).debug("background thread %s failed:\n%s", name, text)


#: a run's failure is said once, in one line on stderr: by the thread that first sees it
said = threading.Lock()


def say_failure(root: Path, exc: Exception) -> None:
    """Say a failure seen outside the main thread at once (the process may be ended next, before
    the main thread's handler runs): the error line with how to resume, no traceback."""
    say_once(f"error: run failed ({exc.__class__.__name__}: {one_line(exc)}){resume_hint(root)}")


def fail(root: Path, exc: Exception, *, resumable: bool) -> int:
    """Keep the traceback in the run directory and say the failure in one line (unless a watcher
    thread has said the run's failure already)."""
    from light_league.utils.atomic import atomic_write_text

    log_path: Path | None = root / "error.log" if root.is_dir() else None
    text = "".join(traceback.format_exception(exc))
    for what, thread_text in thread_failures:
        text += f"\nA background thread failed ({what}):\n{thread_text}"
    try:
        if log_path is None:  # no run directory: keep the traceback out of the current directory
            fd, name = tempfile.mkstemp(prefix="light_league-error-", suffix=".log")
            os.close(fd)
            log_path = Path(name)
        atomic_write_text(log_path, text)  # replaces a link there, never writes through it
        where = f"traceback in {log_path}"
    except OSError as err:  # e.g. a read-only run directory: the handler must not crash
        where = f"traceback not saved ({err.strerror}); rerun with LIGHT_LEAGUE_LOG=DEBUG"
    hint = resume_hint(root) if resumable else ""
    say_once(f"error: run failed ({exc.__class__.__name__}: {one_line(exc)}); {where}{hint}")
    return EXIT_RUN_FAILED


def resume_hint(root: Path) -> str:
    return f"; completed generations are kept, continue with: python main.py --resume {root}"


def say_once(line: str) -> None:
    """``line`` on stderr, unless this run's failure has been said already."""
    if said.acquire(blocking=False):
        error_line(line)


def one_line(exc: BaseException) -> str:
    """The exception's message on one line (Ray and torch messages span many)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."
