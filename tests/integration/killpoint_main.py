"""``main.py`` that SIGKILLs itself just before its Nth ``os.replace`` (the commit step of every
atomic file write), for the kill-anywhere test. ``python killpoint_main.py N main.py-args...``;
N = 0 never kills. The number of replaces done is printed to stderr at a normal exit."""

from __future__ import annotations

import atexit
import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

KILL_AT = int(sys.argv[1])
_count = 0
_real_replace = os.replace


def _replace(src, dst, *args, **kwargs):  # type: ignore[no-untyped-def]
    global _count
    _count += 1
    if _count == KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)
    return _real_replace(src, dst, *args, **kwargs)


os.replace = _replace
atexit.register(lambda: print(f"REPLACES {_count}", file=sys.stderr))

from light_league.cli import main  # noqa: E402

sys.exit(main(sys.argv[2:]))
