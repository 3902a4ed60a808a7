"""``main.py board RUN_DIR``: TensorBoard on a run, keeping every generation's images and tables.

TensorBoard names a run by its folder under the served logdir, so a run's ``tensorboard/`` served
itself would show as ``.``: a run is served through a temporary folder holding one link, named
after the run, to its ``tensorboard/`` (a folder of runs is served as it is: ``<run>/tensorboard``).
The address ``board`` prints after TensorBoard's own (which opens TensorBoard's default
dashboard) opens the *Custom Scalars* dashboard, where the run's layout puts the headline curves
(:mod:`light_league.tracking.headline`).

TensorBoard keeps only 10 images and 10 texts per tag by default (a random sample of the steps);
``--samples_per_plugin images=100000,text=100000`` keeps all of them (0, documented as "all",
keeps none with TensorBoard 2.21's default fast loader).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from light_league.errors import LeagueError

#: keep every step of the image and text plugins (TensorBoard's default is a sample of 10)
SAMPLES_PER_PLUGIN = "images=100000,text=100000"


def board_url(host: str, port: int) -> str:
    """The address ``board`` prints: the Custom Scalars dashboard, the headline curves first."""
    return f"http://{host}:{port}/#custom_scalars"


@contextlib.contextmanager
def served_logdir(run_dir: Path) -> Iterator[Path]:
    """The folder TensorBoard serves for ``run_dir``: for a run, a temporary folder with one link
    named after the run to its ``tensorboard/`` (removed afterwards); a folder of runs itself."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise LeagueError(f"run directory {run_dir} does not exist; pass a directory written by main.py")
    events = run_dir / "tensorboard"
    if not events.is_dir():
        yield run_dir
        return
    folder = Path(tempfile.mkdtemp(prefix="light_league_board_"))
    try:
        (folder / run_dir.resolve().name).symlink_to(events.resolve(), target_is_directory=True)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # the link only, never what it points to


def board_command(logdir: Path, *, port: int = 6006, host: str = "localhost") -> list[str]:
    """The TensorBoard command line serving ``logdir`` (:func:`served_logdir`)."""
    return [
        sys.executable,
        "-m",
        "tensorboard.main",
        "--logdir",
        str(logdir),
        "--samples_per_plugin",
        SAMPLES_PER_PLUGIN,
        "--port",
        str(port),
        "--host",
        host,
    ]


def relay(lines: Iterable[str], write: Callable[[str], None], headline: str) -> None:
    """TensorBoard's own lines, and ``headline`` right after the one that says it serves (its
    address opens TensorBoard's default dashboard): the last address on the screen opens the
    headline curves."""
    said = False
    for line in lines:
        write(line)
        if not said and line.startswith("TensorBoard ") and " at http" in line:
            write(f"{headline}\n")
            said = True


def board(run_dir: Path, *, port: int = 6006, host: str = "localhost", headline: str = "") -> int:
    """Run TensorBoard in the foreground until Ctrl-C, its lines on stderr followed by
    ``headline``; its exit status."""
    with served_logdir(run_dir) as logdir:
        command = board_command(logdir, port=port, host=host)
        process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, errors="replace")
        try:
            relay(process.stderr or (), _to_stderr, headline)
            return process.wait()
        finally:
            if process.poll() is None:  # Ctrl-C reached us first, or a signal only us
                process.terminate()
                process.wait()


def _to_stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()
