"""``--out FILE`` for the benches: what a bench prints, also written to a file with its provenance.

The file starts with two header lines that ``tools/regenerate_docs.py`` (``render_bench_text``)
turns into the figure's first sentence, then everything the bench printed::

    # command: python bench/NAME.py ARGS (without --out)
    # 2026-11-23 19:40-19:52 UTC; 2 CPUs (PLATFORM), load average 0.2 / 1.0 / 1.2 at the start,
    #   1.4 / 1.3 / 1.2 at the end; Python 3.11.7, torch 2.13.0+cpu, numpy 2.4.6

(the second line is one line in the file). Use::

    with recorded(args.out):
        ...  # the bench's prints
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import os
import platform
import shlex
import sys
import time
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import TextIO

PACKAGES = ("torch", "numpy")


class _Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.stream.write(text)
        self.copy.write(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def command_line(argv: list[str] | None = None) -> str:
    """``python bench/NAME.py ARGS`` as a shell would need it typed (an argument with spaces or
    braces quoted), without ``--out FILE`` / ``--out=FILE``."""
    argv = list(sys.argv if argv is None else argv)
    kept: list[str] = []
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg == "--out":
            skip = True
        elif not arg.startswith("--out="):
            kept.append(arg)
    script = Path(argv[0])
    shown = f"bench/{script.name}" if script.parent.name == "bench" else str(argv[0])
    return shlex.join(["python", shown, *kept])


def machine_line() -> str:
    """``2026-11-23 19:40 UTC; 2 CPUs (PLATFORM), load average 0.2 / 1.0 / 1.2; Python 3.11.7, torch
    2.13.0+cpu, numpy 2.4.6``: a bench's one-line provenance when it prints its own header."""
    import numpy as np
    import torch

    load = os.getloadavg()
    return (
        f"{dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}; {os.cpu_count()} CPUs "
        f"({platform.platform()}), "
        f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; Python {platform.python_version()}, "
        f"torch {torch.__version__}, numpy {np.__version__}"
    )


def _load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def _versions(packages: tuple[str, ...]) -> str:
    found = []
    for name in packages:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} not installed")
    return ", ".join([f"Python {platform.python_version()}", *found])


@contextlib.contextmanager
def recorded(out: Path | None, packages: tuple[str, ...] = PACKAGES) -> Iterator[None]:
    """Run the body; if ``out`` is given, write what it printed to ``out`` with the header.

    The file is written only when the body finishes (a failed bench leaves no half figure)."""
    if out is None:
        yield
        return
    command = command_line()
    start, start_load = time.gmtime(), _load()
    tee = _Tee(sys.stdout)
    saved = sys.stdout
    sys.stdout = tee
    try:
        yield
    finally:
        sys.stdout = saved
    end = time.gmtime()
    span = time.strftime("%Y-%m-%d %H:%M", start)
    if time.strftime("%Y-%m-%d %H:%M", end) != span:
        same_day = time.strftime("%Y-%m-%d", end) == time.strftime("%Y-%m-%d", start)
        span += "-" + time.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M", end)
    header = (
        f"# command: {command}\n"
        f"# {span} UTC; {os.cpu_count()} CPUs ({platform.platform()}), load average {start_load} at the "
        f"start, {_load()} at the end; {_versions(packages)}\n\n"
    )
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(header + tee.copy.getvalue(), encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)


def print_table(head: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool = False) -> None:
    """Rows under a header: the first column left-aligned, the others right-aligned to their widest
    cell, two spaces apart; ``markdown``: a Markdown table (numbers right-aligned)."""
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    for row in [list(head), *rows]:
        print(
            "  ".join(
                c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
