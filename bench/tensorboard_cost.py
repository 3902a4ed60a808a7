"""TensorBoard's share of a generation: psro_kuhn.yaml with ``logging.tensorboard`` on and off.

Runs ``main.py --config expr_configs/psro_kuhn.yaml`` for ``--generations`` generations (NashConv
target off, so every run does the same work), alternating TensorBoard on and off ``--repeats``
times. A generation's time is the difference of consecutive ``wall_s`` in ``generations.jsonl``
(generation ``g``'s own work plus the logging of ``g - 1``), so the process start is left out.
Prints the median seconds per generation of each side and their ratio, and how many generations
of each TensorBoard run got their heatmap and Nash chart (the charts are drawn in a child process
on a budget, see ``light_league/tracking/chart_process.py``); ``--out FILE`` also writes
them as JSON (``notes/data/tensorboard_cost.json`` is what notes/benchmarks.md shows, see
``tools/regenerate_docs.py``).

    python bench/tensorboard_cost.py --out notes/data/tensorboard_cost.json
    python bench/tensorboard_cost.py --quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from light_league.run_reader import RunReader

ROOT = Path(__file__).resolve().parents[1]
CONFIG = "expr_configs/psro_kuhn.yaml"
DEFAULT_GENERATIONS, DEFAULT_REPEATS = 12, 3


def generation_seconds(tensorboard: bool, generations: int, scratch: Path) -> tuple[list[float], int]:
    """Seconds per generation (after the first) of one run, and how many generations got images."""
    run_dir = scratch / f"tb_{tensorboard}_{time.monotonic_ns()}"
    command = [
        sys.executable,
        "main.py",
        "--config",
        CONFIG,
        "--run-dir",
        str(run_dir),
        "--quiet",
        f"stop.max_generations={generations}",
        "stop.target_nash_conv=null",
        f"logging.tensorboard={str(tensorboard).lower()}",
    ]
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    records = RunReader(run_dir).records()
    walls = [float(r.wall_s or 0.0) for r in records]
    drawn = run_dir / "tensorboard" / "charts_written.txt"
    with_images = len(set(drawn.read_text().split())) if drawn.exists() else 0
    return [b - a for a, b in zip(walls, walls[1:])], with_images


def command_options(args: argparse.Namespace) -> str:
    """The options given that change what is measured (``--quick``, a non-default size)."""
    if args.quick:
        return " --quick"
    out = ""
    if args.generations != DEFAULT_GENERATIONS:
        out += f" --generations {args.generations}"
    if args.repeats != DEFAULT_REPEATS:
        out += f" --repeats {args.repeats}"
    return out


def versions() -> dict[str, str]:
    from importlib import metadata

    return {name: metadata.version(name) for name in ("tensorboard", "matplotlib", "torch", "numpy")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generations", type=int, default=DEFAULT_GENERATIONS)
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    parser.add_argument("--quick", action="store_true", help="4 generations, 1 repeat")
    parser.add_argument("--out", type=Path, help="also write the result as JSON here")
    args = parser.parse_args(argv)
    generations, repeats = (4, 1) if args.quick else (args.generations, args.repeats)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = os.getloadavg()
    per_gen: dict[bool, list[float]] = {True: [], False: []}
    with_images: list[int] = []
    with tempfile.TemporaryDirectory(prefix="tb-cost-") as scratch:
        for _ in range(repeats):
            for tensorboard in (True, False):
                seconds, drawn = generation_seconds(tensorboard, generations, Path(scratch))
                per_gen[tensorboard] += seconds
                if tensorboard:
                    with_images.append(drawn)
    on, off = statistics.median(per_gen[True]), statistics.median(per_gen[False])
    result = {
        "command": "python bench/tensorboard_cost.py" + command_options(args),
        "config": CONFIG,
        "generations": generations,
        "repeats": repeats,
        "seconds_per_generation_on": round(on, 4),
        "seconds_per_generation_off": round(off, 4),
        "ratio": round(on / off, 3),
        "generations_with_images": with_images,
        "started": started,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "versions": versions(),
    }
    print(
        f"{CONFIG}, {generations} generations x {repeats} runs per side: "
        f"TensorBoard on {on:.3f} s/generation, off {off:.3f} s/generation, ratio {on / off:.2f}x; "
        f"generations with images per run (of {generations}): {with_images}"
    )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
