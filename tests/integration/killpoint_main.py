"""``main.py`` that SIGKILLs itself just before its Nth ``os.replace`` (the commit step of every
atomic file write), for the kill-anywhere test. ``python killpoint_main.py N main.py-args...``;
N = 0 never kills. The number of replaces done is printed to stderr at a normal exit.

``KILLPOINT_IN=<function>`` counts only the replaces made while ``<function>`` is on the call stack
(``settle``: the archive's writes, test_archive_kill.py); ``KILLPOINT_AFTER=1`` kills just after
the Nth such replace instead of just before it. ``KILLPOINT_SIGNAL=TERM`` (any signal's name less
``SIG``) sends that signal instead of SIGKILL and goes on (test_signals.py: a stop signal during a
checkpoint's commit)."""

from __future__ import annotations

import atexit
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

KILL_AT = int(sys.argv[1])
KILL_IN = os.environ.get("KILLPOINT_IN", "")
KILL_AFTER = os.environ.get("KILLPOINT_AFTER") == "1"
SIGNAL = getattr(signal, "SIG" + os.environ.get("KILLPOINT_SIGNAL", "KILL"))
_count = 0
_real_replace = os.replace


def _inside(function: str) -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == function:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def _replace(src, dst, *args, **kwargs):  # type: ignore[no-untyped-def]
    global _count
    if KILL_IN and not _inside(KILL_IN):
        return _real_replace(src, dst, *args, **kwargs)
    _count += 1
    if _count == KILL_AT and not KILL_AFTER:
        os.kill(os.getpid(), SIGNAL)
    done = _real_replace(src, dst, *args, **kwargs)
    if _count == KILL_AT:
        os.kill(os.getpid(), SIGNAL)
    return done


os.replace = _replace
atexit.register(lambda: print(f"REPLACES {_count}", file=sys.stderr))

from light_league.cli import main  # noqa: E402

sys.exit(main(sys.argv[2:]))
