"""``main.py board RUN_DIR``: TensorBoard on a run, keeping every generation's images and tables.

The address it prints opens TensorBoard's *Custom Scalars* dashboard, where the run's layout puts
the headline curves (:mod:`light_league.tracking.headline`).

TensorBoard keeps only 10 images and 10 texts per tag by default (a random sample of the steps);
``--samples_per_plugin images=100000,text=100000`` keeps all of them (0, documented as "all",
keeps none with TensorBoard 2.21's default fast loader).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from light_league.errors import LeagueError

#: keep every step of the image and text plugins (TensorBoard's default is a sample of 10)
SAMPLES_PER_PLUGIN = "images=100000,text=100000"


def board_url(host: str, port: int) -> str:
    """The address ``board`` prints: the Custom Scalars dashboard, the headline curves first."""
    return f"http://{host}:{port}/#custom_scalars"


def board_command(run_dir: Path, *, port: int = 6006, host: str = "localhost") -> list[str]:
    """The TensorBoard command line for ``run_dir`` (a run directory or a folder of runs)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise LeagueError(f"run directory {run_dir} does not exist; pass a directory written by main.py")
    logdir = run_dir / "tensorboard" if (run_dir / "tensorboard").is_dir() else run_dir
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


def board(run_dir: Path, *, port: int = 6006, host: str = "localhost") -> int:
    """Run TensorBoard in the foreground until Ctrl-C; its exit status."""
    return subprocess.call(board_command(run_dir, port=port, host=host))
