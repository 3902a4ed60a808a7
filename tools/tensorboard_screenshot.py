"""Screenshot TensorBoard on a run directory with headless Chromium, at device scale 1.

    python tools/tensorboard_screenshot.py RUN_DIR --page headline  # what main.py board opens on
    python tools/tensorboard_screenshot.py RUN_DIR [--out docs/img/tensorboard_payoff.png]
    python tools/tensorboard_screenshot.py --demo          # a synthetic 3-generation league
    python tools/tensorboard_screenshot.py RUN_DIR --relog # the run's payoff files, drawn anew

``--page headline`` shows the Custom Scalars page ``main.py board`` opens on (the headline curves
of :mod:`light_league.tracking.headline`) and writes docs/img/tensorboard_headline.png by
default; ``--page table`` the text tab's payoff table; ``--page images`` (the default) the image
tab filtered to ``--tag`` (the payoff heatmap).
``--relog`` logs the run's ``payoff/gen_XXXX.json`` files again through the current logger into a
scratch folder and screenshots that (for a run made before a change to the charts).
docs/img/tensorboard_headline.png: ``RUN_DIR --page headline --height 900`` on a ``league.yaml``
run; docs/img/tensorboard_payoff.png: ``RUN_DIR --height 900`` on the same run.

Starts ``tensorboard --logdir RUN_DIR`` on a free local port, waits until it answers, loads the
page in headless Chromium (Debian: ``apt-get install -y chromium``) at one device pixel per CSS
pixel (what a plain monitor shows) and saves the PNG. TensorBoard is stopped afterwards, whatever
happens.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout's light_league, not another one installed in the env
    sys.path.insert(0, str(ROOT))
DEFAULT_OUT = {
    "images": ROOT / "docs" / "img" / "tensorboard_payoff.png",
    "headline": ROOT / "docs" / "img" / "tensorboard_headline.png",
    "table": ROOT / "docs" / "img" / "tensorboard_table.png",
}
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until_up(url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    raise TimeoutError(f"TensorBoard did not answer at {url} within {timeout_s:.0f} s")


@contextmanager
def tensorboard_server(logdir: Path, port: int, timeout_s: float) -> Iterator[str]:
    """A TensorBoard process serving ``logdir``; yields its base URL."""
    command = [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir)]
    command += ["--port", str(port), "--host", "127.0.0.1", "--reload_interval", "0"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(f"{base}/data/runs", timeout_s)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def screenshot(
    url: str, out: Path, *, width: int, height: int, scale: float, budget_ms: int, chromium: str
) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tb-shot-") as profile:
        command = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}"]
        command += [f"--window-size={width},{height}", f"--force-device-scale-factor={scale}"]
        command += [f"--virtual-time-budget={budget_ms}"]
        command += [f"--screenshot={out}", url]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=180)
    if not out.exists():
        raise RuntimeError(f"chromium wrote no screenshot to {out}")


def write_demo_run(run_dir: Path) -> None:
    """Three generations of a synthetic league (4, 5 and 6 agents) logged like a real run."""
    from light_league.tracking.backends import build_logger
    from light_league.tracking.config import LoggingConfig
    from light_league.tracking.logger import PayoffSnapshot

    roles = ["main_agent", "main_exploiter", "league_exploiter", "main_agent", "league_exploiter", "baseline"]
    rng = np.random.default_rng(7)
    strength = np.array([0.9, 0.2, 0.5, 1.4, 0.8, -1.0])
    logger = build_logger(LoggingConfig(), run_dir)
    for generation, n in enumerate((4, 5, 6)):
        logits = strength[:n, None] - strength[None, :n] + rng.normal(0.0, 0.4, (n, n))
        logits = (logits - logits.T) / 2
        win_rates = 1.0 / (1.0 + np.exp(-logits))
        games = np.full((n, n), 64)
        if n == 6:
            win_rates[0, 5] = win_rates[5, 0] = np.nan
            games[0, 5] = games[5, 0] = 0
        nash = np.maximum(strength[:n], 0.0) ** 3
        ids = [f"{r.split('_')[0]}_{i}" for i, r in enumerate(roles[:n])]
        snapshot = PayoffSnapshot(generation, ids, roles[:n], win_rates, games, nash / nash.sum())
        logger.log_payoff(snapshot)
        logger.log_scalars({"league/population_size": float(n)}, generation)
        wait_for_images(logger)
    logger.close()


def wait_for_images(logger: object) -> None:
    """Every generation's images (a run draws them on a CPU budget, so fast ones get a sample)."""
    from light_league.tracking.tensorboard_logger import TensorBoardLogger

    if isinstance(logger, TensorBoardLogger):
        logger.wait_for_charts()


def relog_run(run_dir: Path, out: Path) -> None:
    """Every saved generation of ``run_dir`` logged again through the current TensorBoard logger:
    its payoff snapshot, leaderboard and the scalars the headline reads (from
    ``generations.jsonl``)."""
    from light_league.tracking.backends import build_logger
    from light_league.tracking.config import LoggingConfig
    from light_league.tracking.headline import headline_scalars
    from light_league.tracking.leaderboard import leaderboard_markdown, with_ranking
    from light_league.tracking.logger import LEADERBOARD_TAG
    from light_league.tracking.record import read_generations
    from light_league.tracking.report import load_payoff_snapshot, saved_generations

    records = {r.generation: r for r in read_generations(run_dir)}
    logger = build_logger(LoggingConfig(), out)
    for generation in saved_generations(run_dir):
        snapshot = load_payoff_snapshot(run_dir, generation)
        logger.log_payoff(snapshot)
        record = records.get(generation)
        if record is not None:
            logger.log_text(LEADERBOARD_TAG, leaderboard_markdown(with_ranking(record, snapshot)), generation)
            best = None if record.best_main is None else record.best_main.id
            scalars = headline_scalars(
                snapshot, record.rating, record.rating_ci95, reference=record.reference, best=best
            )
            values = {
                "league/meta_entropy": record.meta_entropy,
                "exploitability/main_nash_conv": record.main_nash_conv,
                "exploitability/meta_nash_conv": record.meta_nash_conv,
                "league/diversity_score": record.diversity,
            }
            scalars.update({tag: float(value) for tag, value in values.items() if value is not None})
            scalars["league/population_size"] = float(snapshot.size)
            logger.log_scalars(scalars, generation)
        wait_for_images(logger)
    logger.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", type=Path, help="run directory (or its tensorboard/ folder)")
    parser.add_argument("--demo", action="store_true", help="screenshot a synthetic run instead")
    parser.add_argument("--relog", action="store_true", help="draw the run's payoff files anew first")
    parser.add_argument("--page", choices=sorted(DEFAULT_OUT), default="images", help="which page to show")
    parser.add_argument("--out", type=Path, default=None, help="PNG to write (default: docs/img/ per page)")
    parser.add_argument("--tag", default="league/payoff_heatmap", help="image tag to show (--page images)")
    parser.add_argument("--width", type=int, default=1000, help="window width in CSS pixels")
    parser.add_argument("--height", type=int, default=620, help="window height in CSS pixels")
    parser.add_argument("--scale", type=float, default=1.0, help="device pixels per CSS pixel")
    parser.add_argument("--budget-ms", type=int, default=20000, help="Chromium virtual time for the page")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for TensorBoard")
    args = parser.parse_args(argv)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        parser.error("no chromium found; install it (Debian: apt-get install -y chromium)")
    if args.demo == (args.run_dir is not None):
        parser.error("give either RUN_DIR or --demo")
    with tempfile.TemporaryDirectory(prefix="tb-demo-") as scratch:
        run_dir = Path(scratch) if args.demo else args.run_dir
        if args.demo:
            write_demo_run(run_dir)
        if not run_dir.is_dir():
            parser.error(f"run directory {run_dir} does not exist")
        if args.relog:
            relog_run(run_dir, Path(scratch) / "relogged")
            run_dir = Path(scratch) / "relogged"
        out = args.out or DEFAULT_OUT[args.page]
        with tensorboard_server(run_dir, free_port(), args.timeout) as base:
            page = {
                "headline": "custom_scalars",
                "table": f"text&tagFilter={quote('league/payoff_table', safe='')}",
                "images": f"images&tagFilter={quote(args.tag, safe='')}",
            }[args.page]
            url = f"{base}/?darkMode=false#{page}"
            screenshot(
                url,
                out,
                width=args.width,
                height=args.height,
                scale=args.scale,
                budget_ms=args.budget_ms,
                chromium=chromium,
            )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
