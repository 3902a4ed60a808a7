"""Each seed's NashConv averaged over a window of its curve, read from an exploitability bench's output.

``bench/exploitability_per_minute.py`` reads a curve at a few marks; one reading at 120 s picks a
snapshot that can sit on a high or a low point of the last generations' spread. This reads the
``ours ...`` curves of one or more of its output files (``--out`` files, or its printed output)
and averages each seed's points inside ``--window FROM TO`` seconds: a calmer figure of where a
setting settles. It also prints each seed's last point in the window (what the 120 s mark reads)::

    python bench/curve_window.py notes/data/tuning/kuhn_main_lr_floor.txt --window 90 120

Per method (``main``, ``meta``, ``average``; a ``--variant`` label prefixes it): each seed's window
mean, then the mean and the worst seed; the same for the last points.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from bench_output import print_table, recorded

CURVE = re.compile(r"^\s+ours(?::(?P<variant>\S+))? (?P<output>\w+)/s(?P<seed>\d+): (?P<points>.*)$")
POINT = re.compile(r"\(([\d.]+)s, ([\d.]+)\)")


def read_curves(path: Path) -> dict[str, dict[int, list[tuple[float, float]]]]:
    """method label -> seed -> [(time s, NashConv)] from one bench output."""
    curves: dict[str, dict[int, list[tuple[float, float]]]] = {}
    for line in path.read_text().splitlines():
        m = CURVE.match(line)
        if m is None:
            continue
        label = f"{m['variant']} {m['output']}" if m["variant"] else f"shipped {m['output']}"
        points = [(float(t), float(v)) for t, v in POINT.findall(m["points"])]
        curves.setdefault(label, {})[int(m["seed"])] = points
    return curves


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outputs", type=Path, nargs="+", help="exploitability_per_minute.py output files")
    parser.add_argument("--window", type=float, nargs=2, default=(90.0, 120.0), metavar=("FROM", "TO"))
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = parser.parse_args(argv)
    lo, hi = args.window
    if not lo < hi:
        raise SystemExit(f"--window {lo:g} {hi:g}: FROM must be below TO (e.g. --window 90 120)")
    with recorded(args.out):
        for path in args.outputs:
            if not path.is_file():
                raise SystemExit(
                    f"{path}: no such file; give an output of bench/exploitability_per_minute.py"
                )
            curves = read_curves(path)
            if not curves:
                raise SystemExit(
                    f"{path}: no 'ours' curves in it; is it an exploitability_per_minute.py output?"
                )
            print(f"{path}: NashConv per seed, mean over {lo:g}-{hi:g} s and the last point in it")
            rows = []
            for label, seeds in curves.items():
                means, lasts = [], []
                for seed in sorted(seeds):
                    inside = [v for t, v in seeds[seed] if lo <= t <= hi]
                    if inside:
                        means.append((seed, sum(inside) / len(inside)))
                        lasts.append((seed, inside[-1]))
                if not means:
                    continue
                per_seed = " ".join(f"s{s}:{v:.4f}" for s, v in means)
                window = [v for _, v in means]
                last = [v for _, v in lasts]
                rows.append(
                    [
                        label,
                        per_seed,
                        f"{sum(window) / len(window):.4f} / {max(window):.4f}",
                        f"{sum(last) / len(last):.4f} / {max(last):.4f}",
                    ]
                )
            print_table(
                ["method", "window mean per seed", "window mean / worst", "last point mean / worst"], rows
            )
            print()


if __name__ == "__main__":
    main()
